//! An item's page in the catalogue: its computed value and the value used, its art, and
//! (developer) the edit form with the expert override, the art upload and delete. The
//! catalogue's handlers show it, and so does the art upload when the image is refused.

use axum::http::StatusCode;
use axum::response::Response;
use maud::html;
use offer_domain::catalogue::ItemPatch;
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use crate::auth::Role;
use crate::dashboard::failure::PageError;
use crate::dashboard::forms::{decimal, optional_text};
use crate::dashboard::layout::{self, Tab, csrf, field_errors, other_errors};
use crate::dashboard::session::{SignedIn, game_of};
use crate::service::ServiceError;
use crate::state::AppState;

/// An amount in dollars, as the catalogue shows it.
pub fn usd(v: f64) -> String {
    format!("${v:.2}")
}

/// Where the page shows an asset of the game: the art route of [`item_art`], which checks
/// the member's session and studio.
///
/// [`item_art`]: crate::dashboard::item_art
fn art_src(game_id: Uuid, asset_id: &str) -> String {
    format!("/dashboard/games/{game_id}/assets/{asset_id}")
}

/// The item edit form, as typed.
#[derive(Debug, Default, Deserialize)]
pub struct EditForm {
    #[serde(default)]
    item_name: String,
    #[serde(default)]
    price_usd: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    value_override_usd: String,
}

impl EditForm {
    /// The change of the item the form asks for, or why its boxes cannot be read.
    pub fn patch(&self) -> Result<ItemPatch, Vec<FieldError>> {
        let mut errors = Vec::new();
        let price_usd = decimal("price_usd", &self.price_usd, &mut errors);
        let value_override = decimal("value_override_usd", &self.value_override_usd, &mut errors);
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ItemPatch {
            item_name: Some(self.item_name.clone()),
            price_usd,
            description: optional_text(&self.description),
            value_override_usd: Some(value_override),
            ..ItemPatch::default()
        })
    }
}

/// An item's page, with what was typed and why it was refused when a save failed (a 422).
pub async fn edit_page(
    state: &AppState,
    user: &SignedIn,
    game_id: Uuid,
    item_id: &str,
    typed: Option<&EditForm>,
    errors: &[FieldError],
) -> Result<Response, PageError> {
    let handle = game_of(&state.services, user, game_id).await?;
    let view = handle.view();
    let item = view
        .items
        .iter()
        .find(|i| i.item_id == item_id && i.is_live())
        .ok_or(ServiceError::NotFound("item"))?;
    let form = typed.map_or_else(
        || EditForm {
            item_name: item.item_name.clone(),
            price_usd: format!("{:.2}", item.price_usd),
            description: item.description.clone().unwrap_or_default(),
            value_override_usd: item
                .value_override_usd
                .map(|v| v.to_string())
                .unwrap_or_default(),
        },
        |t| EditForm {
            item_name: t.item_name.clone(),
            price_usd: t.price_usd.clone(),
            description: t.description.clone(),
            value_override_usd: t.value_override_usd.clone(),
        },
    );
    let base = format!("/dashboard/games/{game_id}/items/{item_id}");
    let fields = [
        "item_name",
        "price_usd",
        "description",
        "value_override_usd",
        "art",
        "image",
    ];
    let body = html! {
        h1 { (item.item_name) }
        p { "Computed value: " strong #computed-value { (usd(item.value_usd)) }
            " · value used: " strong { (usd(item.effective_value_usd())) } }
        @if let Some(asset_id) = &item.image {
            img #item-art src=(art_src(game_id, asset_id)) alt={ "Art of " (item.item_name) } width="128";
        }
        @if user.can(Role::Developer) {
            form.card method="post" action=(base) {
                (csrf(user))
                (other_errors(errors, &fields))
                label for="item_name" { "Name" }
                input #item_name type="text" name="item_name" required value=(form.item_name);
                (field_errors(errors, "item_name"))
                label for="price_usd" { "Price in dollars" }
                input #price_usd type="text" inputmode="decimal" name="price_usd" value=(form.price_usd);
                (field_errors(errors, "price_usd"))
                label for="description" { "Description" }
                textarea #description name="description" { (form.description) }
                (field_errors(errors, "description"))
                label for="value_override_usd" { "Expert override of the value in dollars (empty: use the computed value)" }
                input #value_override_usd type="text" inputmode="decimal" name="value_override_usd" value=(form.value_override_usd);
                (field_errors(errors, "value_override_usd"))
                button type="submit" { "Save item" }
            }
            form.card #art-form method="post" action={ (base) "/art" } enctype="multipart/form-data" {
                (csrf(user))
                label for="art" { "Item art (PNG, JPEG or WebP)" }
                input #art type="file" name="art" accept="image/png,image/jpeg,image/webp" required;
                (field_errors(errors, "art"))
                (field_errors(errors, "image"))
                button type="submit" { "Upload art" }
            }
            form method="post" action={ (base) "/delete" } data-confirm="Delete this item? It is never offered again." {
                (csrf(user))
                button.danger type="submit" { "Delete item" }
            }
        }
        p { a href={ "/dashboard/games/" (game_id) "/items" } { "Back to the catalogue" } }
    };
    let status = if errors.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::UNPROCESSABLE_ENTITY
    };
    Ok(layout::game_page(
        status,
        user,
        &item.item_name,
        (&view.game, Tab::Catalogue),
        body,
    ))
}
