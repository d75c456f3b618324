//! Custom-page previews: `POST .../custom-pages/preview` queues a build of a saved version,
//! `GET .../custom-pages/preview/{preview_id}` tells where it is, and
//! `GET .../preview/{preview_id}/screenshots/{size}` serves each PNG. The game's authoring
//! key may call all three, and so may the studio's dashboard users (developer or above to
//! request a preview, viewer or above to read one).

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

use super::access::{AuthorAccess, Developer, Viewer};
use super::callers::GameCaller;
use super::extract::{ApiJson, ApiPath, AuthoringRun};
use super::openapi::{
    AuthErrors, BodyErrors, NotFound, PreviewShareFull, PreviewUnavailable, RunConflict,
    Unavailable,
};
use super::runs::outcome;
use crate::error::ApiResult;
use crate::service::ServiceError;
use crate::service::authoring::previews::{self, Preview, Requester, Shot, Status};
use crate::service::authoring::runs::{self, CallKind};
use crate::state::AppState;

/// A PNG image, served as the body itself.
pub struct PngFile;

impl PartialSchema for PngFile {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .description(Some("A PNG image of the screenshot's width and height."))
            .into()
    }
}

impl ToSchema for PngFile {}

/// Body of `POST .../custom-pages/preview`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewBody {
    /// The page to preview.
    pub page_id: Uuid,
    /// Its saved version to render.
    #[schema(minimum = 1)]
    pub version: u32,
}

/// A queued preview.
#[derive(Debug, Serialize, ToSchema)]
pub struct PreviewQueued {
    /// Poll it at `GET .../custom-pages/preview/{preview_id}`.
    pub preview_id: Uuid,
}

/// Where a preview's build is.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PreviewStatus {
    /// Waiting for a worker.
    Queued,
    /// Being rendered.
    Building,
    /// Its screenshots are served.
    Ready,
    /// The page could not be rendered; `error` says why.
    Failed,
}

impl From<Status> for PreviewStatus {
    fn from(s: Status) -> Self {
        match s {
            Status::Queued => Self::Queued,
            Status::Building => Self::Building,
            Status::Ready => Self::Ready,
            Status::Failed => Self::Failed,
        }
    }
}

/// One screenshot of a ready preview.
#[derive(Debug, Serialize, ToSchema)]
pub struct Screenshot {
    /// Where the PNG is served (the same credentials as the preview).
    pub url: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// A preview.
#[derive(Debug, Serialize, ToSchema)]
pub struct PreviewState {
    /// The preview.
    pub preview_id: Uuid,
    /// The page previewed.
    pub page_id: Uuid,
    /// Its version.
    pub version: u32,
    /// Where the build is.
    pub status: PreviewStatus,
    /// One PNG per phone size (1080x1920 and 1170x2532) once `ready`; empty before and on
    /// failure.
    pub screenshots: Vec<Screenshot>,
    /// When the preview and its screenshots are gone (404 from then on): the build's end
    /// plus `authoring.screenshot_ttl_s` (24 hours by default), or, while the build has not
    /// ended, the latest the preview is kept.
    pub expires_at: DateTime<Utc>,
    /// Why the build failed (a template that does not parse, with its line; a bound item
    /// that is not live; a page over the render budget, naming the limit): only when
    /// `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PreviewState {
    fn of(game_id: Uuid, p: Preview) -> Self {
        let screenshots = p
            .screenshots
            .iter()
            .map(|s| Screenshot {
                url: format!(
                    "/v1/games/{game_id}/custom-pages/preview/{}/screenshots/{}",
                    p.preview_id,
                    s.file_name()
                ),
                width: s.width,
                height: s.height,
            })
            .collect();
        Self {
            preview_id: p.preview_id,
            page_id: p.page_id,
            version: p.version,
            status: p.status.into(),
            screenshots,
            expires_at: p.expires_at,
            error: p.error,
        }
    }
}

/// Queues a preview of a saved version of a custom page (developer, or the game's authoring
/// key): rendered to PNG at two phone sizes with the bound items' names, prices, amounts
/// and art, within the render budget (a page over it fails, `error` naming the limit). Poll
/// the preview until it is `ready` or `failed`. When the game or the caller already has its
/// share of this node's build queue queued or building, the answer is 429
/// `preview_share_full`; when the queue is full, 503 `preview_queue_full`; both with
/// `Retry-After`. With
/// `X-Authoring-Run`, the request is recorded in that run (a cloud run must be confirmed
/// first).
#[utoipa::path(post, path = "/v1/games/{game_id}/custom-pages/preview", tag = "custom pages",
    operation_id = "request_custom_page_preview",
    params(("game_id" = Uuid, Path), AuthoringRun), request_body = PreviewBody,
    responses(
        (status = 202, description = "Queued: poll the preview", body = PreviewQueued, links(
            ("GetPreview" = (operation_id = "get_custom_page_preview",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("preview_id" = "$response.body#/preview_id")),
                description = "Where the build is")),
        )),
        AuthErrors, BodyErrors, NotFound, RunConflict, PreviewShareFull, PreviewUnavailable))]
