//! Offer configuration endpoints: genre templates, studio bundles, experiments, guardrails,
//! operating mode and kill switch.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use offer_domain::game::{Game, Guardrails, GuardrailsPatch, Mode};
use offer_domain::offer::{Bundle, Experiment, KillSwitch, Template, Variant};
use offer_domain::validation::Errors;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::extract::{ApiJson, ApiPath};
use crate::auth::{Dashboard, Role};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::repo::{games, offer_config};
use crate::state::AppState;

/// The templates of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct TemplateList {
    /// L2 templates by trigger event.
    pub templates: Vec<Template>,
}

/// Body of a bundle create or update.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BundleInput {
    /// Display name.
    pub name: String,
    /// Exact catalogue items (live).
    pub item_ids: Vec<String>,
    /// Bundle price in dollars.
    pub price_usd: f64,
    /// Trigger events; empty serves on any trigger.
    #[serde(default)]
    pub triggers: Vec<String>,
}

/// Body of a bundle PATCH.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BundlePatch {
    /// New name.
    #[serde(default)]
    pub name: Option<String>,
    /// New items.
    #[serde(default)]
    pub item_ids: Option<Vec<String>>,
    /// New price.
    #[serde(default)]
    pub price_usd: Option<f64>,
    /// New triggers.
    #[serde(default)]
    pub triggers: Option<Vec<String>>,
}

/// The bundles of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct BundleList {
    /// In serving order.
    pub bundles: Vec<Bundle>,
}

/// Body of an experiment create.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentInput {
    /// Arms; each changes the price only.
    pub variants: Vec<Variant>,
}

/// The experiments of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExperimentList {
    /// Oldest first; the first prices offers.
    pub experiments: Vec<Experiment>,
}

/// Body of a mode change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeChange {
    /// `shadow`, `assisted` or `autonomous`.
    pub mode: Mode,
}

/// Body of a kill-switch change.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KillSwitchChange {
    /// 0 normal, 1 AI off, 2 offers off, 3 SDK off.
    pub level: u8,
    /// Why (shown to the SDK).
    #[serde(default)]
    pub reason: String,
}

async fn game_for(
    state: &AppState,
    caller: &Dashboard,
    game_id: Uuid,
    role: Role,
) -> ApiResult<offer_actors::GameHandle> {
    let handle = games::for_studio(state, &caller.studio_id, game_id).await?;
    caller.require(role)?;
    Ok(handle)
}

/// The game's L2 templates (its genre's defaults until replaced).
#[utoipa::path(get, path = "/v1/games/{game_id}/offer-templates", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = TemplateList), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_templates(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
) -> ApiResult<Json<TemplateList>> {
    let handle = game_for(&state, &caller, game_id, Role::Viewer).await?;
    Ok(Json(TemplateList {
        templates: handle.view().templates.clone(),
    }))
}

