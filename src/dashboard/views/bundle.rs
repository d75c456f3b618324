//! A bundle: its form, which creates a bundle on the offers page and edits one on the
//! bundle's own page, and that page (the bundle, its form and delete for a developer).

use maud::{Markup, html};
use offer_domain::offer::Bundle;
use offer_domain::validation::FieldError;
use uuid::Uuid;

use crate::auth::Role;
use crate::dashboard::forms::bundle::BundleForm;
use crate::dashboard::layout::{csrf, field_errors, other_errors};
use crate::dashboard::session::SignedIn;
use crate::dashboard::views::products;

/// The fields a bundle's errors name.
const FIELDS: [&str; 6] = [
    "name",
    "item_ids",
    "price_usd",
    "triggers",
    products::FIELDS[0],
    products::FIELDS[1],
];

/// The bundle form posting to `action`, with `errors` next to their fields.
pub fn form(
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
            (products::inputs("bundle", &typed.app_store_product, &typed.google_play_product, errors))
            button type="submit" { (submit) }
        }
    }
}

/// A bundle's page: the bundle and, for a developer, its form (showing `typed` and `errors`
/// when a save was refused) and delete.
pub fn page(
    user: &SignedIn,
    game_id: Uuid,
    bundle: &Bundle,
    typed: &BundleForm,
    errors: &[FieldError],
) -> Markup {
    let base = format!(
        "/dashboard/games/{game_id}/offers/bundles/{}",
        bundle.bundle_id
    );
    html! {
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
    }
}
