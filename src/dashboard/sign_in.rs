//! Signing in and out: `GET` and `POST /dashboard/sign-in` (email and password, rate limited
//! per address and per email), `POST /dashboard/sign-out`.
//!
//! The sign-in form has its own CSRF barrier, since no session exists yet (a forged sign-in
//! would put the victim in the attacker's account): showing the form sets a token the server
//! signed ([`super::sign_in_token`]) in an `HttpOnly`, `SameSite=Strict` cookie scoped to the
//! form's path and writes the same token in a hidden field. A sign-in whose field does not
//! equal its cookie (compared in constant time), or whose token this deployment did not sign
//! or has expired, is refused with 403 before any password is checked or any attempt counted,
//! and the form is shown again with a fresh token.

use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::extract::{ConnectInfo, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{AppendHeaders, IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::document;
use super::failure::PageError;
use super::session::{self, CsrfForm, NoFields};
use super::sign_in_token::FormTokens;
use super::views::sign_in::{self as views, FORM_PATH};
use crate::server::Peer;
use crate::service::studio::web_sessions;
use crate::service::{ServiceError, studio::members};
use crate::state::AppState;

/// The cookie holding the sign-in form's token, before any session exists.
pub const FORM_COOKIE: &str = "offer_sign_in";

/// Seconds a sign-in form stays usable.
const FORM_TTL_S: u32 = 3600;

/// The sign-in form's fields; a missing one reads as empty and fails like a wrong one.
#[derive(Debug, Deserialize)]
pub struct Credentials {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
    /// The form's token, which must equal the form cookie's.
    #[serde(default)]
    csrf: String,
}

/// The form with a fresh token, and the cookie holding it.
async fn fresh_form(
    state: &AppState,
    forms: &FormTokens,
    status: StatusCode,
    email: &str,
    problem: Option<&str>,
) -> Response {
    let settings = &state.services.settings.dashboard;
    let token = match forms.mint(&state.services, FORM_TTL_S).await {
        Ok(token) => token,
        Err(e) => return PageError::from(e).into_response(),
    };
    let cookie = format!(
        "{FORM_COOKIE}={token}; HttpOnly; SameSite=Strict; Path={FORM_PATH}; Max-Age={FORM_TTL_S}{}",
        session::secure(settings)
    );
    (
        status,
        [(SET_COOKIE, cookie)],
        document::bare("Sign in", views::form(&token, email, problem)),
    )
        .into_response()
}

/// `GET /dashboard/sign-in`.
pub async fn form(
    State(state): State<AppState>,
    Extension(forms): Extension<Arc<FormTokens>>,
) -> Response {
    fresh_form(&state, &forms, StatusCode::OK, "", None).await
}

/// `POST /dashboard/sign-in`: opens a session and sets its cookie, or shows the form again
/// with why not (403 for a form this site did not just give, 401 for wrong credentials, 429
/// past the limits).
pub async fn submit(
    State(state): State<AppState>,
    Extension(forms): Extension<Arc<FormTokens>>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    headers: HeaderMap,
    axum::Form(creds): axum::Form<Credentials>,
) -> Response {
    let settings = &state.services.settings.dashboard;
    let doubled = session::cookie(&headers, FORM_COOKIE)
        .filter(|expected| session::same_token(Some(&creds.csrf), expected));
    let signed = match doubled {
        Some(token) => match forms.verify(&state.services, token).await {
            Ok(signed) => signed.then_some(token),
            Err(e) => return PageError::from(e).into_response(),
        },
        None => None,
    };
    let Some(token) = signed else {
        return fresh_form(
            &state,
            &forms,
            StatusCode::FORBIDDEN,
            &creds.email,
            Some(
                "This sign-in form was not one this site just gave you (it expired, or was sent from another site), so nothing was checked: sign in again with the form below.",
            ),
        )
        .await;
    };
    // The token checked out: the form shown again keeps it.
    let again = |status: StatusCode, problem: &str| {
        (
            status,
            document::bare("Sign in", views::form(token, &creds.email, Some(problem))),
        )
            .into_response()
    };
    if let Err(ServiceError::RateLimited(wait)) =
        state.sign_ins.attempt(peer.remote.ip(), &creds.email)
    {
        let mut answer = again(
            StatusCode::TOO_MANY_REQUESTS,
            &format!("Too many sign-in attempts: try again in {wait} s."),
        );
        answer
            .headers_mut()
            .insert(axum::http::header::RETRY_AFTER, wait.into());
        return answer;
    }
    let store = state.services.store.as_ref();
    let member = match members::authenticate(store, &creds.email, &creds.password).await {
        Ok(m) => m,
        Err(ServiceError::Unauthorized(why)) => return again(StatusCode::UNAUTHORIZED, why),
        Err(e) => return PageError::from(e).into_response(),
    };
    let ttl = Duration::from_secs(u64::from(settings.session_ttl_minutes.get()) * 60);
    match web_sessions::open(store, member, ttl).await {
        Ok(opened) => (
            AppendHeaders([
                session::set_cookie(&opened.id, settings),
                (
                    SET_COOKIE,
                    format!(
                        "{FORM_COOKIE}=; HttpOnly; SameSite=Strict; Path={FORM_PATH}; Max-Age=0"
                    ),
                ),
            ]),
            Redirect::to("/dashboard/games"),
        )
            .into_response(),
        Err(e) => PageError::from(e).into_response(),
    }
}

/// `POST /dashboard/sign-out`: closes the session in the store and clears the cookie.
pub async fn sign_out(
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    _form: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    if let Some(id) = session::session_cookie(&headers) {
        web_sessions::close(state.services.store.as_ref(), id).await?;
    }
    Ok((
        [session::clear_cookie()],
        Redirect::to("/dashboard/sign-in"),
    )
        .into_response())
}
