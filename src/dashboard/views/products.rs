//! The store product boxes the item and the bundle forms share: the App Store and the Google
//! Play product id, each with the errors naming it.

use maud::{Markup, html};
use offer_domain::validation::FieldError;

use crate::dashboard::layout::field_errors;

/// The fields the boxes' errors name.
pub const FIELDS: [&str; 2] = ["store_products.app_store", "store_products.google_play"];

/// The two product id boxes, their ids starting with `id_prefix`, showing what was typed.
pub fn inputs(
    id_prefix: &str,
    app_store: &str,
    google_play: &str,
    errors: &[FieldError],
) -> Markup {
    let apple = format!("{id_prefix}-app-store-product");
    let google = format!("{id_prefix}-google-play-product");
    html! {
        label for=(apple) { "App Store product id (empty: none)" }
        input #(apple) type="text" name="app_store_product" maxlength="150" value=(app_store);
        (field_errors(errors, FIELDS[0]))
        label for=(google) { "Google Play product id (empty: none)" }
        input #(google) type="text" name="google_play_product" maxlength="150" value=(google_play);
        (field_errors(errors, FIELDS[1]))
    }
}
