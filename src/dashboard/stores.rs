//! A game's store settings page: viewers read the settings and the notification URLs, an
//! admin saves them and rotates the Google Play token (the only one shown the token). The
//! form is read by [`forms::stores`](super::forms::stores) and drawn by
//! [`views::stores`](super::views::stores); every rule is the store settings service's.

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use offer_domain::store_settings::StoreSettings;
use offer_domain::validation::FieldError;

use super::access::{Admin, DashGame, Viewer};
use super::failure::PageError;
use super::forms::stores::StoresForm;
use super::layout::{Tab, status_of};
use super::session::{CsrfForm, NoFields};
use super::views::stores as views;
use crate::auth::Role;
use crate::service::{ServiceError, game::stores};
use crate::state::AppState;

/// The page, with what was typed and why it was refused when a save failed.
fn stores_page<R>(
    at: &DashGame<R>,
    state: &AppState,
    typed: Option<&StoresForm>,
    errors: &[FieldError],
) -> Response {
    let view = at.game.view();
    let settings: &StoreSettings = &view.stores;
    let urls = stores::notification_urls(
        &state.services.settings,
        at.game_id(),
        settings,
        at.user.can(Role::Admin),
    );
    let stored = StoresForm::of(settings);
    let body = views::page(
        &at.user,
        at.game_id(),
        settings,
        &views::Urls {
            app_store: &urls.app_store,
            google_play: urls.google_play.as_deref(),
        },
        typed.unwrap_or(&stored),
        errors,
    );
    at.page(status_of(errors), "Stores", Tab::Overview, body)
}

/// `GET /dashboard/games/{game_id}/stores`.
pub async fn show(at: DashGame<Viewer>, State(state): State<AppState>) -> Response {
    stores_page(&at, &state, None, &[])
}

/// `POST /dashboard/games/{game_id}/stores` (admin): saves the settings.
pub async fn save(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<StoresForm>,
) -> Result<Response, PageError> {
    let saved = match form.input() {
        Ok(input) => stores::put(&state.services, &at.user.by(), &at.game, input).await,
        Err(errors) => Err(ServiceError::Validation(errors)),
    };
    match saved {
        Ok(_) => Ok(Redirect::to(&href(&at)).into_response()),
        Err(ServiceError::Validation(errors)) => Ok(stores_page(&at, &state, Some(&form), &errors)),
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/games/{game_id}/stores/google-play-token` (admin).
pub async fn rotate(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    _: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    stores::rotate_google_play_token(&state.services, &at.user.by(), &at.game).await?;
    Ok(Redirect::to(&href(&at)).into_response())
}

/// The page's address.
fn href<R>(at: &DashGame<R>) -> String {
    format!("/dashboard/games/{}/stores", at.game_id())
}
