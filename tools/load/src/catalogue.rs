//! A realistic RPG catalogue for the engine's setup, and the one fixed item the baseline
//! answers with.
//!
//! The catalogue is deterministic (no randomness): the same `n` always gives the same items,
//! so runs are comparable. Its mix is 20% gem packs, 30% consumables, 30% equipment and 20%
//! cosmetics (a few of them loot boxes), on the usual store price points, with about 9 in 10
//! items eligible for the L4 store shelf.

use offer_domain::catalogue::Item;
use offer_domain::category::Category;
use offer_domain::testing;
use serde::Serialize;

/// The hard currency every currency pack grants.
pub const CURRENCY_ID: &str = "gems";

/// Gem packs: (price in cents, gems), larger packs at a better rate.
const GEM_PACKS: [(i64, i64); 7] = [
    (99, 80),
    (199, 170),
    (499, 450),
    (999, 950),
    (1999, 2000),
    (4999, 5200),
    (9999, 11000),
];
const CONSUMABLE_PRICES: [i64; 4] = [99, 199, 299, 499];
const EQUIPMENT_PRICES: [i64; 6] = [499, 999, 1499, 1999, 2999, 4999];
const COSMETIC_PRICES: [i64; 4] = [199, 499, 999, 1499];

const CONSUMABLES: [&str; 6] = [
    "Health potion",
    "Mana elixir",
    "Revive scroll",
    "XP booster",
    "Energy refill",
    "Lucky charm",
];
const EQUIPMENT: [&str; 6] = [
    "Dragonbone sword",
    "Mithril armour",
    "Storm bow",
    "Warden shield",
    "Runed helm",
    "Shadow dagger",
];
const COSMETICS: [&str; 5] = [
    "Crimson cape",
    "Golden aura",
    "Frost mount skin",
    "Victory emote",
    "Phoenix wings",
];
const TIERS: [&str; 5] = ["Common", "Fine", "Rare", "Epic", "Legendary"];

/// An item as a studio uploads it (`POST /v1/games/{game_id}/items/bulk`).
#[derive(Debug, Clone, Serialize)]
pub struct NewItem {
    /// snake_case id.
    pub item_id: String,
    /// Display name.
    pub item_name: String,
    /// `currency_pack`, `consumable`, `equipment` or `cosmetic`.
    pub category: &'static str,
    /// Price in dollars (2 decimals).
    pub price_usd: f64,
    /// Gems granted (currency packs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantity: Option<i64>,
    /// Used up when used.
    pub is_consumable: bool,
    /// May be picked for the L4 store shelf.
    pub fallback_eligible: bool,
    /// Free text.
    pub description: String,
    /// Currency granted (currency packs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub currency_id: Option<&'static str>,
    /// Randomised contents.
    pub is_loot_box: bool,
}

/// Dollars from cents, exact to the nearest double (so `499` prints as `4.99`).
fn usd(cents: i64) -> f64 {
    cents as f64 / 100.0
}

/// The first `n` items of the deterministic catalogue.
pub fn catalogue(n: usize) -> Vec<NewItem> {
    (0..n).map(item).collect()
}

