//! A player's inventory as the API shows it: the WebSocket `inventory` and `ready` messages
//! and the player record list it the same way.

use offer_domain::schema::SnakeCaseId;
use serde::Serialize;
use utoipa::ToSchema;

use crate::store::inventory::Items;

/// One item of a player's inventory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct InventoryItem {
    /// The catalogue item.
    #[schema(value_type = SnakeCaseId)]
    pub item_id: String,
    /// How many the player holds, at least 1.
    pub quantity: i64,
}

impl InventoryItem {
    /// The lines of an inventory, by `item_id`.
    pub fn list(items: Items) -> Vec<Self> {
        items
            .into_iter()
            .map(|(item_id, quantity)| Self { item_id, quantity })
            .collect()
    }
}
