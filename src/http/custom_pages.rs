//! Custom-page drafts: save a version, list a game's pages, list a page's versions, read one. The authoring key
//! of the game may call them, and so may the studio's dashboard users (developer or above
//! to save, viewer or above to read). Asking to publish a version is a dashboard user's
//! (developer or above) alone: it queues an approval, for a version that validates only.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::access::{AuthorAccess, Developer, GameAccess, Viewer};
use super::extract::{ApiJson, ApiPath, ApiQuery, AuthoringRun};
use super::openapi::{
    AuthErrors, DraftBodyErrors, NotFound, PublishBodyErrors, QueryError, RunConflict, Unavailable,
};
use super::runs::outcome;
use crate::error::ApiResult;
use crate::service::approval::publish_request;
use crate::service::authoring::custom_pages::{self, Draft, Page, Version, VersionInfo};
use crate::service::authoring::runs::{self, CallKind};
use crate::state::AppState;
use offer_domain::approval::Approval;
use offer_domain::custom_page::PageRef;

/// Body of `POST .../custom-pages/draft`.
///
/// The template is stored as written: this path checks its size only (at most 65536 bytes of
/// UTF-8, 413 beyond), and `POST .../custom-pages/validate` checks the rest. The bindings are
/// a JSON object of at most 16384 bytes (413 beyond). A `page_id` that is not a page of this
/// game is a 404.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DraftBody {
    /// The page to add a version to; absent, a new page is started.
    pub page_id: Option<Uuid>,
    /// The page's Dart source.
    pub template: String,
    /// What the template reads by name: `{"items": [item_id, ...], <name>: string | number}`.
    #[schema(value_type = Object)]
    pub bindings: Map<String, Value>,
}

/// A saved version.
#[derive(Debug, Serialize, ToSchema)]
pub struct DraftSaved {
    /// The page (new when the body named none).
    pub page_id: Uuid,
    /// The version just saved.
    pub version: u32,
}

/// A version as listed.
#[derive(Debug, Serialize, ToSchema)]
pub struct PageVersionInfo {
    /// 1 for the page's first save, then one more per save.
    #[schema(minimum = 1)]
    pub version: u32,
    /// When it was saved.
    pub created_at: DateTime<Utc>,
    /// Who saved it: a dashboard user's id, or `authoring_key:<key_id>`.
    pub created_by: String,
    /// Bytes of the template plus bytes of the bindings' JSON.
    pub size: usize,
}

impl From<VersionInfo> for PageVersionInfo {
    fn from(v: VersionInfo) -> Self {
        Self {
            version: v.version,
            created_at: v.created_at,
            created_by: v.created_by,
            size: v.size,
        }
    }
}

/// A page and its versions.
#[derive(Debug, Serialize, ToSchema)]
pub struct CustomPage {
    /// The page.
    pub page_id: Uuid,
    /// When its first version was saved.
    pub created_at: DateTime<Utc>,
    /// The newest version's number.
    pub latest_version: u32,
    /// Every version, oldest first.
    pub versions: Vec<PageVersionInfo>,
}

impl From<Page> for CustomPage {
    fn from(p: Page) -> Self {
        Self {
            page_id: p.page_id,
            created_at: p.created_at,
            latest_version: p.versions.last().map_or(0, |v| v.version),
            versions: p.versions.into_iter().map(Into::into).collect(),
        }
    }
}

/// One version with its content.
#[derive(Debug, Serialize, ToSchema)]
pub struct CustomPageVersion {
    /// The page.
    pub page_id: Uuid,
    /// Its number.
    pub version: u32,
    /// When it was saved.
    pub created_at: DateTime<Utc>,
    /// Who saved it: a dashboard user's id, or `authoring_key:<key_id>`.
    pub created_by: String,
    /// Bytes of the template plus bytes of the bindings' JSON.
    pub size: usize,
    /// The template as saved.
    pub template: String,
    /// The bindings as saved.
    #[schema(value_type = Object)]
    pub bindings: Map<String, Value>,
}

