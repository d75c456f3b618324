//! Item art on the catalogue's item page: a developer uploads an image (multipart), the asset
//! service (`service/assets.rs`) checks and stores it as for the REST upload, and the item
//! names it; the page previews the art through this dashboard's own image route, which checks
//! the member's session and studio like every page.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use offer_domain::catalogue::ItemPatch;
use offer_domain::validation::FieldError;
use uuid::Uuid;

use super::access::{DashGame, Developer, Viewer};
use super::extract::PagePath;
use super::failure::PageError;
use super::item_page::item_page;
use super::session::CsrfMultipart;
use crate::service::{ServiceError, game::assets, game::items};
use crate::state::AppState;

/// `POST /dashboard/games/{game_id}/items/{item_id}/art` (developer): stores the `art` file
/// and sets it as the item's art.
pub async fn upload(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((game_id, item_id)): PagePath<(Uuid, String)>,
    mut upload: CsrfMultipart,
) -> Result<Response, PageError> {
    let art = upload.file("art").await?.map(|file| file.bytes);
    let refused = |why: String| vec![FieldError::new("art", why)];
    let max = state.services.settings.catalogue.max_asset_bytes;
    let errors = match art {
        None => refused("choose an image to upload".into()),
        Some(bytes) if bytes.is_empty() => refused("choose an image to upload".into()),
        Some(bytes) if bytes.len() > max => refused(format!("at most {max} bytes")),
        Some(bytes) => match assets::put(&state.services, game_id, &bytes).await {
            Ok((asset_id, _)) => {
                let patch = ItemPatch {
                    image: Some(asset_id),
                    ..ItemPatch::default()
                };
                match items::patch(&state.services, &at.user.by(), &at.game, &item_id, patch).await
                {
                    Ok(_) => {
                        return Ok(Redirect::to(&format!(
                            "/dashboard/games/{game_id}/items/{item_id}"
                        ))
                        .into_response());
                    }
                    Err(ServiceError::Validation(errors)) => errors,
                    Err(e) => return Err(e.into()),
                }
            }
            Err(ServiceError::Validation(errors)) => errors
                .into_iter()
                .map(|e| FieldError::new("art", e.reason))
                .collect(),
            Err(ServiceError::UnsupportedMediaType(why) | ServiceError::PayloadTooLarge(why)) => {
                refused(why)
            }
            Err(e) => return Err(e.into()),
        },
    };
    // The item's page again, with why the image was refused next to the upload.
    item_page(&at, &item_id, None, &errors)
}

/// `GET /dashboard/games/{game_id}/assets/{asset_id}`: an image of the game's library, for a
/// member of its studio.
pub async fn serve(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
    PagePath((_, asset_id)): PagePath<(Uuid, String)>,
) -> Result<Response, PageError> {
    let game_id = at.game_id();
    let (kind, data) = assets::get(&state.services, game_id, &asset_id).await?;
    Ok((
        [
            (header::CONTENT_TYPE, kind.mime()),
            (header::CACHE_CONTROL, "private, max-age=3600"),
        ],
        data,
    )
        .into_response())
}
