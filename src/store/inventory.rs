//! Player inventories as stored: one document per game, environment and player in the game's
//! `inventory` collection, keyed by environment and player id: `{"items": {item_id: count},
//! "txs": [[record, fingerprint], ...]}`. This module reads a document and writes it back
//! with the store's compare-and-swap, on every backend alike (both operations are ones every
//! backend already shares); what a step changes, and its idempotency, are the play service's
//! rules ([`crate::service::play::inventory`]).

use std::collections::BTreeMap;

use offer_domain::environment::Environment;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{Collection, Store, StoreError, StoreResult};

/// The collection of a game's inventories.
const INVENTORY: &str = "inventory";

/// A player's items and their counts (every count at least 1).
pub type Items = BTreeMap<String, i64>;

/// The stored document of one player.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InventoryDoc {
    /// The items held.
    pub items: Items,
    /// Recent `(record, fingerprint)` pairs of the steps applied, oldest first.
    pub txs: Vec<(String, String)>,
}

/// A player's document as read, with the bytes a write-back must still find in place.
#[derive(Debug)]
pub struct Loaded {
    /// The document (empty when the player never held anything).
    pub doc: InventoryDoc,
    /// The stored bytes, absent when there was no document.
    stored: Option<Vec<u8>>,
}

/// Where one player's inventory lives.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    /// The game.
    pub game_id: Uuid,
    /// Production or sandbox: environments never share a document.
    pub env: Environment,
    /// The external player id.
    pub player_id: &'a str,
}

impl Place<'_> {
    fn collection(&self) -> Collection {
        Collection::game(self.game_id, INVENTORY)
    }

    /// The document id (an environment name has no `:`).
    fn doc_id(&self) -> String {
        format!("{}:{}", self.env.tag(), self.player_id)
    }
}

fn corrupt(e: serde_json::Error) -> StoreError {
    StoreError::Corrupt(format!("inventory document: {e}"))
}

/// Reads a player's document.
pub async fn load(store: &dyn Store, place: Place<'_>) -> StoreResult<Loaded> {
    let stored = store.get(place.collection(), &place.doc_id()).await?;
    let doc = match &stored {
        Some(bytes) => serde_json::from_slice(bytes).map_err(corrupt)?,
        None => InventoryDoc::default(),
    };
    Ok(Loaded { doc, stored })
}

/// Deletes a player's document (its erasure); `false` when there was none.
pub async fn forget(store: &dyn Store, place: Place<'_>) -> StoreResult<bool> {
    store.delete(place.collection(), &place.doc_id()).await
}

/// Writes `doc` in place of the document `read` found; `false`, writing nothing, when
/// another writer changed it since.
pub async fn replace(
    store: &dyn Store,
    place: Place<'_>,
    read: &Loaded,
    doc: &InventoryDoc,
) -> StoreResult<bool> {
    let new = serde_json::to_vec(doc).map_err(corrupt)?;
    store
        .compare_and_swap(
            place.collection(),
            &place.doc_id(),
            read.stored.as_deref(),
            new,
        )
        .await
}
