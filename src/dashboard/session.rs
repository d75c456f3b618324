//! Who is signed in: the session cookie, the games the member's studio owns, and the CSRF
//! check of every form that writes.
//!
//! [`SignedIn`] resolves the `offer_session` cookie (a page without one redirects to the
//! sign-in form); the extractors of [`access`](super::access) build on it to find the game a
//! page is about, in the member's studio only, and to check the member's role.
//! [`CsrfForm`] reads a urlencoded form and refuses it (403) unless its `csrf` field equals
//! the session's token, compared in constant time; [`CsrfMultipart`] does the same for a file
//! upload, whose first field must be `csrf`. The cookie is `SameSite=Strict` too, so
//! a cross-site form never carries it; the token is the second, independent barrier.

use axum::extract::{FromRequest, FromRequestParts, Multipart, Request};
use axum::http::header::{COOKIE, SET_COOKIE};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue};
use offer_domain::audit::{ChangedBy, Via};
use serde::de::DeserializeOwned;
use subtle::ConstantTimeEq;

use super::failure::PageError;
use crate::auth::Role;
use crate::config::DashboardSettings;
use crate::http::extract::read_body;
use crate::service::ServiceError;
use crate::service::studio::callers::Dashboard;
use crate::service::studio::web_sessions::{self, WebSession};
use crate::state::AppState;

/// The cookie holding the session id.
pub const COOKIE_NAME: &str = "offer_session";

/// The form field carrying the CSRF token.
pub const CSRF_FIELD: &str = "csrf";

/// A signed-in member.
#[derive(Debug, Clone)]
pub struct SignedIn {
    /// The session (its CSRF token, its expiry) and its member.
    pub session: WebSession,
    /// The member as a dashboard caller, so the services' role checks apply unchanged.
    pub caller: Dashboard,
}

impl SignedIn {
    /// The member as the audit trail names a change of theirs: through the dashboard.
    pub fn by(&self) -> ChangedBy {
        self.caller.changed_by(Via::Dashboard)
    }

    /// Whether the member has at least `role` (what the pages show).
    pub fn can(&self, role: Role) -> bool {
        self.caller.role >= role
    }

    /// Refuses with 403 unless the member has at least `role` (what the server allows).
    pub fn require(&self, role: Role) -> Result<(), PageError> {
        self.caller.require(role).map_err(PageError::from)
    }

    /// The session's CSRF token, for the hidden field of each form.
    pub fn csrf(&self) -> &str {
        &self.session.csrf
    }
}

/// The value of the request's cookie `name`, if it carries a non-empty one.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(found, _)| *found == name)
        .map(|(_, value)| value)
        .filter(|v| !v.is_empty())
}

/// The session id the request's cookie carries, if any.
pub fn session_cookie(headers: &HeaderMap) -> Option<&str> {
    cookie(headers, COOKIE_NAME)
}

/// Whether `sent` is `expected`, compared in constant time (a token's bytes never leak
/// through how long a refusal takes).
pub fn same_token(sent: Option<&str>, expected: &str) -> bool {
    sent.is_some_and(|sent| bool::from(sent.as_bytes().ct_eq(expected.as_bytes())))
}

/// The `Secure` attribute of the dashboard's cookies, when it is served over https.
pub(super) fn secure(settings: &DashboardSettings) -> &'static str {
    if settings.secure_cookie {
        "; Secure"
    } else {
        ""
    }
}

/// The `Set-Cookie` header of a new session: never readable by script, never sent by another
/// site's request, `Secure` when the dashboard is served over https.
pub fn set_cookie(id: &str, settings: &DashboardSettings) -> (axum::http::HeaderName, String) {
    let max_age = u64::from(settings.session_ttl_minutes.get()) * 60;
    let secure = secure(settings);
    (
        SET_COOKIE,
        format!("{COOKIE_NAME}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}"),
    )
}

/// The `Set-Cookie` header that removes the session cookie.
pub fn clear_cookie() -> (axum::http::HeaderName, HeaderValue) {
    (
        SET_COOKIE,
        HeaderValue::from_static("offer_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0"),
    )
}

