//! Games: the studio's list and the create form (name, genre, currencies, up to 20 inline
//! items), and a game's overview: genre, quadrant, guardrails and the mode with its promotion
//! Shadow -> Assisted -> Autonomous. Every rule is the service's (`service/games.rs`); a
//! refusal is shown next to its field. The pages are drawn by
//! [`views::games`](super::views::games).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use offer_domain::game::Mode;
use offer_domain::validation::FieldError;
use serde::Deserialize;

use super::access::{Admin, DashGame, Developer, Member, Viewer};
use super::failure::PageError;
use super::forms::game::{CreateForm, GuardrailsForm};
use super::layout::{self, Tab, status_of};
use super::session::{CsrfForm, SignedIn};
use super::views::games as views;
use crate::service::ServiceError;
use crate::service::game::games;
use crate::state::AppState;

/// The list of the studio's games, with the create form as typed and why it was refused.
async fn list_page(
    state: &AppState,
    user: &SignedIn,
    typed: &CreateForm,
    errors: &[FieldError],
) -> Result<Response, PageError> {
    let (list, _) = games::list(&state.services, &user.caller.studio_id, None, usize::MAX).await?;
    let mut genres: Vec<&String> = state.services.genres.keys().collect();
    genres.sort();
    let body = views::list(user, &list, &genres, typed, errors);
    Ok((status_of(errors), layout::page(user, "Games", None, body)).into_response())
}

/// `GET /dashboard/games`.
pub async fn list(State(state): State<AppState>, user: SignedIn) -> Result<Response, PageError> {
    list_page(&state, &user, &CreateForm::default(), &[]).await
}

/// `POST /dashboard/games` (developer).
pub async fn create(
    Member { user, .. }: Member<Developer>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<CreateForm>,
) -> Result<Response, PageError> {
    let new = match form.new_game() {
        Ok(new) => new,
        Err(errors) => return list_page(&state, &user, &form, &errors).await,
    };
    match games::create(&state.services, &user.by(), &user.caller.studio_id, new).await {
        Ok(handle) => {
            Ok(Redirect::to(&Tab::Overview.href(handle.view().game.game_id)).into_response())
        }
        Err(ServiceError::Validation(errors) | ServiceError::Conflicts(errors)) => {
            list_page(&state, &user, &form, &errors).await
        }
        Err(e) => Err(e.into()),
    }
}

/// The game's overview, with the service's refusal of a write when there is one.
fn show_page<R>(
    at: &DashGame<R>,
    errors: &[FieldError],
    problem: Option<&str>,
    status: StatusCode,
) -> Response {
    let view = at.game.view();
    let quadrant = serde_json::to_value(view.snapshot.quadrant())
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let body = maud::html! {
        (views::overview(&at.user, &view.game, &quadrant, errors, problem))
        (super::views::stores::summary(view.game.game_id, &view.stores))
    };
    at.page(status, &view.game.name, Tab::Overview, body)
}

/// Where a write from the game page goes next: back to the page when the service saved it,
/// the page again with the service's field errors (422) when it refused the fields.
fn after_write<R, T>(
    at: &DashGame<R>,
    result: Result<T, ServiceError>,
) -> Result<Response, PageError> {
    match result {
        Ok(_) => Ok(Redirect::to(&Tab::Overview.href(at.game_id())).into_response()),
        Err(ServiceError::Validation(errors)) => Ok(show_page(
            at,
            &errors,
            None,
            StatusCode::UNPROCESSABLE_ENTITY,
        )),
        Err(e) => Err(e.into()),
    }
}

/// `GET /dashboard/games/{game_id}`.
pub async fn show(at: DashGame<Viewer>) -> Response {
    show_page(&at, &[], None, StatusCode::OK)
}

/// The mode form.
#[derive(Debug, Deserialize)]
pub struct ModeForm {
    mode: Mode,
}

/// `POST /dashboard/games/{game_id}/mode` (admin).
pub async fn set_mode(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<ModeForm>,
) -> Result<Response, PageError> {
    match games::set_mode(&state.services, &at.user.by(), &at.game, form.mode).await {
        Err(ServiceError::Conflict(why)) => {
            Ok(show_page(&at, &[], Some(&why), StatusCode::CONFLICT))
        }
        result => after_write(&at, result),
    }
}

/// `POST /dashboard/games/{game_id}/guardrails` (developer).
pub async fn set_guardrails(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<GuardrailsForm>,
) -> Result<Response, PageError> {
    let patch = match form.patch() {
        Ok(patch) => patch,
        Err(errors) => {
            return Ok(show_page(
                &at,
                &errors,
                None,
                StatusCode::UNPROCESSABLE_ENTITY,
            ));
        }
    };
    let result = games::patch_guardrails(&state.services, &at.user.by(), &at.game, patch).await;
    after_write(&at, result)
}