impl From<Version> for CustomPageVersion {
    fn from(v: Version) -> Self {
        Self {
            page_id: v.page_id,
            version: v.info.version,
            created_at: v.info.created_at,
            created_by: v.info.created_by,
            size: v.info.size,
            template: v.template,
            bindings: v.bindings,
        }
    }
}

/// Body of `POST .../custom-pages/{page_id}/publish-request`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PublishRequest {
    /// The saved version to publish once approved.
    #[schema(minimum = 1)]
    pub version: u32,
}

/// Saves a new version of a custom page, or the first of a new page (developer, or the
/// game's authoring key). Every save is a new immutable version. With `X-Authoring-Run`, the
/// save is recorded in that run (a cloud run must be confirmed first).
#[utoipa::path(post, path = "/v1/games/{game_id}/custom-pages/draft", tag = "custom pages",
    operation_id = "save_custom_page_draft",
    params(("game_id" = Uuid, Path), AuthoringRun), request_body = DraftBody,
    responses(
        (status = 201, description = "Saved: the page and the new version's number", body = DraftSaved, links(
            ("GetCustomPage" = (operation_id = "get_custom_page",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("page_id" = "$response.body#/page_id")),
                description = "The page's versions")),
            ("GetCustomPageVersion" = (operation_id = "get_custom_page_version",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("page_id" = "$response.body#/page_id"),
                    ("version" = "$response.body#/version")),
                description = "The version just saved")),
        )),
        AuthErrors, DraftBodyErrors, NotFound, RunConflict, Unavailable))]
pub async fn save_draft(
    State(state): State<AppState>,
    access: AuthorAccess<Developer>,
    AuthoringRun(run): AuthoringRun,
    ApiJson(body): ApiJson<DraftBody>,
) -> ApiResult<(StatusCode, Json<DraftSaved>)> {
    let services = &state.services;
    let game_id = access.game_id();
    let ticket = runs::begin_call(services, game_id, &access.caller, run, CallKind::Draft).await?;
    let draft = Draft {
        page_id: body.page_id,
        template: body.template,
        bindings: body.bindings,
    };
    let saved = custom_pages::save(services, game_id, runs::who(&access.caller), draft).await;
    if let Some(ticket) = ticket {
        let recorded = outcome(&saved, StatusCode::CREATED, |(page_id, version), o| {
            o.page_id = Some(*page_id);
            o.version = Some(*version);
        });
        runs::finish_call(services, ticket, recorded).await;
    }
    let (page_id, version) = saved?;
    Ok((StatusCode::CREATED, Json(DraftSaved { page_id, version })))
}

/// Asks to publish a saved version of a custom page (developer; never an authoring key):
/// queues a `custom_page` approval, and approving it publishes that version to every
/// connected client of the game. A version whose page would not fit one WebSocket frame
/// (`websocket.max_frame_bytes` less 256 bytes) is a 413. A version the validator blocks
/// (every gate of `POST .../custom-pages/validate`, against the game's live catalogue) is a
/// 422 `page_invalid` whose details are the validator's answer; nothing is queued.
#[utoipa::path(post, path = "/v1/games/{game_id}/custom-pages/{page_id}/publish-request",
    tag = "custom pages", operation_id = "request_custom_page_publish",
    params(("game_id" = Uuid, Path), ("page_id" = Uuid, Path)), request_body = PublishRequest,
    responses(
        (status = 201, description = "The pending approval", body = Approval, links(
            ("GetApproval" = (operation_id = "get_approval",
                parameters(("approval_id" = "$response.body#/approval_id")),
                description = "The approval")),
            ("Approve" = (operation_id = "approve",
                parameters(("approval_id" = "$response.body#/approval_id")),
                description = "Approve it: the version is published")),
        )),
        AuthErrors, PublishBodyErrors, NotFound, Unavailable))]
