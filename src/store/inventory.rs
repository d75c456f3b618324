//! Player inventories: the non-currency items a player holds, per game, environment and
//! player, changed by idempotent steps keyed by `tx_id`.
//!
//! One player's inventory is one document of the game's `inventory` collection, keyed by
//! environment and player id: `{"items": {item_id: count}, "txs": [[record, fingerprint],
//! ...]}`, a record being the step's kind and `tx_id` (`add:<tx_id>`, `use:<tx_id>`: the
//! two kinds keep apart).
//! [`apply`] reads it, decides, and writes it back with the store's compare-and-swap,
//! starting again when another writer changed it first; so the counts and the record of
//! the `tx_id` change together or not at all, on every backend alike (the step is built
//! once, on an operation every backend already shares).
//!
//! A step whose `tx_id` is recorded changes nothing: the same change answers
//! [`InventoryOutcome::Duplicate`], a different one [`InventoryOutcome::TxConflict`]. The
//! document keeps the [`MAX_TX_RECORDS`] most recent `tx_id`s of each kind (additions and
//! uses counted apart, so a player's frequent uses never push out its rare purchases); an
//! older one retried would count again, like a money event retried after its idempotency
//! record expired. Items at 0 are dropped; a use above the count is refused and writes
//! nothing.

use std::collections::BTreeMap;

use offer_domain::environment::Environment;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{Collection, Store, StoreError, StoreResult};

/// The collection of a game's inventories.
const INVENTORY: &str = "inventory";

/// How many recent `tx_id`s of each kind one player's inventory remembers. A record is a
/// `tx_id` (at most 128 characters) with its kind and a 64-character fingerprint, so the
/// records of both kinds take at most about 160 KiB.
pub const MAX_TX_RECORDS: usize = 128;

/// Attempts of one step against concurrent writers of the same player before it gives up
/// (as unavailable: the client retries).
const MAX_ATTEMPTS: usize = 16;

/// A player's items and their counts (every count at least 1).
pub type Items = BTreeMap<String, i64>;

/// What one step does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InventoryChange {
    /// Adds each count to its item (the items of a purchase).
    Add(Vec<(String, i64)>),
    /// Removes `quantity` of one item; refused when fewer are held.
    Use {
        /// The item.
        item_id: String,
        /// How many, at least 1.
        quantity: i64,
    },
}

/// One inventory step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryOp {
    /// Game of the inventory.
    pub game_id: Uuid,
    /// Production or sandbox.
    pub env: Environment,
    /// External player id.
    pub player_id: String,
    /// Idempotency key: the same `tx_id` twice counts once.
    pub tx_id: String,
    /// What happens.
    pub change: InventoryChange,
}

impl InventoryOp {
    /// The key of this step's idempotency record: its kind and `tx_id`. Additions (a
    /// purchase's items, under the purchase's `tx_id`) and uses keep apart, so that the
    /// items of a purchase never meet a refusal its wallet step did not give.
    fn record(&self) -> String {
        format!("{}{}", self.kind(), self.tx_id)
    }

    /// The prefix of this step's kind in its record.
    fn kind(&self) -> &'static str {
        match &self.change {
            InventoryChange::Add(_) => "add:",
            InventoryChange::Use { .. } => "use:",
        }
    }

    /// What a replay of this `tx_id` must match: a SHA-256 of the change, so that a record
    /// stays small however many items the change names.
    fn fingerprint(&self) -> String {
        let change = match &self.change {
            InventoryChange::Add(items) => {
                let parts: Vec<String> = items.iter().map(|(i, n)| format!("{i}:{n}")).collect();
                format!("add|{}", parts.join(","))
            }
            InventoryChange::Use { item_id, quantity } => format!("use|{item_id}:{quantity}"),
        };
        Sha256::digest(change.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// The answer to an [`InventoryOp`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InventoryOutcome {
    /// Applied now; the inventory after it.
    Applied(Items),
    /// This `tx_id` was applied before; nothing changed. The inventory now.
    Duplicate(Items),
    /// A use above the count held; nothing changed.
    Insufficient {
        /// How many of the item the player holds.
        held: i64,
    },
    /// This `tx_id` was already used for a different change; nothing changed.
    TxConflict,
}

/// The stored document of one player.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Doc {
    items: Items,
    /// Recent `(tx_id, fingerprint)` records, oldest first.
    txs: Vec<(String, String)>,
}

fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, INVENTORY)
}

/// The document id: environments never share one (an environment name has no `:`).
fn doc_id(env: Environment, player_id: &str) -> String {
    format!("{}:{player_id}", env.tag())
}

fn decode(bytes: &[u8]) -> StoreResult<Doc> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::Corrupt(format!("inventory document: {e}")))
}

/// A player's inventory (empty when it never held anything).
pub async fn read(
    store: &dyn Store,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
) -> StoreResult<Items> {
    match store
        .get(collection(game_id), &doc_id(env, player_id))
        .await?
    {
        Some(bytes) => Ok(decode(&bytes)?.items),
        None => Ok(Items::new()),
    }
}

/// Applies one step atomically and idempotently (see the module's documentation).
pub async fn apply(store: &dyn Store, op: &InventoryOp) -> StoreResult<InventoryOutcome> {
    let coll = collection(op.game_id);
    let id = doc_id(op.env, &op.player_id);
    let fingerprint = op.fingerprint();
    for _ in 0..MAX_ATTEMPTS {
        let current = store.get(coll, &id).await?;
        let mut doc = match &current {
            Some(bytes) => decode(bytes)?,
            None => Doc::default(),
        };
        let record = op.record();
        if let Some((_, first)) = doc.txs.iter().find(|(tx, _)| *tx == record) {
            return Ok(if *first == fingerprint {
                InventoryOutcome::Duplicate(doc.items)
            } else {
                InventoryOutcome::TxConflict
            });
        }
        match &op.change {
            InventoryChange::Add(items) => {
                for (item_id, count) in items {
                    let held = doc.items.entry(item_id.clone()).or_insert(0);
                    *held = held.saturating_add(*count);
                }
            }
            InventoryChange::Use { item_id, quantity } => {
                let held = doc.items.get(item_id).copied().unwrap_or(0);
                if held < *quantity {
                    return Ok(InventoryOutcome::Insufficient { held });
                }
                doc.items.insert(item_id.clone(), held - quantity);
            }
        }
        doc.items.retain(|_, count| *count > 0);
        let kind = op.kind();
        let of_kind = doc.txs.iter().filter(|(r, _)| r.starts_with(kind)).count();
        if of_kind >= MAX_TX_RECORDS
            && let Some(oldest) = doc.txs.iter().position(|(r, _)| r.starts_with(kind))
        {
            doc.txs.remove(oldest);
        }
        doc.txs.push((record, fingerprint.clone()));
        let new = serde_json::to_vec(&doc)
            .map_err(|e| StoreError::Corrupt(format!("inventory document: {e}")))?;
        if store
            .compare_and_swap(coll, &id, current.as_deref(), new)
            .await?
        {
            return Ok(InventoryOutcome::Applied(doc.items));
        }
    }
    Err(StoreError::Unavailable(format!(
        "the inventory of `{}` kept changing under {MAX_ATTEMPTS} attempts",
        op.player_id
    )))
}
