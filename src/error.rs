//! The HTTP error type: every non-2xx answer of the service is built here, in the documented
//! shape `{"error": {"code", "message", "details"}}`.
//!
//! Each variant says its status and stable code in one place ([`ApiError::status_code`]).
//! Internals (store failures, bugs) are logged and answered with a generic message, never
//! leaked.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::service::ServiceError;
use crate::service::authoring::device::SignInRefusal;
use crate::service::authoring::runs::RunRefusal;

/// Seconds a client should wait before retrying a 503.
const RETRY_AFTER_S: &str = "1";

/// Seconds a client should wait before opening a socket again after a per-client socket
/// limit: a place frees only when one of its own sockets closes.
const SOCKETS_RETRY_AFTER_S: &str = "5";

/// Everything a REST or WebSocket request can fail with: what only the transport can find
/// wrong (a malformed request or body, a wrong method, a node at its connection limit), or
/// what a use case refused.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Malformed body, query or upgrade request (400).
    #[error("{0}")]
    BadRequest(String),
    /// The path exists but not with this method (405).
    #[error("method not allowed")]
    MethodNotAllowed,
    /// The request line is longer than `server.max_header_bytes` (414).
    #[error("the request line is too long")]
    UriTooLong,
    /// The request head is longer than `server.max_header_bytes`, or has too many headers (431).
    #[error("the request head is too large")]
    HeadersTooLarge,
    /// The node already holds `server.max_connections` connections (503, safe to retry).
    #[error("the node holds all the connections it takes (server.max_connections); retry shortly")]
    TooManyConnections,
    /// The client's address (`scope` "address") or its SDK key ("key") already holds `limit`
    /// open WebSockets, `websocket.max_sockets_per_address` or `max_sockets_per_key` (429).
    #[error(
        "too many WebSockets open at once for this {scope} (at most {limit}); close one or retry later"
    )]
    TooManySockets {
        /// What the limit counts by: `address` or `key`.
        scope: &'static str,
        /// The limit.
        limit: usize,
    },
    /// A use case's refusal, or a credential check's.
    #[error(transparent)]
    Service(#[from] ServiceError),
}

/// The error body, as documented in the OpenAPI document.
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// Inside [`ErrorBody`].
#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Stable snake_case identifier.
    pub code: String,
    /// Human-readable explanation.
    pub message: String,
    /// Structured details (`errors` for 422).
    #[schema(value_type = Object)]
    pub details: serde_json::Value,
}

