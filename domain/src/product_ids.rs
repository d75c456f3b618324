//! The stores that sign purchases, and the product ids an item or a bundle is sold under in
//! each: their shape and its check. Which product pays for what is `product_grant`'s.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::schema::ProductId;
use crate::validation::{Errors, MAX_PRODUCT_ID_LEN};

/// A store that signs purchases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Store {
    /// Apple's App Store (StoreKit 2 signed transactions).
    AppStore,
    /// Google Play (signed purchase data).
    GooglePlay,
}

impl Store {
    /// Both stores, in a fixed order.
    pub const ALL: [Store; 2] = [Store::AppStore, Store::GooglePlay];

    /// The store's name on the wire and in field names.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AppStore => "app_store",
            Self::GooglePlay => "google_play",
        }
    }
}

/// The product ids an item or a bundle is sold under, one per store, each optional.
///
/// Each id is 1 to 150 characters of `A-Z a-z 0-9 . _ -` (what both stores accept), and
/// pays for one thing only: another live item or bundle of the game naming the same product
/// of the same store is a 409 (`conflict`, naming the field).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreProducts {
    /// The App Store product id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<ProductId>)]
    pub app_store: Option<String>,
    /// The Google Play product id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<ProductId>)]
    pub google_play: Option<String>,
}

impl StoreProducts {
    /// The product id for `store`, if one is set.
    pub fn get(&self, store: Store) -> Option<&str> {
        match store {
            Store::AppStore => self.app_store.as_deref(),
            Store::GooglePlay => self.google_play.as_deref(),
        }
    }

    /// Whether no store has a product id.
    pub fn is_empty(&self) -> bool {
        self.app_store.is_none() && self.google_play.is_none()
    }

    /// Every (store, product id) set.
    pub fn iter(&self) -> impl Iterator<Item = (Store, &str)> {
        Store::ALL
            .into_iter()
            .filter_map(|store| self.get(store).map(|id| (store, id)))
    }

    /// Checks each id's alphabet and length; errors name `store_products.<store>`.
    pub fn validate(&self, errors: &mut Errors) {
        for (store, id) in self.iter() {
            if !is_product_id(id) {
                errors.push(
                    field(store),
                    format!(
                        "must be 1 to {MAX_PRODUCT_ID_LEN} characters of A-Z, a-z, 0-9, `.`, `_` \
                         and `-`"
                    ),
                );
            }
        }
    }
}

/// The request field of `store`'s product id.
pub fn field(store: Store) -> String {
    format!("store_products.{}", store.as_str())
}

/// Whether `id` is a product id both stores accept: 1 to [`MAX_PRODUCT_ID_LEN`] characters
/// of ASCII letters, digits, `.`, `_` and `-`.
pub fn is_product_id(id: &str) -> bool {
    (1..=MAX_PRODUCT_ID_LEN).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_ids_use_the_stores_alphabet() {
        for ok in ["a", "com.game.gems_100", "GEMS-100", &"x".repeat(150)] {
            assert!(is_product_id(ok), "{ok}");
        }
        for bad in ["", "gems 100", "gems/100", "gëms", &"x".repeat(151)] {
            assert!(!is_product_id(bad), "{bad}");
        }
        let mut errors = Errors::default();
        StoreProducts {
            app_store: Some("ok.id".into()),
            google_play: Some("not ok".into()),
        }
        .validate(&mut errors);
        let fields: Vec<_> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["store_products.google_play"]);
    }
}
