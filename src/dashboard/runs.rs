//! Authoring runs of a game: the list (mode, who opened it, whether a cloud run waits for
//! its confirmation, the calls and limits it took) and one run's page with its calls and,
//! for a cloud run not confirmed yet, the Confirm button (developer). Confirming goes
//! through the runs service as the REST confirm does: the member who approved the run's
//! authoring key cannot confirm it, and the refusal shows next to the button. The pages are
//! drawn by [`views::runs`](super::views::runs).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use uuid::Uuid;

use super::access::{DashGame, Developer, Viewer};
use super::extract::PagePath;
use super::failure::PageError;
use super::layout::Tab;
use super::session::{CsrfForm, NoFields};
use super::views::runs as views;
use crate::service::authoring::runs;
use crate::service::{ServiceError, Services};
use crate::state::AppState;

/// `GET /dashboard/games/{game_id}/custom-pages/runs`.
pub async fn list(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    let list = runs::list(&state.services, at.game_id()).await?;
    let body = views::list(at.game_id(), &list);
    Ok(at.page(StatusCode::OK, "Authoring runs", Tab::CustomPages, body))
}

/// A run's page, with why its confirmation was refused (a 409) when it was.
async fn run_page<R>(
    services: &Services,
    at: &DashGame<R>,
    run_id: Uuid,
    refused: Option<String>,
) -> Result<Response, PageError> {
    let game_id = at.game_id();
    let run = runs::get(services, game_id, run_id).await?;
    let body = views::page(&at.user, game_id, &run, refused.as_deref());
    let status = if refused.is_some() {
        StatusCode::CONFLICT
    } else {
        StatusCode::OK
    };
    Ok(at.page(status, "Authoring run", Tab::CustomPages, body))
}

/// `GET /dashboard/games/{game_id}/custom-pages/runs/{run_id}`.
pub async fn show(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
    PagePath((_, run_id)): PagePath<(Uuid, Uuid)>,
) -> Result<Response, PageError> {
    run_page(&state.services, &at, run_id, None).await
}

/// `POST /dashboard/games/{game_id}/custom-pages/runs/{run_id}/confirm` (developer, not the
/// member who approved the run's key).
pub async fn confirm(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((game_id, run_id)): PagePath<(Uuid, Uuid)>,
    _: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    match runs::confirm(&state.services, game_id, run_id, &at.user.caller).await {
        Ok(_) => Ok(Redirect::to(&format!("{}/{run_id}", views::path(game_id))).into_response()),
        Err(ServiceError::Conflict(why)) => run_page(&state.services, &at, run_id, Some(why)).await,
        Err(e) => Err(e.into()),
    }
}
