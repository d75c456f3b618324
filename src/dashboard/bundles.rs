//! A game's L3 bundles: create one (from the form on the offers page), a bundle's own page
//! with the form that edits it, and delete. The form is read by
//! [`forms::bundle`](super::forms::bundle) and drawn by [`views::bundle`];
//! the offer configuration service checks every item against the live catalogue.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use offer_domain::validation::FieldError;
use uuid::Uuid;

use super::access::{DashGame, Developer, Viewer};
use super::extract::PagePath;
use super::failure::PageError;
use super::forms::bundle::BundleForm;
use super::layout::{Tab, status_of};
use super::session::{CsrfForm, NoFields};
use super::views;
use super::views::offers::Refused;
use crate::service::{ServiceError, game::offer_config};
use crate::state::AppState;

/// `POST /dashboard/games/{game_id}/offers/bundles` (developer): a new bundle.
pub async fn create(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    CsrfForm { form, .. }: CsrfForm<BundleForm>,
) -> Result<Response, PageError> {
    let saved = match form.bundle(Uuid::new_v4()) {
        Ok(bundle) => {
            offer_config::put_bundle(&state.services, &at.user.by(), &at.game, bundle).await
        }
        Err(errors) => Err(ServiceError::Validation(errors)),
    };
    match saved {
        Ok(_) => Ok(Redirect::to(&Tab::Offers.href(at.game_id())).into_response()),
        Err(ServiceError::Validation(errors) | ServiceError::Conflicts(errors)) => {
            let refused = Refused::Bundle(&form, errors);
            let body = views::offers::page(&at.user, &at.game.view(), Some(&refused));
            Ok(at.page(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Offers",
                Tab::Offers,
                body,
            ))
        }
        Err(e) => Err(e.into()),
    }
}

/// A bundle's page, with what was typed and why it was refused when a save failed (a 422).
fn bundle_page<R>(
    at: &DashGame<R>,
    bundle_id: Uuid,
    typed: Option<&BundleForm>,
    errors: &[FieldError],
) -> Result<Response, PageError> {
    let view = at.game.view();
    let bundle = view
        .bundles
        .iter()
        .find(|b| b.bundle_id == bundle_id)
        .ok_or(ServiceError::NotFound("bundle"))?;
    let stored = BundleForm::of(bundle);
    let typed = typed.unwrap_or(&stored);
    let body = views::bundle::page(&at.user, at.game_id(), bundle, typed, errors);
    Ok(at.page(status_of(errors), &bundle.name, Tab::Offers, body))
}

/// `GET /dashboard/games/{game_id}/offers/bundles/{bundle_id}`.
pub async fn show(
    at: DashGame<Viewer>,
    PagePath((_, bundle_id)): PagePath<(Uuid, Uuid)>,
) -> Result<Response, PageError> {
    bundle_page(&at, bundle_id, None, &[])
}

/// `POST /dashboard/games/{game_id}/offers/bundles/{bundle_id}` (developer): saves the edit.
pub async fn edit(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((game_id, bundle_id)): PagePath<(Uuid, Uuid)>,
    CsrfForm { form, .. }: CsrfForm<BundleForm>,
) -> Result<Response, PageError> {
    if !at
        .game
        .view()
        .bundles
        .iter()
        .any(|b| b.bundle_id == bundle_id)
    {
        return Err(ServiceError::NotFound("bundle").into());
    }
    let saved = match form.bundle(bundle_id) {
        Ok(bundle) => {
            offer_config::put_bundle(&state.services, &at.user.by(), &at.game, bundle).await
        }
        Err(errors) => Err(ServiceError::Validation(errors)),
    };
    match saved {
        Ok(_) => Ok(Redirect::to(&format!(
            "/dashboard/games/{game_id}/offers/bundles/{bundle_id}"
        ))
        .into_response()),
        Err(ServiceError::Validation(errors) | ServiceError::Conflicts(errors)) => {
            bundle_page(&at, bundle_id, Some(&form), &errors)
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/games/{game_id}/offers/bundles/{bundle_id}/delete` (developer).
pub async fn delete(
    at: DashGame<Developer>,
    State(state): State<AppState>,
    PagePath((_, bundle_id)): PagePath<(Uuid, Uuid)>,
    _: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    offer_config::delete_bundle(&state.services, &at.user.by(), &at.game, bundle_id).await?;
    Ok(Redirect::to(&Tab::Offers.href(at.game_id())).into_response())
}
