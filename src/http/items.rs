//! The catalogue endpoints: list, create, bulk upsert, patch and soft delete of items.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use offer_domain::catalogue::{Item, ItemInput, ItemPatch};
use offer_domain::schema::SnakeCaseId;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::access::{Developer, GameAccess};
use offer_wire::json::Lenient;

use super::callers::CatalogueReader;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::openapi::{
    AuthErrors, BatchBodyErrors, BodyErrors, Conflict, NotFound, QueryError, Unavailable,
};
use crate::error::{ApiError, ApiResult};
use crate::service::ServiceError;
use crate::service::access;
use crate::service::game::items::{self as repo, OnConflict};
use crate::state::AppState;

/// Largest page of `GET .../items`.
const MAX_PAGE: usize = 1000;

/// Query of `GET .../items`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Page size, 1 to 1000 (default 1000).
    #[param(minimum = 1, maximum = 1000)]
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
///
/// Besides the rules of each item (see `ItemInput`), an item id may appear once per call, and
/// a soft-deleted item is brought back only with `restore: true` (409 naming each one
/// otherwise). More than 500 items is a 413.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkBody {
    /// At most 500 items; every problem of every item is reported in one answer.
    #[schema(value_type = Vec<ItemInput>, max_items = 500)]
    pub items: Vec<Lenient<ItemInput>>,
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
    responses((status = 200, description = "A page of items", body = ItemPage),
        AuthErrors, QueryError, NotFound, Unavailable))]
pub async fn list_items(
    State(state): State<AppState>,
    CatalogueReader(caller): CatalogueReader,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<ListQuery>,
) -> ApiResult<Json<ItemPage>> {
    caller.check_game(game_id)?;
    let handle = access::for_studio(&state.services, caller.studio_id(), game_id).await?;
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

/// Adds one item (developer); an existing `item_id`, even a soft-deleted one, is a 409.
#[utoipa::path(post, path = "/v1/games/{game_id}/items", tag = "catalogue",
    params(("game_id" = Uuid, Path)), request_body = ItemInput,
    responses(
        (status = 201, description = "The new item, its value computed", body = Item, links(
            ("PatchItem" = (operation_id = "patch_item",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("item_id" = "$response.body#/item_id")),
                description = "Update the item just created")),
            ("DeleteItem" = (operation_id = "delete_item",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("item_id" = "$response.body#/item_id")),
                description = "Soft-delete the item just created")),
        )),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn create_item(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiJson(input): ApiJson<ItemInput>,
) -> ApiResult<(StatusCode, Json<Item>)> {
    let handle = access.game.clone();
    let mut out = repo::upsert(
        &state.services,
        &access.by(),
        &handle,
        vec![Ok(input)],
        OnConflict::Refuse,
    )
    .await?;
    let item = out
        .items
        .pop()
        .ok_or_else(|| ApiError::Service(ServiceError::Internal("created item missing".into())))?;
    Ok((StatusCode::CREATED, Json(item)))
}

/// Upserts up to 500 items, all or nothing (developer).
#[utoipa::path(post, path = "/v1/games/{game_id}/items/bulk", tag = "catalogue",
    params(("game_id" = Uuid, Path)), request_body = BulkBody,
    responses((status = 200, description = "What was created and updated", body = BulkResult),
        AuthErrors, BatchBodyErrors, NotFound, Conflict, Unavailable))]
pub async fn bulk_items(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiJson(body): ApiJson<BulkBody>,
) -> ApiResult<Json<BulkResult>> {
    let handle = access.game.clone();
    let entries = body.items.into_iter().map(|item| item.0).collect();
    let out = repo::upsert(
        &state.services,
        &access.by(),
        &handle,
        entries,
        OnConflict::Update,
    )
    .await?;
    Ok(Json(BulkResult {
        created: out.created,
        updated: out.updated,
        items: out.items,
    }))
}

/// Updates a live item (developer); `item_id` cannot change.
#[utoipa::path(patch, path = "/v1/games/{game_id}/items/{item_id}", tag = "catalogue",
    params(("game_id" = Uuid, Path), ("item_id" = SnakeCaseId, Path)), request_body = ItemPatch,
    responses((status = 200, description = "The updated item", body = Item),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn patch_item(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiPath((_, item_id)): ApiPath<(Uuid, String)>,
    ApiJson(patch): ApiJson<ItemPatch>,
) -> ApiResult<Json<Item>> {
    let handle = access.game.clone();
    Ok(Json(
        repo::patch(&state.services, &access.by(), &handle, &item_id, patch).await?,
    ))
}

/// Soft-deletes a live item (developer); it never appears in offers again.
#[utoipa::path(delete, path = "/v1/games/{game_id}/items/{item_id}", tag = "catalogue",
    params(("game_id" = Uuid, Path), ("item_id" = SnakeCaseId, Path)),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFound, Unavailable))]
pub async fn delete_item(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiPath((_, item_id)): ApiPath<(Uuid, String)>,
) -> ApiResult<StatusCode> {
    let handle = access.game.clone();
    repo::soft_delete(&state.services, &access.by(), &handle, &item_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