impl FromRequestParts<AppState> for SignedIn {
    type Rejection = PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, PageError> {
        if let Some(found) = parts.extensions.get::<SignedIn>() {
            return Ok(found.clone());
        }
        let id = session_cookie(&parts.headers).ok_or(PageError::SignIn)?;
        let session = web_sessions::resolve(state.services.store.as_ref(), id)
            .await
            .map_err(|e| match e {
                ServiceError::Unauthorized(_) => PageError::SignIn,
                other => PageError::from(other),
            })?;
        let caller = Dashboard {
            sub: session.member.email.clone(),
            studio_id: session.member.studio_id.clone(),
            role: session.member.role,
        };
        let signed_in = Self { session, caller };
        parts.extensions.insert(signed_in.clone());
        Ok(signed_in)
    }
}

/// Refuses a token that is not this session's.
fn check_csrf(sent: Option<&str>, user: &SignedIn) -> Result<(), PageError> {
    if same_token(sent, user.csrf()) {
        Ok(())
    } else {
        Err(PageError::from(ServiceError::Forbidden(
            "the form's CSRF token is missing or stale: reload the page and try again",
        )))
    }
}

/// A form with no field but its CSRF token (sign out, revoke, delete).
#[derive(Debug, serde::Deserialize)]
pub struct NoFields {}

/// A urlencoded form that writes, from a signed-in member, with its CSRF token checked.
pub struct CsrfForm<T> {
    /// Who sent it.
    pub user: SignedIn,
    /// The form's fields (the token left out).
    pub form: T,
}

impl<T: DeserializeOwned> FromRequest<AppState> for CsrfForm<T> {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, PageError> {
        let (mut parts, body) = req.into_parts();
        let user = SignedIn::from_request_parts(&mut parts, state).await?;
        let bytes = read_body(body, state.services.settings.server.max_body_bytes).await?;
        let mut pairs: Vec<(String, String)> =
            serde_urlencoded::from_bytes(&bytes).map_err(|e| PageError::BadForm(e.to_string()))?;
        let sent = pairs
            .iter()
            .position(|(k, _)| k == CSRF_FIELD)
            .map(|i| pairs.remove(i).1);
        check_csrf(sent.as_deref(), &user)?;
        let rest =
            serde_urlencoded::to_string(&pairs).map_err(|e| PageError::BadForm(e.to_string()))?;
        let form =
            serde_urlencoded::from_str(&rest).map_err(|e| PageError::BadForm(e.to_string()))?;
        Ok(Self { user, form })
    }
}

/// A file upload from a signed-in member, its first field the CSRF token.
pub struct CsrfMultipart {
    /// Who sent it.
    pub user: SignedIn,
    /// The fields after the token.
    pub rest: Multipart,
}

impl FromRequest<AppState> for CsrfMultipart {
    type Rejection = PageError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, PageError> {
        let (mut parts, body) = req.into_parts();
        let user = SignedIn::from_request_parts(&mut parts, state).await?;
        let req = Request::from_parts(parts, body);
        let mut multipart = Multipart::from_request(req, state)
            .await
            .map_err(|e| PageError::BadForm(e.body_text()))?;
        let first = multipart
            .next_field()
            .await
            .map_err(|e| PageError::BadForm(e.body_text()))?;
        let sent = match first {
            Some(field) if field.name() == Some(CSRF_FIELD) => Some(
                field
                    .text()
                    .await
                    .map_err(|e| PageError::BadForm(e.body_text()))?,
            ),
            _ => None,
        };
        check_csrf(sent.as_deref(), &user)?;
        Ok(Self {
            user,
            rest: multipart,
        })
    }
}

/// A file field read whole from a multipart form: its file name (empty when the browser
/// sent none) and its bytes.
pub struct UploadedFile {
    /// The name the browser gave the file.
    pub name: String,
    /// The file's bytes.
    pub bytes: axum::body::Bytes,
}

impl CsrfMultipart {
    /// Reads the remaining fields and keeps the last one named `name`; `None` when the form
    /// has none. Every upload form of the dashboard has one file field, read this way.
    pub async fn file(&mut self, name: &str) -> Result<Option<UploadedFile>, PageError> {
        let mut file = None;
        while let Some(field) = self
            .rest
            .next_field()
            .await
            .map_err(|e| PageError::BadForm(e.body_text()))?
        {
            if field.name() == Some(name) {
                let file_name = field.file_name().unwrap_or_default().to_owned();
                let bytes = field
                    .bytes()
                    .await
                    .map_err(|e| PageError::BadForm(e.body_text()))?;
                file = Some(UploadedFile {
                    name: file_name,
                    bytes,
                });
            }
        }
        Ok(file)
    }
}