fn item(i: usize) -> NewItem {
    let round = i / 10;
    let tier = TIERS[round % TIERS.len()];
    let fallback_eligible = i % 9 != 8;
    match i % 10 {
        0 | 1 => {
            let (cents, gems) = GEM_PACKS[(i / 2) % GEM_PACKS.len()];
            NewItem {
                item_id: format!("gems_{gems}_{i}"),
                item_name: format!("{gems} gems"),
                category: "currency_pack",
                price_usd: usd(cents),
                quantity: Some(gems),
                is_consumable: true,
                fallback_eligible,
                description: format!("A pouch of {gems} gems."),
                currency_id: Some(CURRENCY_ID),
                is_loot_box: false,
            }
        }
        k @ 2..=4 => {
            let name = CONSUMABLES[(round * 3 + k) % CONSUMABLES.len()];
            let cents = CONSUMABLE_PRICES[(round + k) % CONSUMABLE_PRICES.len()];
            NewItem {
                item_id: format!("consumable_{i}"),
                item_name: format!("{tier} {}", name.to_lowercase()),
                category: "consumable",
                price_usd: usd(cents),
                quantity: None,
                is_consumable: true,
                fallback_eligible,
                description: format!("{name}, one use."),
                currency_id: None,
                is_loot_box: false,
            }
        }
        k @ 5..=7 => {
            let name = EQUIPMENT[(round * 3 + k) % EQUIPMENT.len()];
            let cents = EQUIPMENT_PRICES[(round + k) % EQUIPMENT_PRICES.len()];
            NewItem {
                item_id: format!("equipment_{i}"),
                item_name: format!("{tier} {}", name.to_lowercase()),
                category: "equipment",
                price_usd: usd(cents),
                quantity: None,
                is_consumable: false,
                fallback_eligible,
                description: format!("{name}: permanent gear for raids."),
                currency_id: None,
                is_loot_box: false,
            }
        }
        k => {
            let is_loot_box = round % 7 == 3 && k == 9;
            let name = if is_loot_box {
                "Mystery crate"
            } else {
                COSMETICS[(round * 2 + k) % COSMETICS.len()]
            };
            let cents = COSMETIC_PRICES[(round + k) % COSMETIC_PRICES.len()];
            NewItem {
                item_id: format!("cosmetic_{i}"),
                item_name: format!("{tier} {}", name.to_lowercase()),
                category: "cosmetic",
                price_usd: usd(cents),
                quantity: None,
                is_consumable: false,
                fallback_eligible,
                description: format!("{name}, purely cosmetic."),
                currency_id: None,
                is_loot_box,
            }
        }
    }
}

/// The fixed item the baseline serves, as the engine's catalogue would return it: a
/// mid-size gem pack, precomputed once.
pub fn baseline_item() -> Item {
    Item {
        item_name: "950 gems".to_owned(),
        quantity: Some(950),
        is_consumable: true,
        description: Some("A pouch of 950 gems.".to_owned()),
        currency_id: Some(CURRENCY_ID.to_owned()),
        ..testing::item("gems_950_6", Category::Currency, 999, 11.88)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    #[test]
    fn catalogue_is_varied_and_unique() {
        let items = catalogue(200);
        assert_eq!(items.len(), 200);
        let ids: HashSet<_> = items.iter().map(|i| i.item_id.as_str()).collect();
        assert_eq!(ids.len(), 200, "item ids are unique");
        let mut per_category: HashMap<&str, usize> = HashMap::new();
        for i in &items {
            *per_category.entry(i.category).or_default() += 1;
            assert!(i.price_usd > 0.0);
            assert!(
                i.item_id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            );
            assert_eq!(i.category == "currency_pack", i.quantity.is_some());
            assert_eq!(i.category == "currency_pack", i.currency_id.is_some());
        }
        assert_eq!(per_category["currency_pack"], 40);
        assert_eq!(per_category["consumable"], 60);
        assert_eq!(per_category["equipment"], 60);
        assert_eq!(per_category["cosmetic"], 40);
        let eligible = items.iter().filter(|i| i.fallback_eligible).count();
        assert!(eligible > 170 && eligible < 200, "{eligible}");
        assert!(items.iter().any(|i| i.is_loot_box));
    }

    #[test]
    fn prices_print_with_two_decimals() {
        let json = serde_json::to_string(&catalogue(10)).expect("serialises");
        assert!(json.contains("\"price_usd\":0.99"), "{json}");
        assert!(!json.contains("000000"), "{json}");
    }

    #[test]
    fn baseline_item_has_the_catalogue_fields() {
        let v = serde_json::to_value(baseline_item()).expect("serialises");
        let fields = v.as_object().expect("an object").len();
        assert!(fields >= 15, "{fields}");
    }
}
