//! A game's L3 bundles: the form that creates one (on the offers page) or edits one (on its
//! own page), and delete. Item ids and triggers are typed as lists separated by commas or
//! spaces; the offer configuration service checks every item against the live catalogue.

use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use offer_domain::offer::Bundle;
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::catalogue::decimal;
use super::extract::PagePath;
use super::failure::PageError;
use super::games::game_of;
use super::layout::{self, Tab, csrf, field_errors, other_errors};
use super::offers::{Refused, offers_page};
use super::session::{CsrfForm, NoFields, SignedIn};
use crate::auth::Role;
use crate::service::{ServiceError, offer_config};
use crate::state::AppState;

/// The fields a bundle's errors name.
const FIELDS: [&str; 4] = ["name", "item_ids", "price_usd", "triggers"];

/// A bundle's form, as typed.
#[derive(Debug, Default, Deserialize)]
pub struct BundleForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    item_ids: String,
    #[serde(default)]
    price_usd: String,
    #[serde(default)]
    triggers: String,
}

impl BundleForm {
    fn of(bundle: &Bundle) -> Self {
        Self {
            name: bundle.name.clone(),
            item_ids: bundle.item_ids.join(", "),
            price_usd: format!("{:.2}", bundle.price_usd),
            triggers: bundle.triggers.join(", "),
        }
    }

    /// The bundle the form describes, or why it cannot be read.
    fn bundle(&self, bundle_id: Uuid) -> Result<Bundle, Vec<FieldError>> {
        let mut errors = Vec::new();
        let price_usd = decimal("price_usd", &self.price_usd, &mut errors);
        let Some(price_usd) = price_usd else {
            if errors.is_empty() {
                errors.push(FieldError::new("price_usd", "a price such as 4.99"));
            }
            return Err(errors);
        };
        Ok(Bundle {
            bundle_id,
            name: self.name.clone(),
            item_ids: words(&self.item_ids),
            price_usd,
            triggers: words(&self.triggers),
        })
    }
}

/// A list typed with commas or spaces between its entries.
fn words(text: &str) -> Vec<String> {
    text.split([',', ' ', '\n', '\r', '\t'])
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The bundle form posting to `action`, with `errors` next to their fields.
pub(super) fn form(
    user: &SignedIn,
    action: &str,
    submit: &str,
    typed: &BundleForm,
    errors: &[FieldError],
) -> Markup {
    html! {
        form.card #bundle-form method="post" action=(action) {
            (csrf(user))
            (other_errors(errors, &FIELDS))
            label for="bundle-name" { "Name" }
            input #bundle-name type="text" name="name" required value=(typed.name);
            (field_errors(errors, "name"))
            label for="bundle-items" { "Item ids, separated by commas" }
            input #bundle-items type="text" name="item_ids" required value=(typed.item_ids);
            (field_errors(errors, "item_ids"))
            label for="bundle-price" { "Price in dollars" }
            input #bundle-price type="text" inputmode="decimal" name="price_usd" required value=(typed.price_usd);
            (field_errors(errors, "price_usd"))
            label for="bundle-triggers" { "Trigger events, separated by commas (empty: every event)" }
            input #bundle-triggers type="text" name="triggers" value=(typed.triggers);
            (field_errors(errors, "triggers"))
            button type="submit" { (submit) }
        }
    }
}

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
    Ok((
        status,
        layout::page(user, &bundle.name, Some((&view.game, Tab::Offers)), body),
    )
        .into_response())
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
