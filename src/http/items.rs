//! The catalogue endpoints of spec 4.1.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use offer_domain::catalogue::{Item, ItemInput, ItemPatch};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::extract::{ApiJson, ApiPath, ApiQuery};
use crate::auth::{CatalogueReader, Dashboard, Role};
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::repo::games;
use crate::repo::items::{self as repo, OnConflict};
use crate::state::AppState;

/// Largest page of `GET .../items`.
const MAX_PAGE: usize = 1000;

/// Query of `GET .../items`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Page size, 1 to 1000 (default 1000).
    pub limit: Option<usize>,
    /// `next_cursor` of the previous page.
    pub cursor: Option<String>,
    /// Include soft-deleted items.
    #[serde(default)]
    pub include_deleted: bool,
}

/// A page of items.
#[derive(Debug, Serialize, ToSchema)]
pub struct ItemPage {
    /// Items ordered by `item_id`.
    pub items: Vec<Item>,
    /// Pass as `cursor` for the next page; `null` on the last.
    pub next_cursor: Option<String>,
}

/// Body of the bulk upsert.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkBody {
    /// At most 500 items.
    pub items: Vec<ItemInput>,
}

/// Answer of the bulk upsert.
#[derive(Debug, Serialize, ToSchema)]
pub struct BulkResult {
    /// Items that were new.
    pub created: usize,
    /// Items that existed and were updated.
    pub updated: usize,
    /// The written items, in request order.
    pub items: Vec<Item>,
}

/// Lists the catalogue (dashboard, or the game's authoring key).
#[utoipa::path(get, path = "/v1/games/{game_id}/items", tag = "catalogue",
    params(("game_id" = Uuid, Path), ListQuery),
    responses((status = 200, body = ItemPage), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn list_items(
    State(state): State<AppState>,
    caller: CatalogueReader,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<ItemPage>> {
    caller.check_game(game_id)?;
    let handle = games::for_studio(&state, caller.studio_id(), game_id).await?;
    let limit = q.limit.unwrap_or(MAX_PAGE);
    if !(1..=MAX_PAGE).contains(&limit) {
        return Err(ApiError::BadRequest(format!(
            "limit must be between 1 and {MAX_PAGE}"
        )));
    }
    let view = handle.view();
    let mut page: Vec<Item> = view
        .items
        .iter()
        .filter(|i| q.include_deleted || i.is_live())
        .filter(|i| q.cursor.as_deref().is_none_or(|c| i.item_id.as_str() > c))
        .take(limit + 1)
        .cloned()
        .collect();
    let next_cursor = if page.len() > limit {
        page.truncate(limit);
        page.last().map(|i| i.item_id.clone())
    } else {
        None
    };
    Ok(Json(ItemPage {
        items: page,
        next_cursor,
    }))
}

/// Adds one item; an existing `item_id` is a 409.
#[utoipa::path(post, path = "/v1/games/{game_id}/items", tag = "catalogue",
    params(("game_id" = Uuid, Path)), request_body = ItemInput,
    responses((status = 201, body = Item), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn create_item(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(input): ApiJson<ItemInput>,
) -> ApiResult<(StatusCode, Json<Item>)> {
    let handle = games::for_studio(&state, &caller.studio_id, game_id).await?;
    caller.require(Role::Developer)?;
    let mut out = repo::upsert(&state, &handle, vec![input], OnConflict::Refuse).await?;
    let item = out
        .items
        .pop()
        .ok_or_else(|| ApiError::Internal("created item missing".into()))?;
    Ok((StatusCode::CREATED, Json(item)))
}

/// Upserts up to 500 items, all or nothing.
#[utoipa::path(post, path = "/v1/games/{game_id}/items/bulk", tag = "catalogue",
    params(("game_id" = Uuid, Path)), request_body = BulkBody,
    responses((status = 200, body = BulkResult), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 413, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn bulk_items(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<BulkBody>,
) -> ApiResult<Json<BulkResult>> {
    let handle = games::for_studio(&state, &caller.studio_id, game_id).await?;
    caller.require(Role::Developer)?;
    let out = repo::upsert(&state, &handle, body.items, OnConflict::Update).await?;
    Ok(Json(BulkResult {
        created: out.created,
        updated: out.updated,
        items: out.items,
    }))
}

/// Updates an item; `item_id` cannot change.
#[utoipa::path(patch, path = "/v1/games/{game_id}/items/{item_id}", tag = "catalogue",
    params(("game_id" = Uuid, Path), ("item_id" = String, Path)), request_body = ItemPatch,
    responses((status = 200, body = Item), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn patch_item(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath((game_id, item_id)): ApiPath<(Uuid, String)>,
    ApiJson(patch): ApiJson<ItemPatch>,
) -> ApiResult<Json<Item>> {
    let handle = games::for_studio(&state, &caller.studio_id, game_id).await?;
    caller.require(Role::Developer)?;
    Ok(Json(repo::patch(&state, &handle, &item_id, patch).await?))
}

/// Soft-deletes an item.
#[utoipa::path(delete, path = "/v1/games/{game_id}/items/{item_id}", tag = "catalogue",
    params(("game_id" = Uuid, Path), ("item_id" = String, Path)),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn delete_item(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath((game_id, item_id)): ApiPath<(Uuid, String)>,
) -> ApiResult<StatusCode> {
    let handle = games::for_studio(&state, &caller.studio_id, game_id).await?;
    caller.require(Role::Developer)?;
    repo::soft_delete(&state, &handle, &item_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
