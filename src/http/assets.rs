//! The per-game asset library: `POST /v1/games/{game_id}/assets` (a raw PNG, JPEG or WebP
//! body up to `catalogue.max_asset_bytes`) and `GET .../assets/{asset_id}`.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::extract::{ApiPath, read_body};
use crate::auth::{Dashboard, GameMember, Role};
use crate::error::{ApiResult, ErrorBody};
use crate::repo::{assets, games};
use crate::state::AppState;

/// A stored asset.
#[derive(Debug, Serialize, ToSchema)]
pub struct AssetInfo {
    /// Id to put in an item's `image`.
    pub asset_id: String,
    /// Detected type.
    pub content_type: String,
    /// Size in bytes.
    pub size: usize,
    /// Where it is served.
    pub url: String,
}

/// Uploads item art; the format is checked from the bytes, not the name or header.
#[utoipa::path(post, path = "/v1/games/{game_id}/assets", tag = "catalogue",
    params(("game_id" = Uuid, Path)),
    request_body(content = Vec<u8>, content_type = "image/png"),
    responses((status = 201, body = AssetInfo), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn upload_asset(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    body: Body,
) -> ApiResult<(StatusCode, Json<AssetInfo>)> {
    games::for_studio(&state, &caller.studio_id, game_id).await?;
    caller.require(Role::Developer)?;
    let bytes = read_body(body, state.settings.catalogue.max_asset_bytes).await?;
    let (asset_id, kind) = assets::put(&state, game_id, &bytes).await?;
    Ok((
        StatusCode::CREATED,
        Json(AssetInfo {
            url: assets::url(game_id, &asset_id),
            asset_id,
            content_type: kind.mime().to_owned(),
            size: bytes.len(),
        }),
    ))
}

/// Serves item art to the dashboard and the game's clients.
#[utoipa::path(get, path = "/v1/games/{game_id}/assets/{asset_id}", tag = "catalogue",
    params(("game_id" = Uuid, Path), ("asset_id" = String, Path)),
    responses((status = 200, content_type = "image/png", body = Vec<u8>),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn get_asset(
    State(state): State<AppState>,
    caller: GameMember,
    ApiPath((game_id, asset_id)): ApiPath<(Uuid, String)>,
) -> ApiResult<impl IntoResponse> {
    caller.check_game(game_id)?;
    games::for_studio(&state, caller.studio_id(), game_id).await?;
    let (kind, data) = assets::get(&state, game_id, &asset_id).await?;
    Ok((
        [
            (header::CONTENT_TYPE, kind.mime()),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        ],
        data,
    ))
}
