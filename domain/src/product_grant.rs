//! Which store product pays for what: a studio names, on an item or a bundle, the product id
//! it sells it under in each store (`product_ids`). A product id pays for exactly one
//! thing: within a game, no two live items or bundles name the same product of the same
//! store ([`product_index`] finds who already does). At purchase time [`resolve_product`] turns a
//! store's product id back into what it grants and the catalogue price it stands for; when
//! an offer is served, [`product_for_offer`] says which product, if any, can pay for it.

use std::collections::HashMap;
use std::fmt;

use uuid::Uuid;

use crate::catalogue::{Item, usd_to_cents};
use crate::offer::Bundle;
use crate::product_ids::Store;

/// Something a product pays for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProductOwner<'a> {
    /// A catalogue item, by id.
    Item(&'a str),
    /// An L3 bundle, by id.
    Bundle(Uuid),
}

impl fmt::Display for ProductOwner<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Item(id) => write!(f, "item `{id}`"),
            Self::Bundle(id) => write!(f, "bundle `{id}`"),
        }
    }
}

/// Who sells under each (store, product id) of a game: every live item and every bundle, by
/// product. A product with more than one owner breaks the rule the writers keep (they check
/// the index of what they are about to store, so it never holds two).
pub fn product_index<'a>(
    items: impl IntoIterator<Item = &'a Item>,
    bundles: impl IntoIterator<Item = &'a Bundle>,
) -> HashMap<(Store, &'a str), Vec<ProductOwner<'a>>> {
    let mut index: HashMap<(Store, &'a str), Vec<ProductOwner<'a>>> = HashMap::new();
    for item in items.into_iter().filter(|i| i.is_live()) {
        for (store, id) in item.store_products.iter() {
            index
                .entry((store, id))
                .or_default()
                .push(ProductOwner::Item(&item.item_id));
        }
    }
    for bundle in bundles {
        for (store, id) in bundle.store_products.iter() {
            index
                .entry((store, id))
                .or_default()
                .push(ProductOwner::Bundle(bundle.bundle_id));
        }
    }
    index
}

/// What a store's product grants, with the catalogue price it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProductGrant {
    /// One catalogue item.
    Item {
        /// The item.
        item_id: String,
        /// Its catalogue price in cents.
        price_cents: i64,
    },
    /// An L3 bundle's items.
    Bundle {
        /// The bundle.
        bundle_id: Uuid,
        /// Its items, as the bundle lists them.
        item_ids: Vec<String>,
        /// The bundle's price in cents.
        price_cents: i64,
    },
}

impl ProductGrant {
    /// The catalogue price of what the product grants, in cents.
    pub fn price_cents(&self) -> i64 {
        match self {
            Self::Item { price_cents, .. } | Self::Bundle { price_cents, .. } => *price_cents,
        }
    }

    /// The catalogue price in dollars.
    pub fn price_usd(&self) -> f64 {
        crate::catalogue::cents_to_usd(self.price_cents())
    }

    /// The items granted.
    pub fn item_ids(&self) -> Vec<&str> {
        match self {
            Self::Item { item_id, .. } => vec![item_id.as_str()],
            Self::Bundle { item_ids, .. } => item_ids.iter().map(String::as_str).collect(),
        }
    }
}

/// A bundle's price in cents. Bundle prices are validated to whole cents when saved; the
/// rounding only guards a stored value that is not.
pub fn bundle_price_cents(bundle: &Bundle) -> i64 {
    usd_to_cents(bundle.price_usd).unwrap_or_else(|| {
        // Bounded by the bundle validation's maximum price, far inside i64.
        (bundle.price_usd * 100.0).round() as i64
    })
}

/// What `product_id` of `store` pays for in a game: the live item or the bundle selling
/// under it, with its catalogue price. `None` when nothing does (an unknown product, or one
/// of a deleted item).
pub fn resolve_product(
    store: Store,
    product_id: &str,
    items: &[Item],
    bundles: &[Bundle],
) -> Option<ProductGrant> {
    let item = items
        .iter()
        .find(|i| i.is_live() && i.store_products.get(store) == Some(product_id));
    if let Some(item) = item {
        return Some(ProductGrant::Item {
            item_id: item.item_id.clone(),
            price_cents: item.price_cents,
        });
    }
    bundles
        .iter()
        .find(|b| b.store_products.get(store) == Some(product_id))
        .map(|b| ProductGrant::Bundle {
            bundle_id: b.bundle_id,
            item_ids: b.item_ids.clone(),
            price_cents: bundle_price_cents(b),
        })
}

/// The product of `store` that pays for an offer of `item_ids` at `price_cents`: a single
/// live item's product when the offer is that item at its catalogue price, else the product
/// of a bundle holding exactly those items (in any order) at exactly that price. `None` when
/// no product can pay for the offer (a discounted or experiment-priced offer, a template's
/// pick of several items, an item without a product in that store).
pub fn product_for_offer<'a>(
    store: Store,
    item_ids: &[String],
    price_cents: i64,
    items: &'a [Item],
    bundles: &'a [Bundle],
) -> Option<&'a str> {
    if let [only] = item_ids {
        let single = items
            .iter()
            .find(|i| i.is_live() && i.item_id == *only && i.price_cents == price_cents)
            .and_then(|i| i.store_products.get(store));
        if single.is_some() {
            return single;
        }
    }
    let mut wanted: Vec<&str> = item_ids.iter().map(String::as_str).collect();
    wanted.sort_unstable();
    bundles
        .iter()
        .filter(|b| bundle_price_cents(b) == price_cents)
        .filter(|b| {
            let mut held: Vec<&str> = b.item_ids.iter().map(String::as_str).collect();
            held.sort_unstable();
            held == wanted
        })
        .find_map(|b| b.store_products.get(store))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::category::Category;
    use crate::product_ids::StoreProducts;
    use crate::testing;

    fn products(app_store: Option<&str>, google_play: Option<&str>) -> StoreProducts {
        StoreProducts {
            app_store: app_store.map(str::to_owned),
            google_play: google_play.map(str::to_owned),
        }
    }

    fn catalogue() -> (Vec<Item>, Vec<Bundle>) {
        let gems = Item {
            store_products: products(Some("com.game.gems100"), Some("gems_100")),
            ..testing::item("gems_100", Category::Currency, 99, 0.99)
        };
        let sword = Item {
            store_products: products(Some("com.game.sword"), None),
            ..testing::item("sword", Category::Equipment, 499, 4.99)
        };
        let gone = Item {
            store_products: products(Some("com.game.old"), None),
            deleted_at: Some(testing::STAMP),
            ..testing::item("old_hat", Category::Cosmetic, 199, 1.99)
        };
        let potion = testing::item("potion", Category::Consumable, 199, 1.99);
        let starter = Bundle {
            store_products: products(Some("com.game.starter"), Some("starter")),
            ..testing::bundle(1, &["sword", "gems_100"], 4.99, &[])
        };
        (vec![gems, gone, potion, sword], vec![starter])
    }

    #[test]
    fn a_product_resolves_to_its_live_item_or_bundle_with_the_catalogue_price() {
        let (items, bundles) = catalogue();
        assert_eq!(
            resolve_product(Store::GooglePlay, "gems_100", &items, &bundles),
            Some(ProductGrant::Item {
                item_id: "gems_100".into(),
                price_cents: 99
            })
        );
        let starter = resolve_product(Store::AppStore, "com.game.starter", &items, &bundles)
            .expect("the bundle's product");
        assert_eq!(starter.item_ids(), ["sword", "gems_100"]);
        assert_eq!(starter.price_cents(), 499);
        assert_eq!(starter.price_usd(), 4.99);
        // A store's id means nothing in the other store, and a deleted item grants nothing.
        assert_eq!(
            resolve_product(Store::GooglePlay, "com.game.sword", &items, &bundles),
            None
        );
        assert_eq!(
            resolve_product(Store::AppStore, "com.game.old", &items, &bundles),
            None
        );
    }

    #[test]
    fn an_offer_is_payable_at_its_catalogue_price_only() {
        let (items, bundles) = catalogue();
        let ids = |ids: &[&str]| ids.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            product_for_offer(Store::AppStore, &ids(&["sword"]), 499, &items, &bundles),
            Some("com.game.sword")
        );
        // Discounted, or priced by an experiment: no product pays that price.
        assert_eq!(
            product_for_offer(Store::AppStore, &ids(&["sword"]), 399, &items, &bundles),
            None
        );
        // No Google Play product for the sword, none at all for the potion.
        assert_eq!(
            product_for_offer(Store::GooglePlay, &ids(&["sword"]), 499, &items, &bundles),
            None
        );
        assert_eq!(
            product_for_offer(Store::AppStore, &ids(&["potion"]), 199, &items, &bundles),
            None
        );
        // A bundle's exact items, in any order, at its price.
        assert_eq!(
            product_for_offer(
                Store::GooglePlay,
                &ids(&["gems_100", "sword"]),
                499,
                &items,
                &bundles
            ),
            Some("starter")
        );
        assert_eq!(
            product_for_offer(Store::GooglePlay, &ids(&["sword"]), 499, &items, &bundles),
            None
        );
        assert_eq!(
            product_for_offer(
                Store::AppStore,
                &ids(&["gems_100", "sword", "potion"]),
                499,
                &items,
                &bundles
            ),
            None
        );
        // A deleted item's product no longer pays for it.
        assert_eq!(
            product_for_offer(Store::AppStore, &ids(&["old_hat"]), 199, &items, &bundles),
            None
        );
    }

    #[test]
    fn the_index_finds_every_live_holder_of_a_product() {
        let (items, mut bundles) = catalogue();
        let index = product_index(&items, &bundles);
        assert_eq!(
            index[&(Store::AppStore, "com.game.sword")],
            [ProductOwner::Item("sword")]
        );
        assert!(!index.contains_key(&(Store::AppStore, "com.game.old")));
        assert!(!index.contains_key(&(Store::GooglePlay, "com.game.sword")));
        bundles[0].store_products.app_store = Some("com.game.sword".into());
        let index = product_index(&items, &bundles);
        let both = &index[&(Store::AppStore, "com.game.sword")];
        assert_eq!(both.len(), 2);
        assert_eq!(
            both[1].to_string(),
            format!("bundle `{}`", Uuid::from_u128(1))
        );
    }
}
