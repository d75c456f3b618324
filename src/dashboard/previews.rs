//! Custom-page preview screenshots in the dashboard: the route serving each PNG to members of
//! the game's studio (the section that shows them is [`views::shots`](super::views::shots)).
//! The previews service (`service/previews.rs`) builds and keeps them; a screenshot past its
//! expiry is a 404 here too.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

use super::access::{DashGame, Viewer};
use super::extract::PagePath;
use super::failure::PageError;
use crate::service::ServiceError;
use crate::service::authoring::previews::{self, Shot};
use crate::state::AppState;

/// `GET /dashboard/games/{game_id}/previews/{preview_id}/{size}`: one PNG of a preview of
/// the game, for a member of its studio (`size` is `<width>x<height>.png`).
pub async fn serve(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
    PagePath((_, preview_id, size)): PagePath<(Uuid, Uuid, String)>,
) -> Result<Response, PageError> {
    let shot = Shot::from_file_name(&size).ok_or(ServiceError::NotFound("screenshot"))?;
    let png = previews::screenshot(&state.services, at.game_id(), preview_id, shot).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/png"),
            // It expires: never kept past this answer.
            (header::CACHE_CONTROL, "private, no-store"),
        ],
        png,
    )
        .into_response())
}
