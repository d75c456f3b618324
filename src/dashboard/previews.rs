//! Custom-page preview screenshots in the dashboard: the section showing a version's newest
//! preview (its PNG at each phone size once built, where its build is before, why it failed
//! after), shared by the custom page's page and the approval of a page, and the route serving
//! each PNG to members of the game's studio. The previews service (`service/previews.rs`)
//! builds and keeps them; a screenshot past its expiry is a 404 here too.

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use uuid::Uuid;

use super::extract::PagePath;
use super::failure::PageError;
use super::games::game_of;
use super::session::SignedIn;
use crate::service::ServiceError;
use crate::service::previews::{self, Preview, Shot, Status};
use crate::state::AppState;

/// Where the dashboard serves one screenshot of a preview of `game_id`.
fn screenshot_path(game_id: Uuid, preview_id: Uuid, shot: Shot) -> String {
    format!(
        "/dashboard/games/{game_id}/previews/{preview_id}/{}",
        shot.file_name()
    )
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Queued => "queued",
        Status::Building => "building",
        Status::Ready => "ready",
        Status::Failed => "failed",
    }
}

/// The newest preview of a version, or that it has none: its screenshots once ready, shown
/// at a quarter of their size and linked to the full PNG.
pub fn shots(game_id: Uuid, preview: Option<&Preview>) -> Markup {
    html! {
        @match preview {
            None => { p.muted #preview-state { "No preview of this version yet (or it expired)." } }
            Some(p) => {
                p #preview-state data-status=(status_name(p.status)) {
                    "Preview " (status_name(p.status))
                    @if p.status == Status::Ready {
                        ", kept until " (p.expires_at.format("%Y-%m-%d %H:%M")) " UTC"
                    }
                    @if matches!(p.status, Status::Queued | Status::Building) {
                        ": " a href="" { "reload" } " to see it once built"
                    }
                }
                @if let Some(error) = &p.error { p.error role="alert" { (error) } }
                @if !p.screenshots.is_empty() {
                    div.shots {
                        @for shot in &p.screenshots {
                            figure {
                                a href=(screenshot_path(game_id, p.preview_id, *shot)) {
                                    img src=(screenshot_path(game_id, p.preview_id, *shot))
                                        width=(shot.width / 4) height=(shot.height / 4)
                                        alt={ "The page at " (shot.width) " by " (shot.height) };
                                }
                                figcaption { (shot.width) " × " (shot.height) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `GET /dashboard/games/{game_id}/previews/{preview_id}/{size}`: one PNG of a preview of
/// the game, for a member of its studio (`size` is `<width>x<height>.png`).
pub async fn serve(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath((game_id, preview_id, size)): PagePath<(Uuid, Uuid, String)>,
) -> Result<Response, PageError> {
    game_of(&state.services, &user, game_id).await?;
    let shot = Shot::from_file_name(&size).ok_or(ServiceError::NotFound("screenshot"))?;
    let png = previews::screenshot(&state.services, game_id, preview_id, shot).await?;
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
