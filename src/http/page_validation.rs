//! `POST /v1/games/{game_id}/custom-pages/validate`: every gate of the custom-page validator
//! on a template and its bindings, against the game's live catalogue. The game's authoring
//! key may call it, and so may the studio's developers. A page that fails a gate is still a
//! 200: the answer lists the blockers (each with its gate, a message and the template line)
//! and the warnings. With `X-Authoring-Run`, the call counts in that run: the first
//! validation and three fixes, so the fifth validation of a run is refused.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use offer_domain::template::validate::Validation;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::access::{AuthorAccess, Developer};
use super::extract::{ApiJson, AuthoringRun};
use super::openapi::{AuthErrors, BodyErrors, NotFound, RunConflict, Unavailable};
use super::runs::outcome;
use crate::error::ApiResult;
use crate::service::authoring::page_validation;
use crate::service::authoring::runs::{self, CallKind};
use crate::state::AppState;

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
/// no service key written into the page. `valid` is true when nothing blocks. With
/// `X-Authoring-Run`, the call is recorded in that run and counts against its four
/// validations (a cloud run must be confirmed first).
#[utoipa::path(post, path = "/v1/games/{game_id}/custom-pages/validate", tag = "custom pages",
    operation_id = "validate_custom_page",
    params(("game_id" = Uuid, Path), AuthoringRun), request_body = ValidateBody,
    responses(
        (status = 200, description = "The verdict: blockers and warnings, each with its gate", body = Validation),
        AuthErrors, BodyErrors, NotFound, RunConflict, Unavailable))]
pub async fn validate(
    State(state): State<AppState>,
    access: AuthorAccess<Developer>,
    AuthoringRun(run): AuthoringRun,
    ApiJson(body): ApiJson<ValidateBody>,
) -> ApiResult<Json<Validation>> {
    let services = &state.services;
    let game_id = access.game_id();
    let ticket =
        runs::begin_call(services, game_id, &access.caller, run, CallKind::Validate).await?;
    let verdict = page_validation::check(&access.game, body.template, body.bindings).await;
    if let Some(ticket) = ticket {
        let recorded = outcome(&verdict, StatusCode::OK, |v, o| {
            o.valid = Some(v.valid);
            o.blockers = Some(u32::try_from(v.blockers.len()).unwrap_or(u32::MAX));
        });
        runs::finish_call(services, ticket, recorded).await;
    }
    Ok(Json(verdict?))
}
