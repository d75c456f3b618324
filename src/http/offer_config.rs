//! Offer configuration endpoints: genre templates, studio bundles, experiments, guardrails,
//! operating mode and kill switch.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use offer_domain::game::{Game, Guardrails, GuardrailsPatch, Mode};
use offer_domain::offer::{Bundle, DEFAULT_MIN_SAMPLE, Experiment, KillSwitch, Template, Variant};
use offer_domain::offer_validation::MAX_CONFIG_ENTRIES;
use offer_domain::product_ids::StoreProducts;
use offer_domain::schema::{DisplayName, PriceUsd, SnakeCaseId};
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ArrayBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

use super::access::{Admin, Developer, GameAccess, Viewer};
use super::extract::{ApiJson, ApiJsonList, ApiPath};
use super::openapi::{AuthErrors, BodyErrors, Conflict, NotFound, Unavailable};
use crate::error::{ApiError, ApiResult};
use crate::service::ServiceError;
use crate::service::{game::games, game::offer_config};
use crate::state::AppState;

/// The templates of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct TemplateList {
    /// L2 templates by trigger event.
    pub templates: Vec<Template>,
}

/// Body of `PUT .../offer-templates` in the OpenAPI document: the whole list, which replaces
/// the stored one.
pub struct TemplatesBody;

impl PartialSchema for TemplatesBody {
    fn schema() -> RefOr<Schema> {
        ArrayBuilder::new()
            .items(Ref::from_schema_name(Template::name()))
            .max_items(Some(MAX_CONFIG_ENTRIES))
            .description(Some(
                "The whole list of templates, at most 100, which replaces the stored one. An \
                 event type may have one template only (a list naming one twice is refused with \
                 422).",
            ))
            .into()
    }
}

impl ToSchema for TemplatesBody {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((Template::name().into_owned(), Template::schema()));
        Template::schemas(schemas);
    }
}

/// Body of a bundle create. Each item must be a live item of the game's catalogue (422
/// naming the ones that are not); a game has at most 100 bundles (422); a store product
/// another live item or bundle of the game is sold under is a 409 naming the field.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BundleInput {
    /// Display name, not blank, at most 200 characters.
    #[schema(value_type = DisplayName)]
    pub name: String,
    /// Exact catalogue items (live), 1 to 50.
    #[schema(value_type = Vec<SnakeCaseId>, min_items = 1, max_items = 50)]
    pub item_ids: Vec<String>,
    /// Bundle price in dollars, 0 to 100000, at most 2 decimal places.
    #[schema(value_type = PriceUsd)]
    pub price_usd: f64,
    /// Trigger events, at most 20; empty serves on any trigger.
    #[serde(default)]
    #[schema(value_type = Vec<SnakeCaseId>, max_items = 20)]
    pub triggers: Vec<String>,
    /// The product id each store sells the bundle under, each optional.
    #[serde(default)]
    pub store_products: StoreProducts,
}

/// Body of a bundle PATCH; a field absent or `null` keeps its value. The bundle's items must
/// still be live items of the game's catalogue (422 naming the ones that are not); a store
/// product another live item or bundle of the game is sold under is a 409 naming the field.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BundlePatch {
    /// New name, not blank, at most 200 characters.
    #[serde(default)]
    #[schema(value_type = Option<DisplayName>)]
    pub name: Option<String>,
    /// New items, 1 to 50.
    #[serde(default)]
    #[schema(value_type = Option<Vec<SnakeCaseId>>, min_items = 1, max_items = 50)]
    pub item_ids: Option<Vec<String>>,
    /// New price in dollars, 0 to 100000, at most 2 decimal places.
    #[serde(default)]
    #[schema(value_type = Option<PriceUsd>)]
    pub price_usd: Option<f64>,
    /// New triggers, at most 20.
    #[serde(default)]
    #[schema(value_type = Option<Vec<SnakeCaseId>>, max_items = 20)]
    pub triggers: Option<Vec<String>>,
    /// New store products: replaces both ids (a store left out has none afterwards).
    #[serde(default)]
    pub store_products: Option<StoreProducts>,
}

/// The bundles of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct BundleList {
    /// In serving order.
    pub bundles: Vec<Bundle>,
}

/// Body of an experiment create. Its variant names are unique, its weights are not all 0,
/// its `min_sample` is within bounds, and a game has at most 100 experiments (each refused
/// with 422).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExperimentInput {
    /// Arms, 1 to 10; each changes the price only.
    #[schema(min_items = 1, max_items = 10)]
    pub variants: Vec<Variant>,
    /// Exposed players every variant with a weight needs before the results stop being
    /// provisional, 1 to 10,000,000 (default 1,000).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 10000000)]
    pub min_sample: Option<u64>,
}

/// The experiments of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct ExperimentList {
    /// Oldest first; the first prices offers.
    pub experiments: Vec<Experiment>,
}

