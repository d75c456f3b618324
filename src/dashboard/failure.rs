//! What a dashboard page answers when it cannot show what was asked: the sign-in form for a
//! request without a live session, and otherwise an HTML page with the status and message the
//! REST API would answer (`ApiError::status_code` decides both), so another studio's game is a
//! 404 here too and a viewer's write a 403.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;

use super::document;
use crate::error::ApiError;
use crate::service::ServiceError;

/// Why a page is not shown.
#[derive(Debug)]
pub enum PageError {
    /// No live session: go to the sign-in form.
    SignIn,
    /// A form the dashboard's own pages never send (a broken or forged request): 400.
    BadForm(String),
    /// What the transport or a service refused.
    Api(ApiError),
}

impl From<ServiceError> for PageError {
    fn from(e: ServiceError) -> Self {
        Self::Api(ApiError::Service(e))
    }
}

impl From<ApiError> for PageError {
    fn from(e: ApiError) -> Self {
        Self::Api(e)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let api = match self {
            Self::SignIn => return Redirect::to("/dashboard/sign-in").into_response(),
            Self::BadForm(reason) => ApiError::BadRequest(format!("unreadable form: {reason}")),
            Self::Api(e) => e,
        };
        let (status, code) = api.status_code();
        if let ApiError::Service(ServiceError::Internal(detail)) = &api {
            tracing::error!(%detail, "internal error on a dashboard page");
        }
        let message = api.body().error.message;
        let title = match status {
            StatusCode::NOT_FOUND => "Not found",
            StatusCode::FORBIDDEN => "Not allowed",
            StatusCode::TOO_MANY_REQUESTS => "Too many attempts",
            _ => "Something went wrong",
        };
        let body = html! {
            h1 { (title) }
            p.error role="alert" { (message) }
            p.muted { "Status " (status.as_u16()) " (" (code) ")" }
            p { a href="/dashboard/games" { "Back to your games" } }
        };
        (status, document::bare(title, body)).into_response()
    }
}
