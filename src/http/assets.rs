//! The per-game asset library: `POST /v1/games/{game_id}/assets` (a raw PNG, JPEG or WebP
//! body up to `catalogue.max_asset_bytes`) and `GET .../assets/{asset_id}`.

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::Serialize;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

use super::access::{Developer, GameAccess};
use super::callers::AnyGameCaller;
use super::extract::{ApiPath, read_body};
use super::openapi::{
    AuthErrors, Invalid, MediaError, NotFound, Unauthenticated, Unavailable, UploadTooLarge,
};
use crate::error::ApiResult;
use crate::service::{access, game::assets};
use crate::state::AppState;

/// The bytes of an image file, sent or served as the body itself.
pub struct ImageFile;

impl PartialSchema for ImageFile {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .description(Some(
                "A whole PNG, JPEG or WebP image; its kind is read from its bytes, whatever the \
                 Content-Type says.",
            ))
            .into()
    }
}

impl ToSchema for ImageFile {}

/// A stored asset.
#[derive(Debug, Serialize, ToSchema)]
pub struct AssetInfo {
    /// Id to put in an item's `image`: 24 lowercase hex digits.
    #[schema(pattern = "^[0-9a-f]{24}$")]
    pub asset_id: String,
    /// Detected type.
    pub content_type: String,
    /// Size in bytes.
    pub size: usize,
    /// Where it is served.
    pub url: String,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Uploads item art (developer); the format is checked by decoding the whole image, not from
/// the name or header. An image wider or taller than `catalogue.max_image_side_px` is a 422.
#[utoipa::path(post, path = "/v1/games/{game_id}/assets", tag = "catalogue",
    params(("game_id" = Uuid, Path)),
    request_body(content(
        (inline(ImageFile) = "image/png"),
        (inline(ImageFile) = "image/jpeg"),
        (inline(ImageFile) = "image/webp"),
    )),
    responses((status = 201, description = "The stored asset", body = AssetInfo),
        AuthErrors, NotFound, UploadTooLarge, MediaError, Invalid, Unavailable))]
pub async fn upload_asset(
    State(state): State<AppState>,
    access: GameAccess<Developer>,
    body: Body,
) -> ApiResult<(StatusCode, Json<AssetInfo>)> {
    let game_id = access.game_id();
    let bytes = read_body(body, state.services.settings.catalogue.max_asset_bytes).await?;
    let (asset_id, image) = assets::put(&state.services, game_id, &bytes).await?;
    Ok((
        StatusCode::CREATED,
        Json(AssetInfo {
            url: assets::url(game_id, &asset_id),
            asset_id,
            content_type: image.kind.mime().to_owned(),
            size: bytes.len(),
            width: image.width,
            height: image.height,
        }),
    ))
}

/// Serves item art to the dashboard and the game's clients (any credential of the game).
#[utoipa::path(get, path = "/v1/games/{game_id}/assets/{asset_id}", tag = "catalogue",
    params(("game_id" = Uuid, Path),
        ("asset_id" = String, Path, pattern = "^[0-9a-f]{24}$",
            description = "An asset id: 24 lowercase hex digits")),
    responses(
        (status = 200, description = "The image, as uploaded", content(
            (inline(ImageFile) = "image/png"),
            (inline(ImageFile) = "image/jpeg"),
            (inline(ImageFile) = "image/webp"),
        )),
        Unauthenticated, NotFound, Unavailable))]
pub async fn get_asset(
    State(state): State<AppState>,
    AnyGameCaller(caller): AnyGameCaller,
    ApiPath((game_id, asset_id)): ApiPath<(Uuid, String)>,
) -> ApiResult<impl IntoResponse> {
    caller.check_game(game_id)?;
    access::for_studio(&state.services, caller.studio_id(), game_id).await?;
    let (kind, data) = assets::get(&state.services, game_id, &asset_id).await?;
    Ok((
        [
            (header::CONTENT_TYPE, kind.mime()),
            (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            // Served as the image it is, never sniffed into anything else, and inert if
            // opened as a page.
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; sandbox",
            ),
        ],
        data,
    ))
}
