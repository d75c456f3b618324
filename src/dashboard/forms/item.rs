//! An item's edit form as typed, and the change of the item it asks for: the price and the
//! expert override of the value read as dollars (an empty override gives the computed value
//! back), a blank description or product id absent.

use offer_domain::catalogue::{Item, ItemPatch};
use offer_domain::validation::FieldError;
use serde::Deserialize;

use super::{decimal, optional_text, store_products};

/// The item edit form, as typed.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct EditForm {
    /// The item's name.
    #[serde(default)]
    pub item_name: String,
    /// Its price in dollars.
    #[serde(default)]
    pub price_usd: String,
    /// Its description.
    #[serde(default)]
    pub description: String,
    /// The expert override of its value in dollars; empty for the computed value.
    #[serde(default)]
    pub value_override_usd: String,
    /// Its App Store product id; blank: none.
    #[serde(default)]
    pub app_store_product: String,
    /// Its Google Play product id; blank: none.
    #[serde(default)]
    pub google_play_product: String,
}

impl EditForm {
    /// The form showing `item` as stored.
    pub fn of(item: &Item) -> Self {
        Self {
            item_name: item.item_name.clone(),
            price_usd: format!("{:.2}", item.price_usd),
            description: item.description.clone().unwrap_or_default(),
            value_override_usd: item
                .value_override_usd
                .map(|v| v.to_string())
                .unwrap_or_default(),
            app_store_product: item.store_products.app_store.clone().unwrap_or_default(),
            google_play_product: item.store_products.google_play.clone().unwrap_or_default(),
        }
    }

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
            store_products: Some(store_products(
                &self.app_store_product,
                &self.google_play_product,
            )),
            ..ItemPatch::default()
        })
    }
}