pub async fn request_preview(
    State(state): State<AppState>,
    access: AuthorAccess<Developer>,
    AuthoringRun(run): AuthoringRun,
    ApiJson(body): ApiJson<PreviewBody>,
) -> ApiResult<(StatusCode, Json<PreviewQueued>)> {
    let services = &state.services;
    let game_id = access.game_id();
    let ticket =
        runs::begin_call(services, game_id, &access.caller, run, CallKind::Preview).await?;
    let requester = match &access.caller {
        GameCaller::Key(key) => Requester::Key(key.key_id),
        GameCaller::Dashboard(user) => Requester::User(user.sub.clone()),
    };
    let queued =
        previews::submit(services, access.game, requester, body.page_id, body.version).await;
    if let Some(ticket) = ticket {
        let recorded = outcome(&queued, StatusCode::ACCEPTED, |preview_id, o| {
            o.page_id = Some(body.page_id);
            o.version = Some(body.version);
            o.preview_id = Some(*preview_id);
        });
        runs::finish_call(services, ticket, recorded).await;
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(PreviewQueued {
            preview_id: queued?,
        }),
    ))
}

/// A preview: its status and, once ready, its screenshots (viewer, or the game's authoring
/// key). 404 once it has expired.
#[utoipa::path(get, path = "/v1/games/{game_id}/custom-pages/preview/{preview_id}",
    tag = "custom pages", operation_id = "get_custom_page_preview",
    params(("game_id" = Uuid, Path), ("preview_id" = Uuid, Path)),
    responses((status = 200, description = "The preview", body = PreviewState),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_preview(
    State(state): State<AppState>,
    access: AuthorAccess<Viewer>,
    ApiPath((_, preview_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<PreviewState>> {
    let game_id = access.game_id();
    let preview = previews::get(&state.services, game_id, preview_id).await?;
    Ok(Json(PreviewState::of(game_id, preview)))
}

/// One screenshot of a ready preview, as listed in its `screenshots` (viewer, or the game's
/// authoring key). 404 once the preview has expired.
#[utoipa::path(get,
    path = "/v1/games/{game_id}/custom-pages/preview/{preview_id}/screenshots/{size}",
    tag = "custom pages",
    params(("game_id" = Uuid, Path), ("preview_id" = Uuid, Path),
        ("size" = String, Path, pattern = "^[0-9]+x[0-9]+\\.png$",
            description = "`<width>x<height>.png`, as in the preview's screenshot URLs")),
    responses(
        (status = 200, description = "The screenshot", content((inline(PngFile) = "image/png"))),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_screenshot(
    State(state): State<AppState>,
    access: AuthorAccess<Viewer>,
    ApiPath((_, preview_id, size)): ApiPath<(Uuid, Uuid, String)>,
) -> ApiResult<impl IntoResponse> {
    let shot = Shot::from_file_name(&size).ok_or(ServiceError::NotFound("screenshot"))?;
    let png = previews::screenshot(&state.services, access.game_id(), preview_id, shot).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/png"),
            // It expires: never kept past this answer.
            (header::CACHE_CONTROL, "private, no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; sandbox",
            ),
        ],
        png,
    ))
}
