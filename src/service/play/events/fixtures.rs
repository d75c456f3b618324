//! The catalogue the events' unit tests share.

use offer_domain::catalogue::Item;
use offer_domain::category::Category;
use offer_domain::testing;

/// A gem pack, a stack of 3 potions and a sword, sorted by id as the game view keeps them.
pub(super) fn catalogue() -> Vec<Item> {
    vec![
        Item {
            quantity: Some(100),
            ..testing::item("gems_100", Category::Currency, 99, 1.0)
        },
        Item {
            quantity: Some(3),
            ..testing::item("potion", Category::Consumable, 99, 1.0)
        },
        testing::item("sword", Category::Equipment, 499, 5.0),
    ]
}
