//! The HTTP error type: every non-2xx answer of the service is built here, in the contract's
//! shape `{"error": {"code", "message", "details"}}`.
//!
//! Each variant says its status and stable code in one place ([`ApiError::status_code`]).
//! Internals (store failures, bugs) are logged and answered with a generic message, never
//! leaked.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use offer_domain::validation::FieldError;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use crate::store::StoreError;

/// Seconds a client should wait before retrying a 503 or 429.
const RETRY_AFTER_S: &str = "1";

/// Everything a REST or WebSocket request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// Malformed body or query (400).
    #[error("{0}")]
    BadRequest(String),
    /// Missing or bad credential (401).
    #[error("{0}")]
    Unauthorized(&'static str),
    /// The authoring key's 90 days are over (401, code named by the spec).
    #[error("the authoring key has expired: sign in again or re-export")]
    AuthoringKeyExpired,
    /// Right kind of credential, not allowed (403).
    #[error("{0}")]
    Forbidden(&'static str),
    /// A credential of the wrong kind for this path (403).
    #[error("{0}")]
    WrongCredential(&'static str),
    /// Absent, or another studio's (404: never reveal that it exists).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The path exists but not with this method (405).
    #[error("method not allowed")]
    MethodNotAllowed,
    /// State conflict (409).
    #[error("{0}")]
    Conflict(String),
    /// Too large (413).
    #[error("{0}")]
    PayloadTooLarge(String),
    /// Wrong content type (415).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// Well-formed but invalid (422) with every field error.
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    /// The SDK is switched off by kill-switch level 3.
    #[error("the SDK is disabled for this game (kill switch level 3)")]
    SdkDisabled,
    /// A dependency (the store) is down or slow (503).
    #[error("service unavailable, retry shortly")]
    Unavailable,
    /// A bug; details are logged, not returned (500).
    #[error("internal error")]
    Internal(String),
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
    /// Status and stable code of each variant.
    pub fn status_code(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            Self::Unauthorized(_) => (StatusCode::UNAUTHORIZED, "unauthorized"),
            Self::AuthoringKeyExpired => (StatusCode::UNAUTHORIZED, "authoring_key_expired"),
            Self::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
            Self::WrongCredential(_) => (StatusCode::FORBIDDEN, "wrong_credential"),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
            Self::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            Self::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            Self::PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            Self::UnsupportedMediaType(_) => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
            }
            Self::Validation(_) => (StatusCode::UNPROCESSABLE_ENTITY, "validation_failed"),
            Self::SdkDisabled => (StatusCode::FORBIDDEN, "sdk_disabled"),
            Self::Unavailable => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            Self::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }

    /// A 422 with one field error.
    pub fn invalid(field: &str, reason: impl Into<String>) -> Self {
        Self::Validation(vec![FieldError::new(field, reason)])
    }

    /// The body of this error.
    pub fn body(&self) -> ErrorBody {
        let (_, code) = self.status_code();
        let details = match self {
            Self::Validation(errors) => json!({ "errors": errors }),
            _ => json!({}),
        };
        ErrorBody {
            error: ErrorDetail {
                code: code.to_owned(),
                message: self.to_string(),
                details,
            },
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(_) => {
                tracing::warn!(error = %e, "store unavailable");
                Self::Unavailable
            }
            StoreError::Corrupt(msg) => Self::Internal(msg),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, _) = self.status_code();
        if let Self::Internal(detail) = &self {
            tracing::error!(%detail, "internal error");
        }
        let mut response = (status, Json(self.body())).into_response();
        if matches!(
            status,
            StatusCode::SERVICE_UNAVAILABLE | StatusCode::TOO_MANY_REQUESTS
        ) {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER_S));
        }
        response
    }
}

/// Result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;
