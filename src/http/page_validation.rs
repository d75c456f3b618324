//! `POST /v1/games/{game_id}/custom-pages/validate`: every gate of the custom-page validator
//! on a template and its bindings, against the game's live catalogue. The game's authoring
//! key may call it, and so may the studio's developers. A page that fails a gate is still a
//! 200: the answer lists the blockers (each with its gate, a message and the template line)
//! and the warnings.

use axum::Json;
use offer_domain::template::validate::Validation;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::access::{AuthorAccess, Developer};
use super::extract::ApiJson;
use super::openapi::{AuthErrors, BodyErrors, NotFound, Unavailable};
use crate::error::ApiResult;
use crate::service::page_validation;

/// Body of a validation.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateBody {
    /// The page's Dart source (gate `template_too_large` above 65536 bytes).
    pub template: String,
    /// What the template reads by name: `{"items": [item_id, ...], <name>: string | number}`
    /// (gate `bad_bindings` otherwise, `bindings_too_large` above 16384 bytes of JSON).
    #[schema(value_type = Object)]
    pub bindings: Value,
}

/// Validates a custom page (developer, or the game's authoring key): size limits, allowed
/// imports only, no network calls or platform APIs, balanced delimiters, an entry widget,
/// known widgets and arguments, bindings naming live catalogue items and their fields, and
/// no service key written into the page. `valid` is true when nothing blocks.
#[utoipa::path(post, path = "/v1/games/{game_id}/custom-pages/validate", tag = "custom pages",
    operation_id = "validate_custom_page",
    params(("game_id" = Uuid, Path)), request_body = ValidateBody,
    responses(
        (status = 200, description = "The verdict: blockers and warnings, each with its gate", body = Validation),
        AuthErrors, BodyErrors, NotFound, Unavailable))]
pub async fn validate(
    access: AuthorAccess<Developer>,
    ApiJson(body): ApiJson<ValidateBody>,
) -> ApiResult<Json<Validation>> {
    Ok(Json(
        page_validation::check(&access.game, body.template, body.bindings).await?,
    ))
}