pub async fn request_publish(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    ApiPath((_, page_id)): ApiPath<(Uuid, Uuid)>,
    ApiJson(body): ApiJson<PublishRequest>,
) -> ApiResult<(StatusCode, Json<Approval>)> {
    let page = PageRef {
        page_id,
        version: body.version,
    };
    let approval =
        publish_request::request(&state.services, &access.by(), &access.game, page).await?;
    Ok((StatusCode::CREATED, Json(approval)))
}

/// A custom page and its versions, oldest first (viewer, or the game's authoring key).
#[utoipa::path(get, path = "/v1/games/{game_id}/custom-pages/{page_id}", tag = "custom pages",
    params(("game_id" = Uuid, Path), ("page_id" = Uuid, Path)),
    responses((status = 200, description = "The page's versions", body = CustomPage),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_custom_page(
    State(state): State<AppState>,
    access: AuthorAccess<Viewer>,
    ApiPath((_, page_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<CustomPage>> {
    let page = custom_pages::page(&state.services, access.game_id(), page_id).await?;
    Ok(Json(page.into()))
}

/// A game's custom pages.
#[derive(Debug, Serialize, ToSchema)]
pub struct CustomPageList {
    /// Every page with its versions, the most recently saved first.
    pub pages: Vec<CustomPage>,
}

/// Every custom page of a game with its versions, the most recently saved first (viewer, or
/// the game's authoring key).
#[utoipa::path(get, path = "/v1/games/{game_id}/custom-pages", tag = "custom pages",
    operation_id = "list_custom_pages",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The game's pages", body = CustomPageList),
        AuthErrors, NotFound, Unavailable))]
pub async fn list_custom_pages(
    State(state): State<AppState>,
    access: AuthorAccess<Viewer>,
) -> ApiResult<Json<CustomPageList>> {
    let pages = custom_pages::list(&state.services, access.game_id()).await?;
    Ok(Json(CustomPageList {
        pages: pages.into_iter().map(CustomPage::from).collect(),
    }))
}

/// The query of `GET .../custom-pages/draft`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DraftQuery {
    /// The page whose versions to list.
    pub page_id: Uuid,
}

/// A page's versions, named by query: the same answer as `GET .../custom-pages/{page_id}`,
/// at the draft path a page's versions are saved to (viewer, or the game's authoring key).
#[utoipa::path(get, path = "/v1/games/{game_id}/custom-pages/draft", tag = "custom pages",
    operation_id = "list_custom_page_drafts",
    params(("game_id" = Uuid, Path), DraftQuery),
    responses((status = 200, description = "The page's versions", body = CustomPage),
        AuthErrors, QueryError, NotFound, Unavailable))]
pub async fn list_drafts(
    State(state): State<AppState>,
    access: AuthorAccess<Viewer>,
    ApiQuery(q): ApiQuery<DraftQuery>,
) -> ApiResult<Json<CustomPage>> {
    let page = custom_pages::page(&state.services, access.game_id(), q.page_id).await?;
    Ok(Json(page.into()))
}

/// One version of a custom page with its template and bindings (viewer, or the game's
/// authoring key).
#[utoipa::path(get, path = "/v1/games/{game_id}/custom-pages/{page_id}/versions/{version}",
    tag = "custom pages",
    params(("game_id" = Uuid, Path), ("page_id" = Uuid, Path),
        ("version" = u32, Path, minimum = 1)),
    responses((status = 200, description = "The version", body = CustomPageVersion),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_custom_page_version(
    State(state): State<AppState>,
    access: AuthorAccess<Viewer>,
    ApiPath((_, page_id, version)): ApiPath<(Uuid, Uuid, u32)>,
) -> ApiResult<Json<CustomPageVersion>> {
    let version =
        custom_pages::version(&state.services, access.game_id(), page_id, version).await?;
    Ok(Json(version.into()))
}
