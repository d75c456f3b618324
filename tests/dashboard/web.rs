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

/// The first `name="csrf"` token of a page.
pub fn csrf_of(page: &str) -> String {
    regex::Regex::new(r#"name="csrf" value="([0-9a-f.]+)""#)
        .expect("regex")
        .captures(page)
        .expect("a CSRF field on the page")[1]
        .to_owned()
}

/// The sign-in form as a browser gets it: its cookie (`offer_sign_in=...`) and the token of
/// its hidden field.
pub async fn sign_in_form(app: &TestApp) -> (String, String) {
    let answer = client()
        .get(format!("http://{}/dashboard/sign-in", app.addr))
        .send()
        .await
        .expect("get");
    assert_eq!(answer.status(), StatusCode::OK);
    let cookie = set_cookie(&answer)
        .split(';')
        .next()
        .expect("name=value")
        .to_owned();
    let page = answer.text().await.expect("page");
    (cookie, csrf_of(&page))
}

/// Posts the sign-in form as a browser does: the form fetched first, its cookie and token
/// sent back with the credentials.
pub async fn post_sign_in(app: &TestApp, email: &str, password: &str) -> Response {
    let (cookie, token) = sign_in_form(app).await;
    post_form(
        app,
        "/dashboard/sign-in",
        Some(&cookie),
        &[("email", email), ("password", password), ("csrf", &token)],
    )
    .await
}

/// Posts the sign-in form as a browser at the loopback address `from` (any of 127/8) does:
/// form and sign-in both sent from that address, so the engine sees it as the client's.
pub async fn post_sign_in_from(
    app: &TestApp,
    from: std::net::IpAddr,
    email: &str,
    password: &str,
) -> Response {
    let client = Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .local_address(from)
        .build()
        .expect("client");
    let form = client
        .get(format!("http://{}/dashboard/sign-in", app.addr))
        .send()
        .await
        .expect("get");
    let cookie = set_cookie(&form)
        .split(';')
        .next()
        .expect("name=value")
        .to_owned();
    let token = csrf_of(&form.text().await.expect("page"));
    let fields = [("email", email), ("password", password), ("csrf", &token)];
    client
        .post(format!("http://{}/dashboard/sign-in", app.addr))
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(COOKIE, cookie)
        .body(serde_urlencoded_pairs(&fields))
        .send()
        .await
        .expect("post")
}

/// Signs `email` in and reads the CSRF token of the games page.
pub async fn sign_in(app: &TestApp, email: &str) -> Session {
    let answer = post_sign_in(app, email, PASSWORD).await;
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
    Session {
        cookie,
        csrf: csrf_of(&page),
    }
}
