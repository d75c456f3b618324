//! `POST/GET/PATCH /v1/games[/{game_id}]`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use offer_domain::catalogue::ItemInput;
use offer_domain::game::{Currency, Game, Guardrails, GuardrailsPatch, validate_currencies};
use offer_domain::validation::Errors;
use serde::Deserialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::extract::{ApiJson, ApiPath};
use crate::auth::{Dashboard, Role};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::repo::{games, items};
use crate::state::AppState;

/// Body of `POST /v1/games`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// Display name.
    pub name: String,
    /// A genre of the calibration table.
    pub genre: String,
    /// Currencies of the game.
    #[serde(default)]
    pub currencies: Vec<Currency>,
    /// Up to 20 items (the wizard's step 3).
    #[serde(default)]
    pub items: Vec<ItemInput>,
    /// Studio guardrails; defaults when absent.
    #[serde(default)]
    pub guardrails: Option<Guardrails>,
}

/// Body of `PATCH /v1/games/{game_id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchGame {
    /// New name.
    #[serde(default)]
    pub name: Option<String>,
    /// New genre.
    #[serde(default)]
    pub genre: Option<String>,
    /// Replaces the currencies (values are recomputed).
    #[serde(default)]
    pub currencies: Option<Vec<Currency>>,
    /// Merged field by field into the stored guardrails.
    #[serde(default)]
    pub guardrails: Option<GuardrailsPatch>,
}

/// Registers a game for the caller's studio.
#[utoipa::path(post, path = "/v1/games", tag = "games", request_body = CreateGame,
    responses((status = 201, body = Game), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn create_game(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiJson(body): ApiJson<CreateGame>,
) -> ApiResult<(StatusCode, Json<Game>)> {
    caller.require(Role::Developer)?;
    let handle = games::create(
        &state,
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

/// Reads a game of the caller's studio.
#[utoipa::path(get, path = "/v1/games/{game_id}", tag = "games",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = Game), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn get_game(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
) -> ApiResult<Json<Game>> {
    let handle = games::for_studio(&state, &caller.studio_id, game_id).await?;
    Ok(Json(handle.view().game.clone()))
}

/// Updates name, genre, currencies or guardrails (merged field by field).
#[utoipa::path(patch, path = "/v1/games/{game_id}", tag = "games", request_body = PatchGame,
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = Game), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn patch_game(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<PatchGame>,
) -> ApiResult<Json<Game>> {
    let handle = games::for_studio(&state, &caller.studio_id, game_id).await?;
    caller.require(Role::Developer)?;
    let currencies_changed = body.currencies.is_some();
    let game = games::update(&state, &handle, |game| {
        let mut errors = Errors::default();
        if let Some(name) = &body.name {
            errors.text("name", name, offer_domain::game::MAX_NAME_LEN);
            game.name.clone_from(name);
        }
        if let Some(genre) = &body.genre {
            games::check_genre(&state, genre, &mut errors);
            game.genre.clone_from(genre);
        }
        if let Some(currencies) = &body.currencies {
            validate_currencies(currencies, &mut errors);
            // A live item may not be left pointing at a removed currency: it could then
            // never be saved again.
            let known = |id: &str| currencies.iter().any(|c| c.currency_id == id);
            for item in handle.view().items.iter().filter(|i| i.is_live()) {
                let used = item
                    .currency_id
                    .iter()
                    .chain(item.earned_price.iter().map(|p| &p.currency_id));
                for id in used.filter(|id| !known(id)) {
                    errors.push(
                        "currencies",
                        format!("item `{}` still uses currency `{id}`", item.item_id),
                    );
                }
            }
            game.currencies.clone_from(currencies);
        }
        if let Some(patch) = body.guardrails.clone() {
            game.guardrails.merge(patch);
            game.guardrails.validate(&mut errors);
        }
        game.check_mode_guardrails(&mut errors);
        errors.finish(true).map_err(ApiError::Validation)
    })
    .await?;
    if currencies_changed {
        items::revalue(&state, &handle).await?;
    }
    Ok(Json(game))
}
