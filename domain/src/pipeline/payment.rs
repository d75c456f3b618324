//! Which offers a store can charge for, when a game enforces store receipts: a purchase then
//! grants only what a store product sells, so an offer no product sells at its price (a
//! template's pick of several items, a discounted price, an experiment's variant price, an L1
//! price no product has) could never be paid for, and is not served.
//!
//! The index is built with the snapshot; a decision asks it once per candidate, with the
//! price the candidate would serve at (after its experiment), for the stores the player's
//! platform buys from (`ios`: the App Store, `android`: Google Play, any other or none:
//! either).

use std::collections::HashSet;
use std::sync::Arc;

use crate::catalogue::Item;
use crate::offer::Bundle;
use crate::product_grant::bundle_price_cents;
use crate::product_ids::Store;

/// Every (store, items, price) a store product sells: one live item at its catalogue price,
/// or a bundle's items at the bundle's price. Items are kept sorted by id.
#[derive(Debug, Clone, Default)]
pub(super) struct Payable {
    offers: HashSet<(Store, Vec<String>, i64)>,
}

impl Payable {
    /// The index of `items` and `bundles`.
    pub(super) fn build(items: &[Item], bundles: &[Bundle]) -> Self {
        let mut offers = HashSet::new();
        for item in items.iter().filter(|i| i.is_live()) {
            for (store, _) in item.store_products.iter() {
                offers.insert((store, vec![item.item_id.clone()], item.price_cents));
            }
        }
        for bundle in bundles {
            let mut ids = bundle.item_ids.clone();
            ids.sort_unstable();
            for (store, _) in bundle.store_products.iter() {
                offers.insert((store, ids.clone(), bundle_price_cents(bundle)));
            }
        }
        Self { offers }
    }

    /// Whether a store the player buys from sells `items` at `price_cents`.
    pub(super) fn pays(
        &self,
        platform: Option<&str>,
        items: &[Arc<Item>],
        price_cents: i64,
    ) -> bool {
        let mut ids: Vec<String> = items.iter().map(|i| i.item_id.clone()).collect();
        ids.sort_unstable();
        let mut key = (Store::AppStore, ids, price_cents);
        stores_of(platform).iter().any(|store| {
            key.0 = *store;
            self.offers.contains(&key)
        })
    }
}

/// The stores a player on `platform` buys from.
fn stores_of(platform: Option<&str>) -> &'static [Store] {
    match platform.map(str::to_ascii_lowercase).as_deref() {
        Some("ios" | "ipados") => &[Store::AppStore],
        Some("android") => &[Store::GooglePlay],
        _ => &Store::ALL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::product_grant::product_for_offer;
    use crate::product_ids::StoreProducts;
    use crate::testing::item;

    fn sold(id: &str, price_cents: i64, app_store: Option<&str>, google: Option<&str>) -> Item {
        let mut i = item(id, crate::category::Category::Equipment, price_cents, 1.0);
        i.store_products = StoreProducts {
            app_store: app_store.map(str::to_owned),
            google_play: google.map(str::to_owned),
        };
        i
    }

    #[test]
    fn an_offer_is_payable_as_the_purchase_path_would_resolve_it() {
        let items = vec![
            sold("sword", 499, Some("com.g.sword"), Some("sword")),
            sold("shield", 299, None, Some("shield")),
            sold("hat", 199, None, None),
        ];
        let mut set = crate::testing::bundle(1, &["sword", "shield"], 6.49, &[]);
        set.store_products.google_play = Some("knight_set".into());
        let bundles = vec![set];
        let payable = Payable::build(&items, &bundles);
        let arcs = |ids: &[&str]| -> Vec<Arc<Item>> {
            ids.iter()
                .map(|id| {
                    Arc::new(
                        items
                            .iter()
                            .find(|i| i.item_id == *id)
                            .expect("item")
                            .clone(),
                    )
                })
                .collect()
        };
        let cases: [(&[&str], i64); 6] = [
            (&["sword"], 499),
            (&["sword"], 399),
            (&["shield"], 299),
            (&["hat"], 199),
            (&["shield", "sword"], 649),
            (&["sword", "shield"], 798),
        ];
        for (ids, price) in cases {
            for store in Store::ALL {
                let platform = match store {
                    Store::AppStore => "ios",
                    Store::GooglePlay => "android",
                };
                let owned: Vec<String> = ids.iter().map(|s| (*s).to_owned()).collect();
                assert_eq!(
                    payable.pays(Some(platform), &arcs(ids), price),
                    product_for_offer(store, &owned, price, &items, &bundles).is_some(),
                    "{ids:?} at {price} on {platform}"
                );
            }
        }
        // A player on another platform, or none, buys from either store.
        assert!(payable.pays(None, &arcs(&["shield"]), 299));
        assert!(payable.pays(Some("pc"), &arcs(&["sword"]), 499));
        assert!(!payable.pays(None, &arcs(&["hat"]), 199));
    }
}