impl ApiError {
    /// Status and stable code of each error: the one place they are decided.
    pub fn status_code(&self) -> (StatusCode, &'static str) {
        let e = match self {
            Self::BadRequest(_) => return (StatusCode::BAD_REQUEST, "bad_request"),
            Self::MethodNotAllowed => {
                return (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed");
            }
            Self::UriTooLong => return (StatusCode::URI_TOO_LONG, "uri_too_long"),
            Self::HeadersTooLarge => {
                return (
                    StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                    "headers_too_large",
                );
            }
            Self::TooManyConnections => {
                return (StatusCode::SERVICE_UNAVAILABLE, "unavailable");
            }
            Self::TooManySockets { .. } => {
                return (StatusCode::TOO_MANY_REQUESTS, "too_many_connections");
            }
            Self::Service(e) => e,
        };
        service_status(e)
    }

    /// A 422 with one field error.
    pub fn invalid(field: &str, reason: impl Into<String>) -> Self {
        Self::Service(ServiceError::invalid(field, reason))
    }

    /// The body of this error. An internal error's detail is logged, never answered (its
    /// message is the generic one).
    pub fn body(&self) -> ErrorBody {
        let (_, code) = self.status_code();
        let (message, details) = match self {
            Self::Service(ServiceError::Validation(errors) | ServiceError::Conflicts(errors)) => {
                (self.to_string(), json!({ "errors": errors }))
            }
            Self::Service(ServiceError::SignIn(SignInRefusal::SlowDown(interval))) => {
                (self.to_string(), json!({ "interval": interval }))
            }
            Self::Service(
                ServiceError::RateLimited(retry_after)
                | ServiceError::NewPlayerRateLimited(retry_after),
            ) => (self.to_string(), json!({ "retry_after": retry_after })),
            Self::Service(ServiceError::Run(refusal)) => (self.to_string(), refusal.details()),
            Self::TooManySockets { scope, limit } => {
                (self.to_string(), json!({ "scope": scope, "limit": limit }))
            }
            Self::Service(ServiceError::PageInvalid(verdict)) => (self.to_string(), json!(verdict)),
            Self::Service(ServiceError::PlayerToken(refusal)) => {
                (self.to_string(), json!({ "reason": refusal.reason() }))
            }
            _ => (self.to_string(), json!({})),
        };
        ErrorBody {
            error: ErrorDetail {
                code: code.to_owned(),
                message,
                details,
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, _) = self.status_code();
        if let Self::Service(ServiceError::Internal(detail)) = &self {
            tracing::error!(%detail, "internal error");
        }
        let mut response = (status, Json(self.body())).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE
            || matches!(self, Self::Service(ServiceError::PreviewShareFull(..)))
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_S));
        }
        if let Self::TooManySockets { .. } = &self {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(SOCKETS_RETRY_AFTER_S),
            );
        }
        if let Self::Service(
            ServiceError::RateLimited(retry_after)
            | ServiceError::NewPlayerRateLimited(retry_after),
        ) = &self
        {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after));
        }
        response
    }
}

/// Status and stable code of a use case's refusal (the HTTP status a call in an authoring run
/// is recorded with comes from here too).
pub fn service_status(e: &ServiceError) -> (StatusCode, &'static str) {
    match e {
        ServiceError::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
        ServiceError::AuthoringKeyExpired => (StatusCode::UNAUTHORIZED, "authoring_key_expired"),
        ServiceError::PlayerToken(refusal) => (StatusCode::UNAUTHORIZED, refusal.code()),
        ServiceError::NotificationInvalid(_) => (StatusCode::UNAUTHORIZED, "notification_invalid"),
        ServiceError::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
        ServiceError::WrongCredential(_) => (StatusCode::FORBIDDEN, "wrong_credential"),
        ServiceError::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
        ServiceError::Conflict(_) | ServiceError::Conflicts(_) => {
            (StatusCode::CONFLICT, "conflict")
        }
        ServiceError::PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
        ServiceError::UnsupportedMediaType(_) => {
            (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
        }
        ServiceError::Validation(_) => (StatusCode::UNPROCESSABLE_ENTITY, "validation_failed"),
        ServiceError::PageInvalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, "page_invalid"),
        ServiceError::SdkDisabled => (StatusCode::FORBIDDEN, "sdk_disabled"),
        ServiceError::Run(refusal) => match refusal {
            RunRefusal::SameMember | RunRefusal::ApproverUnknown => {
                (StatusCode::FORBIDDEN, refusal.code())
            }
            RunRefusal::NotConfirmed | RunRefusal::LimitReached { .. } => {
                (StatusCode::CONFLICT, refusal.code())
            }
        },
        ServiceError::RateLimited(_) => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
        ServiceError::NewPlayerRateLimited(_) => {
            (StatusCode::TOO_MANY_REQUESTS, "new_player_rate_limited")
        }
        // RFC 8628 section 3.5 answers its polling errors 400, as every OAuth token error.
        ServiceError::SignIn(refusal) => (StatusCode::BAD_REQUEST, refusal.code()),
        ServiceError::PreviewQueueFull => (StatusCode::SERVICE_UNAVAILABLE, "preview_queue_full"),
        ServiceError::PreviewShareFull(..) => (StatusCode::TOO_MANY_REQUESTS, "preview_share_full"),
        ServiceError::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        ServiceError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
    }
}

/// Result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;
