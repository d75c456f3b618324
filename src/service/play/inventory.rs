//! Player inventories: the non-currency items a player holds, per game, environment and
//! player, read here and changed by idempotent steps keyed by `tx_id` ([`apply`]). The API
//! lists an inventory as `offer_wire::socket::InventoryItem`s.
//!
//! A step reads the player's document, decides, and writes it back with the store's
//! compare-and-swap, starting again when another writer changed it first; so the counts and
//! the record of the `tx_id` change together or not at all. Each record is the step's kind
//! and `tx_id` (`add:<tx_id>`, `use:<tx_id>`: the two kinds keep apart).
//!
//! A step whose `tx_id` is recorded changes nothing: the same change answers
//! [`InventoryOutcome::Duplicate`], a different one [`InventoryOutcome::TxConflict`]. The
//! document keeps the [`MAX_TX_RECORDS`] most recent `tx_id`s of each kind (additions and
//! uses counted apart, so a player's frequent uses never push out its rare purchases); an
//! older one retried would count again, like a money event retried after its idempotency
//! record expired. Items at 0 are dropped; a use above the count is refused and writes
//! nothing.

use offer_domain::environment::Environment;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::service::{ServiceError, ServiceResult};
use crate::store::Store;
pub use crate::store::inventory::Items;
use crate::store::inventory::{self as stored, InventoryDoc, Place};

/// How many recent `tx_id`s of each kind one player's inventory remembers. A record is a
/// `tx_id` (at most 128 characters) with its kind and a 64-character fingerprint, so the
/// records of both kinds take at most about 160 KiB.
pub const MAX_TX_RECORDS: usize = 128;

/// Attempts of one step against concurrent writers of the same player before it gives up
/// (as unavailable: the client retries).
const MAX_ATTEMPTS: usize = 16;

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
    /// Where the step's inventory lives.
    fn place(&self) -> Place<'_> {
        Place {
            game_id: self.game_id,
            env: self.env,
            player_id: &self.player_id,
        }
    }

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

/// A player's inventory (empty when it never held anything).
pub async fn read(
    store: &dyn Store,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
) -> ServiceResult<Items> {
    let place = Place {
        game_id,
        env,
        player_id,
    };
    Ok(stored::load(store, place).await?.doc.items)
}

/// Applies one step atomically and idempotently (see the module's documentation).
pub async fn apply(store: &dyn Store, op: &InventoryOp) -> ServiceResult<InventoryOutcome> {
    let fingerprint = op.fingerprint();
    let record = op.record();
    for _ in 0..MAX_ATTEMPTS {
        let read = stored::load(store, op.place()).await?;
        let mut doc = read.doc.clone();
        if let Some((_, first)) = doc.txs.iter().find(|(tx, _)| *tx == record) {
            return Ok(if *first == fingerprint {
                InventoryOutcome::Duplicate(doc.items)
            } else {
                InventoryOutcome::TxConflict
            });
        }
        if let Err(held) = change(&mut doc, &op.change) {
            return Ok(InventoryOutcome::Insufficient { held });
        }
        remember(&mut doc, op.kind(), record.clone(), fingerprint.clone());
        if stored::replace(store, op.place(), &read, &doc).await? {
            return Ok(InventoryOutcome::Applied(doc.items));
        }
    }
    tracing::warn!(
        player_id = %op.player_id,
        "the inventory kept changing under {MAX_ATTEMPTS} attempts"
    );
    Err(ServiceError::Unavailable)
}

/// Applies `change` to the counts, dropping items at 0; a use above the count changes
/// nothing and answers how many are held.
fn change(doc: &mut InventoryDoc, change: &InventoryChange) -> Result<(), i64> {
    match change {
        InventoryChange::Add(items) => {
            for (item_id, count) in items {
                let held = doc.items.entry(item_id.clone()).or_insert(0);
                *held = held.saturating_add(*count);
            }
        }
        InventoryChange::Use { item_id, quantity } => {
            let held = doc.items.get(item_id).copied().unwrap_or(0);
            if held < *quantity {
                return Err(held);
            }
            doc.items.insert(item_id.clone(), held - quantity);
        }
    }
    doc.items.retain(|_, count| *count > 0);
    Ok(())
}

/// Records a step, forgetting the oldest record of its kind once [`MAX_TX_RECORDS`] are kept.
fn remember(doc: &mut InventoryDoc, kind: &str, record: String, fingerprint: String) {
    let of_kind = doc.txs.iter().filter(|(r, _)| r.starts_with(kind)).count();
    if of_kind >= MAX_TX_RECORDS
        && let Some(oldest) = doc.txs.iter().position(|(r, _)| r.starts_with(kind))
    {
        doc.txs.remove(oldest);
    }
    doc.txs.push((record, fingerprint));
}
