//! Erasure of one player (a data subject's request to be forgotten): the money records that
//! hold its id are renamed to a tombstone, in one atomic step per game and environment, and
//! its wallet is deleted.
//!
//! Renamed, not deleted: the lifetime and daily spends, the unverified purchases, the
//! player's day totals (what the day caps count against), the ledger lines, the idempotency
//! records (their key and their recorded fingerprint) and the price experiments' exposures.
//! They make the game's totals (the holdout comparison, the revenue share, the bill, an
//! experiment's results), so the tombstone keeps them whole; the caller picks a tombstone in
//! the player's holdout group, so every total stays in the right group without the group
//! being stored. Deleted: the wallet's balances, which are the player's alone.
//!
//! Decision records name a session, never a player, so they need no renaming: once the
//! session's document is deleted nothing links them to the player.

use async_trait::async_trait;
use chrono::NaiveDate;
use offer_domain::environment::Environment;
use uuid::Uuid;

use super::StoreResult;

/// What to erase: one player of one game and environment, and the name its records go on
/// under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerErasure {
    /// The game.
    pub game_id: Uuid,
    /// Production or sandbox.
    pub env: Environment,
    /// The player id to erase.
    pub player_id: String,
    /// The id its kept records are renamed to.
    pub tombstone: String,
    /// Every UTC day the player may have money records on (its purchases' days, its days
    /// of play). The Redis backend keeps those records in one key per day and reaches only
    /// these days' keys; SQLite finds every row by player and ignores the list.
    pub days: Vec<NaiveDate>,
    /// The game's experiments: the Redis backend keeps the exposures in one key per
    /// experiment and reaches only these; SQLite ignores the list.
    pub experiments: Vec<Uuid>,
}

/// Erasing a player's money records.
#[async_trait]
pub trait Erasure: Send + Sync {
    /// Deletes the player's wallet and renames every other money record of it (spends, day
    /// spends, day totals, ledger lines, idempotency records, exposures) to the tombstone,
    /// all in one atomic step; how many records it changed. Safe to run again: a player
    /// with nothing left changes nothing and answers 0.
    async fn erase_player(&self, erasure: &PlayerErasure) -> StoreResult<u64>;
}

/// `value` with every JSON string equal to `from` (in values and in object keys) replaced
/// by `to`; `None` when it holds no such string (or is not JSON). Exact strings only: a
/// longer id that merely contains `from` is another player's and is left alone.
pub fn rename_in_json(value: &[u8], from: &str, to: &str) -> Option<Vec<u8>> {
    let mut doc: serde_json::Value = serde_json::from_slice(value).ok()?;
    if rename(&mut doc, from, to) {
        serde_json::to_vec(&doc).ok()
    } else {
        None
    }
}

/// Renames in place; whether anything changed.
fn rename(value: &mut serde_json::Value, from: &str, to: &str) -> bool {
    use serde_json::Value;
    match value {
        Value::String(s) if s == from => {
            to.clone_into(s);
            true
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| rename(v, from, to) || changed),
        Value::Object(map) => {
            let mut changed = false;
            if let Some(v) = map.remove(from) {
                map.insert(to.to_owned(), v);
                changed = true;
            }
            map.values_mut()
                .fold(changed, |changed, v| rename(v, from, to) || changed)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_strings_are_renamed() {
        let doc = br#"{"player_id":"p1","other":"p10","list":["p1",{"p1":3}],"n":1}"#;
        let renamed = rename_in_json(doc, "p1", "t").expect("renamed");
        let value: serde_json::Value = serde_json::from_slice(&renamed).expect("json");
        assert_eq!(
            value,
            serde_json::json!({"player_id":"t","other":"p10","list":["t",{"t":3}],"n":1})
        );
        assert_eq!(rename_in_json(br#"{"a":"p10"}"#, "p1", "t"), None);
    }
}
