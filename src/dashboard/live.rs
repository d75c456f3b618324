//! Live: the kill switch (admin; a change takes a confirmation step on the server, so it works
//! without script), the SDK sessions this node holds for the game, and the decisions this node
//! served recently with their trace (why each higher level passed) and the silent shadow picks.
//! The pages are drawn by [`views::live`](super::views::live).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use offer_domain::validation::FieldError;
use serde::Deserialize;

use super::access::{Admin, DashGame, Viewer};
use super::failure::PageError;
use super::layout::Tab;
use super::session::CsrfForm;
use super::views::live::{self as views, Live};
use crate::service::{ServiceError, game::offer_config};
use crate::state::AppState;

/// Recent decisions shown.
const RECENT: usize = 20;

/// The live page, with the refusal of a kill-switch change when there is one.
async fn live_page<R>(
    state: &AppState,
    at: &DashGame<R>,
    errors: &[FieldError],
    status: StatusCode,
) -> Result<Response, PageError> {
    let game_id = at.game_id();
    let kill_switch = offer_config::kill_switch(&state.services, &at.game.view().game).await?;
    let mut sessions = 0usize;
    state
        .services
        .actors
        .for_each_session_of(game_id, |_| sessions += 1);
    let report = state.services.decisions.shadow_report(game_id, RECENT);
    let live = Live {
        kill_switch: &kill_switch,
        sessions,
        report: &report,
    };
    let body = views::page(&at.user, game_id, &live, errors);
    Ok(at.page(status, "Live", Tab::Live, body))
}

/// `GET /dashboard/games/{game_id}/live`.
pub async fn page(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    live_page(&state, &at, &[], StatusCode::OK).await
}

/// The kill-switch form; `confirmed` is set by the confirmation step's button.
#[derive(Debug, Deserialize)]
pub struct KillSwitchForm {
    level: u8,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    confirmed: Option<String>,
}

/// `POST /dashboard/games/{game_id}/kill-switch` (admin): first a page asking to confirm,
/// then, with `confirmed`, the change.
pub async fn kill_switch(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<KillSwitchForm>,
) -> Result<Response, PageError> {
    if form.confirmed.is_none() {
        let body = views::confirm(&at.user, &at.game.view().game, form.level, &form.reason);
        return Ok(at.page(StatusCode::OK, "Confirm", Tab::Live, body));
    }
    match offer_config::set_kill_switch(
        &state.services,
        &at.user.by(),
        &at.game,
        form.level,
        form.reason,
    )
    .await
    {
        Ok(_) => Ok(Redirect::to(&Tab::Live.href(at.game_id())).into_response()),
        Err(ServiceError::Validation(errors)) => {
            live_page(&state, &at, &errors, StatusCode::UNPROCESSABLE_ENTITY).await
        }
        Err(e) => Err(e.into()),
    }
}