/// Body of a mode change. Autonomous mode needs a `max_price_cents` guardrail (422 without
/// one); Shadow straight to Autonomous skips a step (409).
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
    #[schema(minimum = 0, maximum = 3)]
    pub level: u8,
    /// Why (shown to the SDK), at most 500 characters.
    #[serde(default)]
    #[schema(max_length = 500)]
    pub reason: String,
}

/// The game's L2 templates (its genre's defaults until replaced).
#[utoipa::path(get, path = "/v1/games/{game_id}/offer-templates", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The templates", body = TemplateList),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_templates(access: GameAccess<Viewer>) -> ApiResult<Json<TemplateList>> {
    let handle = access.game.clone();
    Ok(Json(TemplateList {
        templates: handle.view().templates.clone(),
    }))
}

/// Replaces the game's L2 templates (developer).
#[utoipa::path(put, path = "/v1/games/{game_id}/offer-templates", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = inline(TemplatesBody),
    responses((status = 200, description = "The stored templates", body = TemplateList),
        AuthErrors, BodyErrors, NotFound, Unavailable))]
pub async fn put_templates(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiJsonList(templates): ApiJsonList<Template>,
) -> ApiResult<Json<TemplateList>> {
    let handle = access.game.clone();
    let templates =
        offer_config::put_templates(&state.services, &access.by(), &handle, templates).await?;
    Ok(Json(TemplateList { templates }))
}

/// Creates an L3 bundle (developer).
#[utoipa::path(post, path = "/v1/games/{game_id}/offer-bundles", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = BundleInput,
    responses(
        (status = 201, description = "The new bundle", body = Bundle, links(
            ("GetBundle" = (operation_id = "get_bundle",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("bundle_id" = "$response.body#/bundle_id")),
                description = "The bundle just created")),
            ("PatchBundle" = (operation_id = "patch_bundle",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("bundle_id" = "$response.body#/bundle_id")),
                description = "Update the bundle just created")),
            ("DeleteBundle" = (operation_id = "delete_bundle",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("bundle_id" = "$response.body#/bundle_id")),
                description = "Delete the bundle just created")),
        )),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn create_bundle(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiJson(input): ApiJson<BundleInput>,
) -> ApiResult<(StatusCode, Json<Bundle>)> {
    let handle = access.game.clone();
    let bundle = Bundle {
        bundle_id: Uuid::new_v4(),
        name: input.name,
        item_ids: input.item_ids,
        price_usd: input.price_usd,
        triggers: input.triggers,
        store_products: input.store_products,
    };
    let bundle = offer_config::put_bundle(&state.services, &access.by(), &handle, bundle).await?;
    Ok((StatusCode::CREATED, Json(bundle)))
}

/// Lists the L3 bundles.
#[utoipa::path(get, path = "/v1/games/{game_id}/offer-bundles", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The bundles", body = BundleList),
        AuthErrors, NotFound, Unavailable))]
pub async fn list_bundles(access: GameAccess<Viewer>) -> ApiResult<Json<BundleList>> {
    let handle = access.game.clone();
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
        .ok_or(ApiError::Service(ServiceError::NotFound("bundle")))
}

