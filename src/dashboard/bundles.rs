//! A game's L3 bundles: create one (from the form on the offers page), a bundle's own page
//! with the form that edits it, and delete. The form is
//! [`views::bundle_form`](super::views::bundle_form); the offer configuration service checks
//! every item against the live catalogue.

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use maud::html;
use offer_domain::validation::FieldError;
use uuid::Uuid;

use super::extract::PagePath;
use super::failure::PageError;
use super::layout::{self, Tab, csrf};
use super::session::{CsrfForm, NoFields, SignedIn, game_of};
use super::views::bundle_form::{BundleForm, form};
use super::views::offers::{Refused, offers_page};
use crate::auth::Role;
use crate::service::{ServiceError, game::offer_config};
use crate::state::AppState;

/// `POST /dashboard/games/{game_id}/offers/bundles` (developer): a new bundle.
pub async fn create(
    State(state): State<AppState>,
    PagePath(game_id): PagePath<Uuid>,
    CsrfForm { user, form }: CsrfForm<BundleForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    let saved = match form.bundle(Uuid::new_v4()) {
        Ok(bundle) => offer_config::put_bundle(&state.services, &handle, bundle).await,
        Err(errors) => Err(ServiceError::Validation(errors)),
    };
    match saved {
        Ok(_) => Ok(Redirect::to(&format!("/dashboard/games/{game_id}/offers")).into_response()),
        Err(ServiceError::Validation(errors)) => {
            offers_page(&state, &user, game_id, Some(Refused::Bundle(&form, errors))).await
        }
        Err(e) => Err(e.into()),
    }
}

async fn bundle_page(
    state: &AppState,
    user: &SignedIn,
    game_id: Uuid,
    bundle_id: Uuid,
    typed: Option<&BundleForm>,
    errors: &[FieldError],
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, user, game_id).await?;
    let view = handle.view();
    let bundle = view
        .bundles
        .iter()
        .find(|b| b.bundle_id == bundle_id)
        .ok_or(ServiceError::NotFound("bundle"))?;
    let stored = BundleForm::of(bundle);
    let typed = typed.unwrap_or(&stored);
    let base = format!("/dashboard/games/{game_id}/offers/bundles/{bundle_id}");
    let body = html! {
        h1 { (bundle.name) }
        p { "Items: " (bundle.item_ids.join(", ")) " · price " (format!("${:.2}", bundle.price_usd)) }
        @if user.can(Role::Developer) {
            (form(user, &base, "Save bundle", typed, errors))
            form method="post" action={ (base) "/delete" } data-confirm="Delete this bundle? It is never offered again." {
                (csrf(user))
                button.danger type="submit" { "Delete bundle" }
            }
        }
        p { a href={ "/dashboard/games/" (game_id) "/offers" } { "Back to the offers" } }
    };
    let status = if errors.is_empty() {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok(layout::game_page(
        status,
        user,
        &bundle.name,
        (&view.game, Tab::Offers),
        body,
    ))
}

/// `GET /dashboard/games/{game_id}/offers/bundles/{bundle_id}`.
pub async fn show(
    State(state): State<AppState>,
    user: SignedIn,
    PagePath((game_id, bundle_id)): PagePath<(Uuid, Uuid)>,
) -> Result<Response, PageError> {
    bundle_page(&state, &user, game_id, bundle_id, None, &[]).await
}

/// `POST /dashboard/games/{game_id}/offers/bundles/{bundle_id}` (developer): saves the edit.
pub async fn edit(
    State(state): State<AppState>,
    PagePath((game_id, bundle_id)): PagePath<(Uuid, Uuid)>,
    CsrfForm { user, form }: CsrfForm<BundleForm>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    if !handle
        .view()
        .bundles
        .iter()
        .any(|b| b.bundle_id == bundle_id)
    {
        return Err(ServiceError::NotFound("bundle").into());
    }
    let saved = match form.bundle(bundle_id) {
        Ok(bundle) => offer_config::put_bundle(&state.services, &handle, bundle).await,
        Err(errors) => Err(ServiceError::Validation(errors)),
    };
    match saved {
        Ok(_) => Ok(Redirect::to(&format!(
            "/dashboard/games/{game_id}/offers/bundles/{bundle_id}"
        ))
        .into_response()),
        Err(ServiceError::Validation(errors)) => {
            bundle_page(&state, &user, game_id, bundle_id, Some(&form), &errors).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/games/{game_id}/offers/bundles/{bundle_id}/delete` (developer).
pub async fn delete(
    State(state): State<AppState>,
    PagePath((game_id, bundle_id)): PagePath<(Uuid, Uuid)>,
    CsrfForm { user, .. }: CsrfForm<NoFields>,
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, &user, game_id).await?;
    user.require(Role::Developer)?;
    offer_config::delete_bundle(&state.services, &handle, bundle_id).await?;
    Ok(Redirect::to(&format!("/dashboard/games/{game_id}/offers")).into_response())
}
