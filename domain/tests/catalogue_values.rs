//! Property: whatever sequence of catalogue writes a studio makes (packs and items created,
//! repriced, requantified, priced in an earned currency, overridden, soft-deleted), every
//! item's value follows the three value rules, computed here independently of the engine:
//! a currency pack is worth `quantity x` the per-unit price of its currency's smallest live
//! pack; a real-money item is worth its price; an item priced in a currency is worth
//! `amount x` that currency's unit value; an expert override wins over all three. Values of
//! soft-deleted items are not asserted: they are never served.

use std::collections::BTreeMap;

use offer_domain::catalogue::{Item, ItemInput, recompute_values, round_usd};
use offer_domain::currency::Currency;
use offer_domain::testing;
use proptest::prelude::*;

/// One write of the sequence.
#[derive(Debug, Clone)]
enum Write {
    /// Creates or replaces a pack of `currency` (0: gems, 1: gold).
    Pack {
        id: u8,
        currency: u8,
        quantity: i64,
        cents: i64,
    },
    /// Creates or replaces a real-money item.
    Priced { id: u8, cents: i64 },
    /// Creates or replaces an item priced in a currency.
    Earned { id: u8, currency: u8, amount: i64 },
    /// Sets (or clears) an item's expert override, when the item exists.
    Override { id: u8, usd: Option<u32> },
    /// Soft-deletes an item, when it exists.
    Delete { id: u8 },
}

fn currency_name(c: u8) -> &'static str {
    if c == 0 { "gems" } else { "gold" }
}

fn writes() -> impl Strategy<Value = Vec<Write>> {
    let write = prop_oneof![
        (0u8..6, 0u8..2, 1i64..5_000, 1i64..10_000).prop_map(|(id, currency, quantity, cents)| {
            Write::Pack {
                id,
                currency,
                quantity,
                cents,
            }
        }),
        (0u8..6, 1i64..10_000).prop_map(|(id, cents)| Write::Priced { id, cents }),
        (0u8..6, 0u8..2, 1i64..10_000).prop_map(|(id, currency, amount)| Write::Earned {
            id,
            currency,
            amount
        }),
        (0u8..6, proptest::option::of(0u32..10_000))
            .prop_map(|(id, usd)| Write::Override { id, usd }),
        (0u8..6).prop_map(|id| Write::Delete { id }),
    ];
    proptest::collection::vec(write, 1..40)
}

/// Builds the stored item through the engine's own write path (validation included).
fn input(json: serde_json::Value, currencies: &[Currency], existing: Option<&Item>) -> Item {
    serde_json::from_value::<ItemInput>(json)
        .expect("a well-formed input")
        .into_item(currencies, existing, testing::STAMP)
        .expect("a valid item")
}

fn apply(catalogue: &mut BTreeMap<String, Item>, write: &Write, currencies: &[Currency]) {
    let key = |kind: &str, id: u8| format!("{kind}_{id}");
    match *write {
        Write::Pack {
            id,
            currency,
            quantity,
            cents,
        } => {
            let item_id = key("pack", id);
            let item = input(
                serde_json::json!({"item_id": item_id, "item_name": "Pack", "category": "currency",
                    "currency_id": currency_name(currency), "quantity": quantity,
                    "price_cents": cents}),
                currencies,
                catalogue.get(&item_id),
            );
            catalogue.insert(item_id, item);
        }
        Write::Priced { id, cents } => {
            let item_id = key("sword", id);
            let item = input(
                serde_json::json!({"item_id": item_id, "item_name": "Sword",
                    "category": "equipment", "price_cents": cents}),
                currencies,
                catalogue.get(&item_id),
            );
            catalogue.insert(item_id, item);
        }
        Write::Earned {
            id,
            currency,
            amount,
        } => {
            let item_id = key("potion", id);
            let item = input(
                serde_json::json!({"item_id": item_id, "item_name": "Potion",
                    "category": "consumable", "price_cents": 0,
                    "earned_price": {"currency_id": currency_name(currency), "amount": amount}}),
                currencies,
                catalogue.get(&item_id),
            );
            catalogue.insert(item_id, item);
        }
        Write::Override { id, usd } => {
            for kind in ["pack", "sword", "potion"] {
                if let Some(item) = catalogue.get_mut(&key(kind, id)) {
                    item.value_override_usd = usd.map(f64::from);
                }
            }
        }
        Write::Delete { id } => {
            for kind in ["pack", "sword", "potion"] {
                if let Some(item) = catalogue.get_mut(&key(kind, id)) {
                    item.deleted_at = Some(testing::STAMP);
                }
            }
        }
    }
}

/// The unit value of a currency by rule 1, from its smallest live pack (the cheaper on a
/// tie); `None` without a pack.
fn unit_value(items: &[Item], currency: &str) -> Option<f64> {
    items
        .iter()
        .filter(|i| i.is_live() && i.currency_id.as_deref() == Some(currency))
        .filter_map(|i| i.quantity.map(|q| (q, i.price_cents, i.price_usd)))
        .min_by_key(|(q, cents, _)| (*q, *cents))
        .map(|(q, _, usd)| usd / q as f64)
}

proptest! {
    #[test]
    fn values_follow_the_three_rules_after_any_writes(writes in writes()) {
        let currencies = testing::currencies();
        let mut catalogue = BTreeMap::new();
        for write in &writes {
            apply(&mut catalogue, write, &currencies);
            let mut items: Vec<Item> = catalogue.values().cloned().collect();
            recompute_values(&mut items, &currencies);
            catalogue = items.into_iter().map(|i| (i.item_id.clone(), i)).collect();
        }
        let items: Vec<Item> = catalogue.values().cloned().collect();
        // A soft-deleted item is never served, so its value is not asserted.
        for item in items.iter().filter(|i| i.is_live()) {
            let expected = if let (Some(currency), Some(quantity)) = (&item.currency_id, item.quantity) {
                round_usd(quantity as f64 * unit_value(&items, currency).unwrap_or(0.0))
            } else if let Some(price) = &item.earned_price {
                round_usd(price.amount as f64 * unit_value(&items, &price.currency_id).unwrap_or(0.0))
            } else {
                item.price_usd
            };
            prop_assert!(
                (item.value_usd - expected).abs() < 1e-9,
                "{}: value {} expected {}", item.item_id, item.value_usd, expected
            );
            let shown = item.value_override_usd.unwrap_or(expected);
            prop_assert!((item.effective_value_usd() - shown).abs() < 1e-9);
        }
    }
}
