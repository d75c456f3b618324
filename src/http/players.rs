//! A player's record (dashboard, viewer or above): group, install day, balances, lifetime
//! spend and a page of its ledger entries; a player's data export (admin): everything
//! held about the player in one document; and a player's erasure (admin).

use axum::Json;
use axum::extract::State;
use offer_domain::environment::Environment;
use serde::Deserialize;
use utoipa::IntoParams;

use super::access::{Admin, GameAccess, Viewer};
use super::extract::{ApiPath, ApiQuery};
use super::openapi::{AuthErrors, Conflict, Invalid, NotFound, QueryError, Unavailable};
use crate::error::ApiResult;
use crate::service::ServiceError;
use crate::service::play::erasure::{self, Erased};
use crate::service::play::player_data::{self, PlayerExport};
use crate::service::play::players::{self, MAX_PAGE, PlayerRecord};
use crate::state::AppState;

/// Ledger entries a page holds when `limit` is not given.
const DEFAULT_PAGE: usize = 20;

/// Longest player id, as sessions accept it.
const MAX_PLAYER_ID_CHARS: usize = 128;

/// Query of a player's record.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct PlayerQuery {
    /// Production (default) or sandbox: the two never mix.
    pub environment: Option<Environment>,
    /// Ledger entries to skip, newest first (default 0).
    #[param(minimum = 0, maximum = 4294967295_u64)]
    pub offset: Option<u32>,
    /// Ledger entries in the page, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<usize>,
}

/// A player's record: its group (holdout or treatment), install day and last session day,
/// the balance of each of the game's currencies, its lifetime spend, and its most recent
/// ledger entries (newest first, paged with `offset` and `limit`). A player that never played
/// (an accepted event beyond `session_start`) and has no ledger entry in the environment is a
/// 404, as is another studio's game.
#[utoipa::path(get, path = "/v1/games/{game_id}/players/{player_id}", tag = "economy",
    operation_id = "get_player",
    params(("game_id" = Uuid, Path),
        ("player_id" = String, Path, min_length = 1, max_length = 128), PlayerQuery),
    responses((status = 200, description = "The player's record", body = PlayerRecord),
        AuthErrors, QueryError, NotFound, Invalid, Unavailable))]
pub async fn get_player(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiPath((_, player_id)): ApiPath<(uuid::Uuid, String)>,
    ApiQuery(q): ApiQuery<PlayerQuery>,
) -> ApiResult<Json<PlayerRecord>> {
    if player_id.is_empty() || player_id.chars().count() > MAX_PLAYER_ID_CHARS {
        return Err(ServiceError::invalid("player_id", "between 1 and 128 characters").into());
    }
    let limit = q.limit.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ServiceError::invalid("limit", "from 1 to 100").into());
    }
    Ok(Json(
        players::record(
            &state.services,
            &access.game,
            q.environment.unwrap_or(Environment::Production),
            &player_id,
            usize::try_from(q.offset.unwrap_or(0)).unwrap_or(usize::MAX),
            limit,
        )
        .await?,
    ))
}

/// Everything the engine holds about a player of the game, in one document, for a player's
/// request for a copy of their data: its group and experiment variants, and for production
/// and sandbox its days of play, sessions with their attributes, balances, inventory,
/// lifetime spend, every ledger line kept (purchases with how they were proven) and the store
/// transactions it redeemed. Decision records are kept by decision id for a short time and
/// are not included. A player the game holds nothing about is a 404, as is another studio's
/// game. Admins only.
#[utoipa::path(get, path = "/v1/games/{game_id}/players/{player_id}/export", tag = "economy",
    operation_id = "export_player",
    params(("game_id" = Uuid, Path),
        ("player_id" = String, Path, min_length = 1, max_length = 128)),
    responses((status = 200, description = "Everything held about the player", body = PlayerExport),
        AuthErrors, NotFound, Invalid, Unavailable))]
pub async fn export_player(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiPath((_, player_id)): ApiPath<(uuid::Uuid, String)>,
) -> ApiResult<Json<PlayerExport>> {
    if player_id.is_empty() || player_id.chars().count() > MAX_PLAYER_ID_CHARS {
        return Err(ServiceError::invalid("player_id", "between 1 and 128 characters").into());
    }
    Ok(Json(
        player_data::export(&state.services, &access.game, &player_id).await?,
    ))
}

/// Erases a player at its request: closes its sessions on every node (their sockets close
/// with 4010 `player_erased`), deletes its sessions with their attributes, its frequency-cap
/// counters, wallet balances and inventory, in production and sandbox; and keeps its
/// population entry, spends, ledger lines, idempotency records, experiment exposures,
/// redeemed store transactions and refund records under a random `tombstone` of the same
/// holdout group, so the studio's figures (holdout ARPU, revenue share, the bill, experiment
/// results) do not change and a redeemed receipt stays redeemed. The group is a hash of the
/// id: the same id coming back lands in the same group and starts with nothing. The audit
/// trail records `player.erase` naming the tombstone, never the id. Asking again finishes an
/// erasure that was interrupted (409: another erasure of the player ended meanwhile; ask
/// again). A player the game holds nothing about is a 404, as is another studio's game.
/// Admins only.
#[utoipa::path(delete, path = "/v1/games/{game_id}/players/{player_id}", tag = "economy",
    operation_id = "erase_player",
    params(("game_id" = Uuid, Path),
        ("player_id" = String, Path, min_length = 1, max_length = 128)),
    responses((status = 200, description = "The player is erased", body = Erased),
        AuthErrors, NotFound, Invalid, Conflict, Unavailable))]
pub async fn erase_player(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiPath((_, player_id)): ApiPath<(uuid::Uuid, String)>,
) -> ApiResult<Json<Erased>> {
    if player_id.is_empty() || player_id.chars().count() > MAX_PLAYER_ID_CHARS {
        return Err(ServiceError::invalid("player_id", "between 1 and 128 characters").into());
    }
    Ok(Json(
        erasure::erase(&state.services, &access.by(), &access.game, &player_id).await?,
    ))
}
