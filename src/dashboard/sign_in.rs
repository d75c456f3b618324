//! Signing in and out: `GET` and `POST /dashboard/sign-in` (email and password, rate limited
//! per address and per email), `POST /dashboard/sign-out`.

use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::failure::PageError;
use super::layout;
use super::session::{self, CsrfForm, NoFields};
use crate::service::web_sessions;
use crate::service::{ServiceError, members};
use crate::state::AppState;

/// The sign-in form's fields; a missing one reads as empty and fails like a wrong one.
#[derive(Debug, Deserialize)]
pub struct Credentials {
    #[serde(default)]
    email: String,
    #[serde(default)]
    password: String,
}

fn form_page(email: &str, problem: Option<&str>) -> Markup {
    html! {
        h1 { "Sign in" }
        p.muted { "Members of a studio sign in with the email and password an admin gave them." }
        @if let Some(problem) = problem {
            p.error role="alert" id="sign-in-error" { (problem) }
        }
        form.card method="post" action="/dashboard/sign-in" {
            label for="email" { "Email" }
            input #email type="email" name="email" autocomplete="username" required value=(email);
            label for="password" { "Password" }
            input #password type="password" name="password" autocomplete="current-password" required;
            button type="submit" { "Sign in" }
        }
    }
}

/// `GET /dashboard/sign-in`.
pub async fn form() -> Response {
    layout::bare("Sign in", form_page("", None)).into_response()
}

/// `POST /dashboard/sign-in`: opens a session and sets its cookie, or shows the form again
/// with why not (401 for wrong credentials, 429 past the limits).
pub async fn submit(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    axum::Form(creds): axum::Form<Credentials>,
) -> Response {
    let again = |status: StatusCode, problem: &str| {
        (
            status,
            layout::bare("Sign in", form_page(&creds.email, Some(problem))),
        )
            .into_response()
    };
    if let Err(ServiceError::RateLimited(wait)) = state.sign_ins.attempt(peer.ip(), &creds.email) {
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
    let settings = &state.services.settings.dashboard;
    let ttl = Duration::from_secs(u64::from(settings.session_ttl_minutes.get()) * 60);
    match web_sessions::open(store, member, ttl).await {
        Ok(opened) => (
            [session::set_cookie(&opened.id, settings)],
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
