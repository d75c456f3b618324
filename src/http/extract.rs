//! Request extractors that answer in the contract's error shape instead of axum's plain-text
//! rejections: JSON bodies (415 on a wrong content type, 413 when too large, 400 when
//! malformed, 422 naming the field when a value has the wrong type), query strings (400) and
//! path ids (404: a malformed id names nothing that exists).

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use offer_domain::validation::FieldError;
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::state::AppState;

/// A JSON body.
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let is_json = req
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
        if !is_json {
            return Err(ApiError::UnsupportedMediaType(
                "send the body as Content-Type: application/json".into(),
            ));
        }
        let bytes = read_body(req.into_body(), state.settings.server.max_body_bytes).await?;
        parse_json(&bytes).map(Self)
    }
}

/// Reads a whole body, answering 413 past `limit`.
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|_| ApiError::PayloadTooLarge(format!("the body exceeds {limit} bytes")))
}

/// Parses JSON: syntax errors are 400, type errors 422 with the failing field's path
/// (`items[3].category` becomes field `category`, index 3).
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // The fast path; only a failing body is parsed again to locate its error.
    if let Ok(value) = serde_json::from_slice(bytes) {
        return Ok(value);
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        if inner.is_data() {
            ApiError::Validation(vec![field_error(&path, &inner.to_string())])
        } else {
            ApiError::BadRequest(format!("malformed JSON: {inner}"))
        }
    })
}

/// Turns a serde path such as `items[3].category` into a field error with its index.
fn field_error(path: &str, reason: &str) -> FieldError {
    // Drop serde's " at line 1 column 42" suffix: the path says where.
    let reason = reason.split(" at line ").next().unwrap_or(reason);
    if let Some(rest) = path.strip_prefix("items[")
        && let Some((idx, field)) = rest.split_once(']')
        && let Ok(i) = idx.parse::<usize>()
    {
        let field = field.trim_start_matches('.');
        let field = if field.is_empty() { "items" } else { field };
        return FieldError::new(field, reason).at(i);
    }
    let field = if path == "." || path.is_empty() {
        "body"
    } else {
        path
    };
    FieldError::new(field, reason)
}

/// A query string.
pub struct ApiQuery<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or_default();
        serde_urlencoded_from(query)
            .map(Self)
            .map_err(|e| ApiError::BadRequest(format!("bad query string: {e}")))
    }
}

fn serde_urlencoded_from<T: DeserializeOwned>(query: &str) -> Result<T, String> {
    axum::extract::Query::<T>::try_from_uri(
        &format!("/?{query}")
            .parse()
            .map_err(|e: axum::http::uri::InvalidUri| e.to_string())?,
    )
    .map(|q| q.0)
    .map_err(|e| e.body_text())
}

/// Path parameters; a malformed id is a 404.
pub struct ApiPath<T>(pub T);

impl<T, S> FromRequestParts<S> for ApiPath<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| Self(p.0))
            .map_err(|_| ApiError::NotFound("resource"))
    }
}
