//! Games: `POST /v1/games` (create), `GET /v1/games` (the caller's studio's, paged),
//! `GET` and `PATCH /v1/games/{game_id}`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use offer_domain::audit::Via;
use offer_domain::catalogue::ItemInput;
use offer_domain::currency::Currency;
use offer_domain::economy::Quadrant;
use offer_domain::game::{Game, Guardrails, GuardrailsPatch};
use offer_domain::learning::LearnerConfigPatch;
use offer_domain::schema::DisplayName;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::access::{Developer, GameAccess, Viewer};
use super::callers::Dashboard;
use super::extract::{ApiJson, ApiQuery};
use super::openapi::{AuthErrors, BodyErrors, Conflict, NotFound, QueryError, Unavailable};
use crate::auth::Role;
use crate::error::{ApiError, ApiResult};
use crate::service::game::games;
use crate::state::AppState;

/// `GET /v1/games/{game_id}`: the game and the live state a dashboard shows with it.
#[derive(Debug, Serialize, ToSchema)]
pub struct GameRecord {
    /// The game.
    #[serde(flatten)]
    pub game: Game,
    /// The FSR quadrant this node serves the game in, recomputed from the production 7-day
    /// window every `economy.quadrant_interval_ms`, on load and after a production import
    /// (`HYPER_INFL` suppresses L1 and L2).
    pub quadrant: Quadrant,
}

/// Body of `POST /v1/games`.
///
/// Refused with 422 besides each field's own bounds: a genre the calibration table
/// (`config/genres.toml`) does not have, a currency id listed twice, an inline item id listed
/// twice, and any inline item breaking the rules between its fields or naming a currency the
/// game does not have (see `ItemInput`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// Display name, not blank, at most 200 characters.
    #[schema(value_type = DisplayName)]
    pub name: String,
    /// A genre of the calibration table (`config/genres.toml`).
    pub genre: String,
    /// Currencies of the game, at most 20.
    #[serde(default)]
    #[schema(max_items = 20)]
    pub currencies: Vec<Currency>,
    /// Up to 20 items created with the game; larger catalogues use the bulk endpoint.
    #[serde(default)]
    #[schema(max_items = 20)]
    pub items: Vec<ItemInput>,
    /// Studio guardrails; defaults when absent.
    #[serde(default)]
    pub guardrails: Option<Guardrails>,
}

/// Largest page of `GET /v1/games`.
const MAX_PAGE: usize = 100;

/// Query of `GET /v1/games`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct GameListQuery {
    /// Page size, 1 to 100 (default 100).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<usize>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<Uuid>,
}

/// A page of the caller's studio's games.
#[derive(Debug, Serialize, ToSchema)]
pub struct GamePage {
    /// Games ordered by `game_id`.
    pub games: Vec<Game>,
    /// Pass as `cursor` for the next page; `null` on the last.
    pub next_cursor: Option<Uuid>,
}

/// Body of `PATCH /v1/games/{game_id}`; a field absent or `null` keeps its value.
///
/// Refused with 422 besides each field's own bounds: a genre the calibration table does not
/// have, a currency id listed twice, removing a currency a live item still uses, and removing
/// the price ceiling while the game is in Autonomous mode.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchGame {
    /// New name, not blank, at most 200 characters.
    #[serde(default)]
    #[schema(value_type = Option<DisplayName>)]
    pub name: Option<String>,
    /// New genre, from the calibration table.
    #[serde(default)]
    pub genre: Option<String>,
    /// Replaces the currencies, at most 20 (values are recomputed).
    #[serde(default)]
    #[schema(max_items = 20)]
    pub currencies: Option<Vec<Currency>>,
    /// Merged field by field into the stored guardrails.
    #[serde(default)]
    pub guardrails: Option<GuardrailsPatch>,
    /// Merged field by field into the AI level's learner settings.
    #[serde(default)]
    pub learner: Option<LearnerConfigPatch>,
}

/// Registers a game for the caller's studio (developer).
#[utoipa::path(post, path = "/v1/games", tag = "games", request_body = CreateGame,
    responses(
        (status = 201, description = "The new game", body = Game, links(
            ("GetGame" = (operation_id = "get_game",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "The game just created")),
            ("ListItems" = (operation_id = "list_items",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Its catalogue")),
            ("CreateItem" = (operation_id = "create_item",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Add an item to its catalogue")),
            ("BulkItems" = (operation_id = "bulk_items",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Load items into its catalogue")),
            ("ListBundles" = (operation_id = "list_bundles",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Its studio bundles")),
            ("CreateBundle" = (operation_id = "create_bundle",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Add a studio bundle")),
            ("ListKeys" = (operation_id = "list_keys",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Its keys")),
            ("IssueSdkKey" = (operation_id = "issue_sdk_key",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Issue an SDK key for it")),
            ("ListApprovals" = (operation_id = "list_approvals",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Its approvals")),
        )),
        AuthErrors, BodyErrors, Unavailable))]
pub async fn create_game(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiJson(body): ApiJson<CreateGame>,
) -> ApiResult<(StatusCode, Json<Game>)> {
    caller.require(Role::Developer)?;
    let handle = games::create(
        &state.services,
        &caller.changed_by(Via::Rest),
        &caller.studio_id,
        games::NewGame {
            name: body.name,
            genre: body.genre,
            currencies: body.currencies,
            items: body.items,
            guardrails: body.guardrails.unwrap_or_default(),
        },
    )
    .await?;
    Ok((StatusCode::CREATED, Json(handle.view().game.clone())))
}

/// Lists the caller's studio's games, a page at a time.
#[utoipa::path(get, path = "/v1/games", tag = "games", params(GameListQuery),
    responses((status = 200, description = "A page of games", body = GamePage),
        AuthErrors, QueryError, Unavailable))]
pub async fn list_games(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiQuery(q): ApiQuery<GameListQuery>,
) -> ApiResult<Json<GamePage>> {
    let limit = q.limit.unwrap_or(MAX_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    let (games, next_cursor) =
        games::list(&state.services, &caller.studio_id, q.cursor, limit).await?;
    Ok(Json(GamePage { games, next_cursor }))
}

/// Reads a game of the caller's studio.
#[utoipa::path(get, path = "/v1/games/{game_id}", tag = "games",
    params(("game_id" = Uuid, Path)),
    responses(
        (status = 200, description = "The game", body = GameRecord, links(
            ("ListItems" = (operation_id = "list_items",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Its catalogue")),
            ("ListBundles" = (operation_id = "list_bundles",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Its studio bundles")),
            ("ListKeys" = (operation_id = "list_keys",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Its keys")),
            ("ListApprovals" = (operation_id = "list_approvals",
                parameters(("game_id" = "$response.body#/game_id")),
                description = "Its approvals")),
        )),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_game(access: GameAccess<Viewer>) -> Json<GameRecord> {
    let view = access.game.view();
    Json(GameRecord {
        game: view.game.clone(),
        quadrant: view.snapshot.quadrant(),
    })
}

/// Updates name, genre, currencies, guardrails or learner settings (both merged field by
/// field) (developer).
#[utoipa::path(patch, path = "/v1/games/{game_id}", tag = "games", request_body = PatchGame,
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The updated game", body = Game),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn patch_game(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiJson(body): ApiJson<PatchGame>,
) -> ApiResult<Json<Game>> {
    let patch = games::GamePatch {
        name: body.name,
        genre: body.genre,
        currencies: body.currencies,
        guardrails: body.guardrails,
        learner: body.learner,
    };
    Ok(Json(
        games::patch(&state.services, &access.by(), &access.game, patch).await?,
    ))
}
