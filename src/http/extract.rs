//! Request extractors that answer in the documented error shape instead of axum's plain-text
//! rejections: JSON bodies (415 on a wrong content type, 413 when too large, 400 when
//! malformed, 422 naming the field when a value has the wrong type), query strings (400) and
//! path ids (404: a malformed id names nothing that exists).
//!
//! JSON is read strictly (`offer_wire::json`): one document and nothing after it but
//! whitespace (`{..} {..}` and `{..}garbage` are 400), and the top level must be what the
//! route takes: an object for [`ApiJson`], an array for [`ApiJsonList`] (serde would
//! otherwise read `[]` as a struct).

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::request::Parts;
use offer_wire::json::{JsonError, Shape, parse_json};
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::service::ServiceError;
use crate::state::AppState;

/// A JSON object body.
pub struct ApiJson<T>(pub T);

/// A JSON array body (a full replacement of a list).
pub struct ApiJsonList<T>(pub Vec<T>);

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        read_json(req, state, Shape::Object).await.map(Self)
    }
}

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJsonList<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        read_json(req, state, Shape::Array).await.map(Self)
    }
}

/// Reads a JSON body of `shape`.
async fn read_json<U: DeserializeOwned>(
    req: Request,
    state: &AppState,
    shape: Shape,
) -> Result<U, ApiError> {
    let bytes = json_body(req, state).await?;
    parse_json(&bytes, shape).map_err(json_error)
}

/// The body of a request declared as JSON, read up to the configured limit.
async fn json_body(req: Request, state: &AppState) -> Result<Bytes, ApiError> {
    let is_json = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return Err(ApiError::Service(ServiceError::UnsupportedMediaType(
            "send the body as Content-Type: application/json".into(),
        )));
    }
    read_body(
        req.into_body(),
        state.services.settings.server.max_body_bytes,
    )
    .await
}

/// The answer to a body that does not read: broken JSON is a 400, a readable document with
/// a wrong value a 422 naming the field.
fn json_error(e: JsonError) -> ApiError {
    match e {
        JsonError::Syntax(reason) => ApiError::BadRequest(format!("malformed JSON: {reason}")),
        JsonError::Data(field) => ApiError::Service(ServiceError::Validation(vec![field])),
    }
}

/// Reads a whole body, answering 413 past `limit`.
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, limit).await.map_err(|_| {
        ApiError::Service(ServiceError::PayloadTooLarge(format!(
            "the body exceeds {limit} bytes"
        )))
    })
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
            .map_err(|_| ApiError::Service(ServiceError::NotFound("resource")))
    }
}

/// The header naming the authoring run a custom-page call belongs to.
pub const AUTHORING_RUN_HEADER: &str = "x-authoring-run";

/// The optional `X-Authoring-Run: <run_id>` header of the custom-page validate, draft and
/// preview calls. Absent, the call belongs to no run. A value that is not a run id names
/// nothing, so it is a 404 (as is a run of another game, checked by the run service).
pub struct AuthoringRun(pub Option<uuid::Uuid>);

impl<S: Send + Sync> FromRequestParts<S> for AuthoringRun {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        let Some(value) = parts.headers.get(AUTHORING_RUN_HEADER) else {
            return Ok(Self(None));
        };
        value
            .to_str()
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .map(|id| Self(Some(id)))
            .ok_or(ApiError::Service(ServiceError::NotFound("run")))
    }
}

impl utoipa::IntoParams for AuthoringRun {
    fn into_params(
        _: impl Fn() -> Option<utoipa::openapi::path::ParameterIn>,
    ) -> Vec<utoipa::openapi::path::Parameter> {
        use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        vec![
            ParameterBuilder::new()
                .name("X-Authoring-Run")
                .parameter_in(ParameterIn::Header)
                .required(utoipa::openapi::Required::False)
                .description(Some(
                    "The authoring run this call belongs to (`POST .../custom-pages/runs`); it is recorded there and counts against the run's limits. A run that is not this game's is a 404.",
                ))
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid))),
                ))
                .build(),
        ]
    }
}
