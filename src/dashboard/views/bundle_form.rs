//! A bundle's form: what the member typed, the bundle it describes (its price read as
//! dollars, its item ids and triggers as lists separated by commas or spaces), and the form
//! itself, which creates a bundle on the offers page and edits one on its own page.

use maud::{Markup, html};
use offer_domain::offer::Bundle;
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use crate::dashboard::forms::{decimal, words};
use crate::dashboard::layout::{csrf, field_errors, other_errors};
use crate::dashboard::session::SignedIn;

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
    /// The form showing `bundle` as stored.
    pub fn of(bundle: &Bundle) -> Self {
        Self {
            name: bundle.name.clone(),
            item_ids: bundle.item_ids.join(", "),
            price_usd: format!("{:.2}", bundle.price_usd),
            triggers: bundle.triggers.join(", "),
        }
    }

    /// The bundle the form describes, or why it cannot be read.
    pub fn bundle(&self, bundle_id: Uuid) -> Result<Bundle, Vec<FieldError>> {
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
            button type="submit" { (submit) }
        }
    }
}
