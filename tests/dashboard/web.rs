//! The dashboard over plain HTTP, as a browser would speak it but with every header in view:
//! sign in with a form post, keep the session cookie, read a page's CSRF token, post forms.

use reqwest::header::{CONTENT_TYPE, COOKIE, SET_COOKIE};
use reqwest::{Client, Response, StatusCode};

use super::browser::PASSWORD;
use super::helpers::TestApp;

/// A client that never follows redirects, so each answer is seen as sent.
pub fn client() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

/// A signed-in member's cookie and CSRF token.
pub struct Session {
    /// `offer_session=...`.
    pub cookie: String,
    /// The session's token, read from a page's form.
    pub csrf: String,
}

/// Posts a urlencoded form to `path`, with `cookie` when given.
pub async fn post_form(
    app: &TestApp,
    path: &str,
    cookie: Option<&str>,
    fields: &[(&str, &str)],
) -> Response {
    let body = serde_urlencoded_pairs(fields);
    let mut req = client()
        .post(format!("http://{}{path}", app.addr))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body);
    if let Some(cookie) = cookie {
        req = req.header(COOKIE, cookie);
    }
    req.send().await.expect("post")
}

/// GETs a dashboard page with `cookie`.
pub async fn get_page(app: &TestApp, path: &str, cookie: &str) -> Response {
    client()
        .get(format!("http://{}{path}", app.addr))
        .header(COOKIE, cookie)
        .send()
        .await
        .expect("get")
}

fn serde_urlencoded_pairs(fields: &[(&str, &str)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The `Set-Cookie` header of a sign-in answer.
pub fn set_cookie(answer: &Response) -> String {
    answer
        .headers()
        .get(SET_COOKIE)
        .expect("a Set-Cookie header")
        .to_str()
        .expect("ascii")
        .to_owned()
}

/// Signs `email` in and reads the CSRF token of the games page.
pub async fn sign_in(app: &TestApp, email: &str) -> Session {
    let answer = post_form(
        app,
        "/dashboard/sign-in",
        None,
        &[("email", email), ("password", PASSWORD)],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER, "signed in");
    let cookie = set_cookie(&answer)
        .split(';')
        .next()
        .expect("name=value")
        .to_owned();
    let page = get_page(app, "/dashboard/games", &cookie)
        .await
        .text()
        .await
        .expect("page");
    let csrf = regex::Regex::new(r#"name="csrf" value="([0-9a-f]+)""#)
        .expect("regex")
        .captures(&page)
        .expect("a CSRF field on the page")[1]
        .to_owned();
    Session { cookie, csrf }
}
