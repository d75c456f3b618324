//! A bundle's form as typed, and the bundle it describes: its price read as dollars, its item
//! ids and triggers as lists separated by commas or spaces. It creates a bundle on the offers
//! page and edits one on the bundle's own page.

use offer_domain::offer::Bundle;
use offer_domain::validation::FieldError;
use serde::Deserialize;
use uuid::Uuid;

use super::{decimal, store_products, words};

/// A bundle's form, as typed.
#[derive(Debug, Default, Deserialize)]
pub struct BundleForm {
    /// The bundle's name.
    #[serde(default)]
    pub name: String,
    /// Its item ids, separated by commas or spaces.
    #[serde(default)]
    pub item_ids: String,
    /// Its price in dollars.
    #[serde(default)]
    pub price_usd: String,
    /// Its trigger events, separated by commas or spaces.
    #[serde(default)]
    pub triggers: String,
    /// Its App Store product id; blank: none.
    #[serde(default)]
    pub app_store_product: String,
    /// Its Google Play product id; blank: none.
    #[serde(default)]
    pub google_play_product: String,
}

impl BundleForm {
    /// The form showing `bundle` as stored.
    pub fn of(bundle: &Bundle) -> Self {
        Self {
            name: bundle.name.clone(),
            item_ids: bundle.item_ids.join(", "),
            price_usd: format!("{:.2}", bundle.price_usd),
            triggers: bundle.triggers.join(", "),
            app_store_product: bundle.store_products.app_store.clone().unwrap_or_default(),
            google_play_product: bundle
                .store_products
                .google_play
                .clone()
                .unwrap_or_default(),
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
            store_products: store_products(&self.app_store_product, &self.google_play_product),
        })
    }
}
