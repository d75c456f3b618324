//! Requests to a test server: [`TestApp::get`], [`TestApp::post`] and their kin build a
//! [`Call`] (as the studio admin unless told otherwise), and [`Call::expect`] sends it,
//! asserts the status, showing the answer's body when it is another, and returns the JSON
//! body. [`Call::expect_error`] does the same for the documented error shape and code;
//! [`Call::send`] hands back the raw response for the tests that look at headers or bytes.

use std::panic::Location;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use reqwest::{Client, Method, Response, StatusCode};
use serde_json::Value;

use super::helpers::TestApp;

/// How much of a request body a failure message quotes.
const QUOTED_BODY: usize = 300;

/// What a request carries.
enum Body {
    None,
    Json(Value),
    /// Bytes with their declared content type, for malformed bodies and uploads.
    Raw(&'static str, Vec<u8>),
}

/// One request to a test server, sent by [`Call::expect`], [`Call::expect_error`] or
/// [`Call::send`].
#[must_use = "a call does nothing until it is sent"]
pub struct Call<'a> {
    app: &'a TestApp,
    method: Method,
    path: String,
    /// The bearer token; `None` sends no `Authorization` header.
    token: Option<String>,
    /// The authentication scheme written before the token.
    scheme: &'static str,
    body: Body,
    /// Further headers, such as `X-Authoring-Run`.
    headers: Vec<(&'static str, String)>,
    /// Where the test built the call: failure messages name it, since an assertion inside an
    /// async helper cannot report its caller's line itself.
    location: &'static Location<'static>,
}

impl TestApp {
    /// The absolute URL of `path` on this server.
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// A request as the studio admin, without a body.
    #[track_caller]
    pub fn call(&self, method: Method, path: impl Into<String>) -> Call<'_> {
        Call {
            app: self,
            method,
            path: path.into(),
            token: Some(self.admin.clone()),
            scheme: "Bearer",
            body: Body::None,
            headers: Vec::new(),
            location: Location::caller(),
        }
    }

    /// A GET as the admin.
    #[track_caller]
    pub fn get(&self, path: impl Into<String>) -> Call<'_> {
        self.call(Method::GET, path)
    }

    /// A DELETE as the admin.
    #[track_caller]
    pub fn delete(&self, path: impl Into<String>) -> Call<'_> {
        self.call(Method::DELETE, path)
    }

    /// A POST of JSON `body` as the admin.
    #[track_caller]
    pub fn post(&self, path: impl Into<String>, body: Value) -> Call<'_> {
        self.call(Method::POST, path).json(body)
    }

    /// A PUT of JSON `body` as the admin.
    #[track_caller]
    pub fn put(&self, path: impl Into<String>, body: Value) -> Call<'_> {
        self.call(Method::PUT, path).json(body)
    }

    /// A PATCH of JSON `body` as the admin.
    #[track_caller]
    pub fn patch(&self, path: impl Into<String>, body: Value) -> Call<'_> {
        self.call(Method::PATCH, path).json(body)
    }

    /// An admin GET that must answer 200 with JSON (not an `async fn`, so that a failure
    /// names the caller's line).
    #[track_caller]
    pub fn get_json(&self, path: impl Into<String>) -> impl Future<Output = Value> + '_ {
        self.get(path).expect(StatusCode::OK)
    }
}

impl Call<'_> {
    /// Sends `token` (a JWT, an SDK or an authoring key) instead of the admin's token.
    pub fn token(mut self, token: &str) -> Self {
        self.token = Some(token.to_owned());
        self
    }

    /// Writes the token after `scheme` instead of `Bearer` (the scheme is case-insensitive).
    pub fn scheme(mut self, scheme: &'static str) -> Self {
        self.scheme = scheme;
        self
    }

    /// Adds header `name: value`.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    /// Sends no `Authorization` header.
    pub fn no_token(mut self) -> Self {
        self.token = None;
        self
    }

    /// Sends `body` as JSON.
    pub fn json(mut self, body: Value) -> Self {
        self.body = Body::Json(body);
        self
    }

    /// Sends `bytes` declared as `content_type`, on a connection of its own: the server drops
    /// a connection whose body it refused to read, which must not break the shared client's
    /// next request.
    pub fn raw(mut self, content_type: &'static str, bytes: impl Into<Vec<u8>>) -> Self {
        self.body = Body::Raw(content_type, bytes.into());
        self
    }

    /// `METHOD path`, the start of the request body and where the call was made, for
    /// failure messages.
    fn describe(&self) -> String {
        let body = match &self.body {
            Body::None => String::new(),
            Body::Json(v) => format!(" {v}"),
            Body::Raw(content_type, bytes) => {
                let start = &bytes[..bytes.len().min(QUOTED_BODY + 1)];
                format!(" ({content_type}) {}", String::from_utf8_lossy(start))
            }
        };
        let mut quoted: String = body.chars().take(QUOTED_BODY).collect();
        if quoted.len() < body.len() {
            quoted.push('…');
        }
        format!(
            "{} {}{quoted} (sent from {})",
            self.method, self.path, self.location
        )
    }

    /// Sends the request and returns the response as it is.
    pub async fn send(self) -> Response {
        let client = match self.body {
            Body::Raw(..) => Client::new(),
            _ => self.app.client.clone(),
        };
        let mut req = client.request(self.method, self.app.url(&self.path));
        if let Some(token) = &self.token {
            req = req.header(AUTHORIZATION, format!("{} {token}", self.scheme));
        }
        for (name, value) in &self.headers {
            req = req.header(*name, value);
        }
        req = match self.body {
            Body::None => req,
            Body::Json(v) => req.json(&v),
            Body::Raw(content_type, bytes) => req.header(CONTENT_TYPE, content_type).body(bytes),
        };
        req.send().await.expect("request")
    }

    /// Sends the request, asserts that it answers `status` and returns the JSON body
    /// (`Value::Null` when the body is empty).
    pub async fn expect(self, status: StatusCode) -> Value {
        let request = self.describe();
        let r = self.send().await;
        let got = r.status();
        let text = r.text().await.expect("response body");
        assert_eq!(got, status, "{request}\nanswered: {text}");
        if text.is_empty() {
            return Value::Null;
        }
        serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!("{request}\nanswered with a body that is not JSON ({e}): {text}")
        })
    }

    /// Sends the request, asserts `status` and the documented error shape with `code`;
    /// returns the body.
    pub async fn expect_error(self, status: StatusCode, code: &str) -> Value {
        let request = self.describe();
        let body = self.expect(status).await;
        assert_eq!(body["error"]["code"], code, "{request}\nanswered: {body}");
        assert!(
            body["error"]["message"].is_string(),
            "{request}\nanswered: {body}"
        );
        assert!(
            body["error"]["details"].is_object(),
            "{request}\nanswered: {body}"
        );
        body
    }
}