/// Reads one bundle.
#[utoipa::path(get, path = "/v1/games/{game_id}/offer-bundles/{bundle_id}", tag = "offer configuration",
    params(("game_id" = Uuid, Path), ("bundle_id" = Uuid, Path)),
    responses((status = 200, description = "The bundle", body = Bundle),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_bundle(
    access: GameAccess<Viewer>,
    ApiPath((_, bundle_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<Bundle>> {
    let handle = access.game.clone();
    Ok(Json(find_bundle(&handle, bundle_id)?))
}

/// Updates a bundle (developer).
#[utoipa::path(patch, path = "/v1/games/{game_id}/offer-bundles/{bundle_id}", tag = "offer configuration",
    params(("game_id" = Uuid, Path), ("bundle_id" = Uuid, Path)), request_body = BundlePatch,
    responses((status = 200, description = "The updated bundle", body = Bundle),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn patch_bundle(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiPath((_, bundle_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(patch): ApiJson<BundlePatch>,
) -> ApiResult<Json<Bundle>> {
    let handle = access.game.clone();
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
    if let Some(v) = patch.store_products {
        bundle.store_products = v;
    }
    Ok(Json(
        offer_config::put_bundle(&state.services, &access.by(), &handle, bundle).await?,
    ))
}

/// Deletes a bundle (developer).
#[utoipa::path(delete, path = "/v1/games/{game_id}/offer-bundles/{bundle_id}", tag = "offer configuration",
    params(("game_id" = Uuid, Path), ("bundle_id" = Uuid, Path)),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFound, Unavailable))]
pub async fn delete_bundle(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiPath((_, bundle_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<StatusCode> {
    let handle = access.game.clone();
    offer_config::delete_bundle(&state.services, &access.by(), &handle, bundle_id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Creates a price experiment (developer).
#[utoipa::path(post, path = "/v1/games/{game_id}/experiments", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = ExperimentInput,
    responses(
        (status = 201, description = "The new experiment", body = Experiment, links(
            ("DeleteExperiment" = (operation_id = "delete_experiment",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("experiment_id" = "$response.body#/experiment_id")),
                description = "Delete the experiment just created")),
        )),
        AuthErrors, BodyErrors, NotFound, Unavailable))]
pub async fn create_experiment(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiJson(input): ApiJson<ExperimentInput>,
) -> ApiResult<(StatusCode, Json<Experiment>)> {
    let handle = access.game.clone();
    let exp = Experiment {
        experiment_id: Uuid::new_v4(),
        variants: input.variants,
        min_sample: input.min_sample.unwrap_or(DEFAULT_MIN_SAMPLE),
    };
    let exp = offer_config::add_experiment(&state.services, &access.by(), &handle, exp).await?;
    Ok((StatusCode::CREATED, Json(exp)))
}

/// Deletes a price experiment (developer): offers are priced by the next oldest experiment,
/// or by none. An experiment the game does not have is a 404.
#[utoipa::path(delete, path = "/v1/games/{game_id}/experiments/{experiment_id}", tag = "offer configuration",
    params(("game_id" = Uuid, Path), ("experiment_id" = Uuid, Path)),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFound, Unavailable))]
pub async fn delete_experiment(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiPath((_, experiment_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<StatusCode> {
    offer_config::delete_experiment(&state.services, &access.by(), &access.game, experiment_id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Lists the experiments.
#[utoipa::path(get, path = "/v1/games/{game_id}/experiments", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The experiments", body = ExperimentList),
        AuthErrors, NotFound, Unavailable))]
pub async fn list_experiments(access: GameAccess<Viewer>) -> ApiResult<Json<ExperimentList>> {
    let handle = access.game.clone();
    Ok(Json(ExperimentList {
        experiments: handle.view().experiments.clone(),
    }))
}

/// The guardrails.
#[utoipa::path(get, path = "/v1/games/{game_id}/guardrails", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The guardrails", body = Guardrails),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_guardrails(access: GameAccess<Viewer>) -> ApiResult<Json<Guardrails>> {
    let handle = access.game.clone();
    Ok(Json(handle.view().game.guardrails.clone()))
}

/// Merges guardrails field by field (as `PATCH /v1/games/{id}` does) (developer).
#[utoipa::path(patch, path = "/v1/games/{game_id}/guardrails", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = GuardrailsPatch,
    responses((status = 200, description = "The merged guardrails", body = Guardrails),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn patch_guardrails(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiJson(patch): ApiJson<GuardrailsPatch>,
) -> ApiResult<Json<Guardrails>> {
    let game = games::patch_guardrails(&state.services, &access.by(), &access.game, patch).await?;
    Ok(Json(game.guardrails))
}

/// Changes the operating mode (admin). Shadow -> Assisted is the dashboard promotion;
/// Assisted -> Autonomous needs a `max_price_cents` guardrail; stepping down is always
/// allowed; Shadow -> Autonomous skips the supervised phase and is refused.
#[utoipa::path(post, path = "/v1/games/{game_id}/mode", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = ModeChange,
    responses((status = 200, description = "The game in its new mode", body = Game),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn set_mode(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiJson(change): ApiJson<ModeChange>,
) -> ApiResult<Json<Game>> {
    let game = games::set_mode(&state.services, &access.by(), &access.game, change.mode).await?;
    Ok(Json(game))
}

/// The kill switch.
#[utoipa::path(get, path = "/v1/games/{game_id}/kill-switch", tag = "offer configuration",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The kill switch", body = KillSwitch),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_kill_switch(access: GameAccess<Viewer>) -> ApiResult<Json<KillSwitch>> {
    let handle = access.game.clone();
    Ok(Json(handle.view().kill_switch.clone()))
}

/// Sets the kill switch (admin); every node and connected SDK gets it at once.
#[utoipa::path(put, path = "/v1/games/{game_id}/kill-switch", tag = "offer configuration",
    params(("game_id" = Uuid, Path)), request_body = KillSwitchChange,
    responses((status = 200, description = "The kill switch as set", body = KillSwitch),
        AuthErrors, BodyErrors, NotFound, Unavailable))]
pub async fn put_kill_switch(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiJson(change): ApiJson<KillSwitchChange>,
) -> ApiResult<Json<KillSwitch>> {
    let handle = access.game.clone();
    let ks = offer_config::set_kill_switch(
        &state.services,
        &access.by(),
        &handle,
        change.level,
        change.reason,
    )
    .await?;
    Ok(Json(ks))
}
