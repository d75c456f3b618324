//! The screenshots section of a custom page's version: its newest preview, with its PNG at
//! each phone size once built, where its build is before, why it failed after. The custom
//! page's page and the approval of a page show it; the PNGs are served by the route of
//! [`previews`](crate::dashboard::previews).

use maud::{Markup, html};
use uuid::Uuid;

use crate::service::authoring::previews::{Preview, Shot, Status};

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