/// Replaces the game's L2 templates.
#[utoipa::path(put, path = "/v1/games/{game_id}/offer-templates", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = Vec<Template>,
    responses((status = 200, body = TemplateList), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn put_templates(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(templates): ApiJson<Vec<Template>>,
) -> ApiResult<Json<TemplateList>> {
    let handle = game_for(&state, &caller, game_id, Role::Developer).await?;
    let templates = offer_config::put_templates(&state, &handle, templates).await?;
    Ok(Json(TemplateList { templates }))
}

/// Creates an L3 bundle.
#[utoipa::path(post, path = "/v1/games/{game_id}/offer-bundles", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = BundleInput,
    responses((status = 201, body = Bundle), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn create_bundle(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(input): ApiJson<BundleInput>,
) -> ApiResult<(StatusCode, Json<Bundle>)> {
    let handle = game_for(&state, &caller, game_id, Role::Developer).await?;
    let bundle = Bundle {
        bundle_id: Uuid::new_v4(),
        name: input.name,
        item_ids: input.item_ids,
        price_usd: input.price_usd,
        triggers: input.triggers,
    };
    let bundle = offer_config::put_bundle(&state, &handle, bundle).await?;
    Ok((StatusCode::CREATED, Json(bundle)))
}

/// Lists the L3 bundles.
#[utoipa::path(get, path = "/v1/games/{game_id}/offer-bundles", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = BundleList), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_bundles(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
) -> ApiResult<Json<BundleList>> {
    let handle = game_for(&state, &caller, game_id, Role::Viewer).await?;
    Ok(Json(BundleList {
        bundles: handle.view().bundles.clone(),
    }))
}

fn find_bundle(handle: &offer_actors::GameHandle, bundle_id: Uuid) -> ApiResult<Bundle> {
    handle
        .view()
        .bundles
        .iter()
        .find(|b| b.bundle_id == bundle_id)
        .cloned()
        .ok_or(ApiError::NotFound("bundle"))
}

/// Reads one bundle.
#[utoipa::path(get, path = "/v1/games/{game_id}/offer-bundles/{bundle_id}", tag = "offer configuration",
    params(("game_id" = Uuid, Path), ("bundle_id" = Uuid, Path)),
    responses((status = 200, body = Bundle), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_bundle(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath((game_id, bundle_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<Bundle>> {
    let handle = game_for(&state, &caller, game_id, Role::Viewer).await?;
    Ok(Json(find_bundle(&handle, bundle_id)?))
}

/// Updates a bundle.
#[utoipa::path(patch, path = "/v1/games/{game_id}/offer-bundles/{bundle_id}", tag = "offer configuration",
    params(("game_id" = Uuid, Path), ("bundle_id" = Uuid, Path)), request_body = BundlePatch,
    responses((status = 200, body = Bundle), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn patch_bundle(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath((game_id, bundle_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(patch): ApiJson<BundlePatch>,
) -> ApiResult<Json<Bundle>> {
    let handle = game_for(&state, &caller, game_id, Role::Developer).await?;
    let mut bundle = find_bundle(&handle, bundle_id)?;
    if let Some(v) = patch.name {
        bundle.name = v;
    }
    if let Some(v) = patch.item_ids {
        bundle.item_ids = v;
    }
    if let Some(v) = patch.price_usd {
        bundle.price_usd = v;
    }
    if let Some(v) = patch.triggers {
        bundle.triggers = v;
    }
    Ok(Json(
        offer_config::put_bundle(&state, &handle, bundle).await?,
    ))
}

/// Deletes a bundle.
#[utoipa::path(delete, path = "/v1/games/{game_id}/offer-bundles/{bundle_id}", tag = "offer configuration",
    params(("game_id" = Uuid, Path), ("bundle_id" = Uuid, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn delete_bundle(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath((game_id, bundle_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<StatusCode> {
    let handle = game_for(&state, &caller, game_id, Role::Developer).await?;
    offer_config::delete_bundle(&state, &handle, bundle_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Creates a price experiment.
#[utoipa::path(post, path = "/v1/games/{game_id}/experiments", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = ExperimentInput,
    responses((status = 201, body = Experiment), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn create_experiment(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(input): ApiJson<ExperimentInput>,
) -> ApiResult<(StatusCode, Json<Experiment>)> {
    let handle = game_for(&state, &caller, game_id, Role::Developer).await?;
    let exp = Experiment {
        experiment_id: Uuid::new_v4(),
        variants: input.variants,
    };
    let exp = offer_config::add_experiment(&state, &handle, exp).await?;
    Ok((StatusCode::CREATED, Json(exp)))
}

/// Lists the experiments.
#[utoipa::path(get, path = "/v1/games/{game_id}/experiments", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = ExperimentList), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn list_experiments(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
) -> ApiResult<Json<ExperimentList>> {
    let handle = game_for(&state, &caller, game_id, Role::Viewer).await?;
    Ok(Json(ExperimentList {
        experiments: handle.view().experiments.clone(),
    }))
}

/// The guardrails.
#[utoipa::path(get, path = "/v1/games/{game_id}/guardrails", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = Guardrails), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_guardrails(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
) -> ApiResult<Json<Guardrails>> {
    let handle = game_for(&state, &caller, game_id, Role::Viewer).await?;
    Ok(Json(handle.view().game.guardrails.clone()))
}

/// Merges guardrails field by field (as `PATCH /v1/games/{id}` does).
#[utoipa::path(patch, path = "/v1/games/{game_id}/guardrails", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = GuardrailsPatch,
    responses((status = 200, body = Guardrails), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn patch_guardrails(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(patch): ApiJson<GuardrailsPatch>,
) -> ApiResult<Json<Guardrails>> {
    let handle = game_for(&state, &caller, game_id, Role::Developer).await?;
    let game = games::update(&state, &handle, |game| {
        game.guardrails.merge(patch.clone());
        let mut errors = Errors::default();
        game.guardrails.validate(&mut errors);
        game.check_mode_guardrails(&mut errors);
        errors.finish(true).map_err(ApiError::Validation)
    })
    .await?;
    Ok(Json(game.guardrails))
}

/// Changes the operating mode (admin). Shadow -> Assisted is the dashboard promotion;
/// Assisted -> Autonomous needs a `max_price_cents` guardrail; stepping down is always
/// allowed; Shadow -> Autonomous skips the supervised phase and is refused.
#[utoipa::path(post, path = "/v1/games/{game_id}/mode", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = ModeChange,
    responses((status = 200, body = Game), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn set_mode(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(change): ApiJson<ModeChange>,
) -> ApiResult<Json<Game>> {
    let handle = game_for(&state, &caller, game_id, Role::Admin).await?;
    let rank = |m: Mode| match m {
        Mode::Shadow => 0,
        Mode::Assisted => 1,
        Mode::Autonomous => 2,
    };
    let game = games::update(&state, &handle, |game| {
        let (from, to) = (rank(game.mode), rank(change.mode));
        if to > from + 1 {
            return Err(ApiError::Conflict(
                "promote one step at a time: shadow -> assisted -> autonomous".into(),
            ));
        }
        if from == to {
            return Ok(false);
        }
        game.mode = change.mode;
        let mut errors = Errors::default();
        game.check_mode_guardrails(&mut errors);
        errors.finish(true).map_err(|_| {
            ApiError::invalid("mode", "Autonomous mode needs a max_price_cents guardrail")
        })
    })
    .await?;
    Ok(Json(game))
}

/// The kill switch.
#[utoipa::path(get, path = "/v1/games/{game_id}/kill-switch", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = KillSwitch), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_kill_switch(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
) -> ApiResult<Json<KillSwitch>> {
    let handle = game_for(&state, &caller, game_id, Role::Viewer).await?;
    Ok(Json(handle.view().kill_switch.clone()))
}

/// Sets the kill switch (admin); every node and connected SDK gets it at once.
#[utoipa::path(put, path = "/v1/games/{game_id}/kill-switch", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = KillSwitchChange,
    responses((status = 200, body = KillSwitch), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn put_kill_switch(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(change): ApiJson<KillSwitchChange>,
) -> ApiResult<Json<KillSwitch>> {
    let handle = game_for(&state, &caller, game_id, Role::Admin).await?;
    let ks = offer_config::set_kill_switch(&state, &handle, change.level, change.reason).await?;
    Ok(Json(ks))
}
