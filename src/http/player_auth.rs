//! A game's player identity: `GET` (viewer) and `PUT` (admin)
//! `/v1/games/{game_id}/player-auth`. In `required`, opening a session needs a player token
//! the studio's backend signed with one of the listed keys.

use axum::Json;
use axum::extract::State;
use offer_domain::player_auth::PlayerAuth;

use super::access::{Admin, GameAccess, Viewer};
use super::extract::ApiJson;
use super::openapi::{AuthErrors, BodyErrors, Conflict, NotFound, Unavailable};
use crate::error::ApiResult;
use crate::service::game::player_auth;
use crate::state::AppState;

/// The game's player identity settings (viewer): `none` until an admin sets them.
#[utoipa::path(get, path = "/v1/games/{game_id}/player-auth", tag = "player-auth",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The player identity settings", body = PlayerAuth),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_player_auth(access: GameAccess<Viewer>) -> ApiResult<Json<PlayerAuth>> {
    Ok(Json(access.game.view().player_auth.clone()))
}

/// Replaces the game's player identity settings (admin): `mode` `none` or `required`, and
/// at most three PEM public keys (P-256 for ES256 tokens, RSA for RS256). `required` needs a
/// key; a key that does not read is a 422 naming its index.
#[utoipa::path(put, path = "/v1/games/{game_id}/player-auth", tag = "player-auth",
    params(("game_id" = Uuid, Path)), request_body = PlayerAuth,
    responses((status = 200, description = "The stored settings", body = PlayerAuth),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn put_player_auth(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiJson(input): ApiJson<PlayerAuth>,
) -> ApiResult<Json<PlayerAuth>> {
    Ok(Json(
        player_auth::put(&state.services, &access.by(), &access.game, input).await?,
    ))
}
