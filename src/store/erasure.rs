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
}

/// Erasing a player's money records. Each backend finds every record itself (every day and
/// every experiment, one deleted from the game included): the caller names only the game,
/// the environment, the player and the tombstone.
#[async_trait]
pub trait Erasure: Send + Sync {
    /// Deletes the player's wallet and renames every other money record of it (spends, day
    /// spends, day totals, ledger lines, idempotency records, exposures) to the tombstone,
    /// all in one atomic step; how many records it changed. Safe to run again: a player
    /// with nothing left changes nothing and answers 0.
    async fn erase_player(&self, erasure: &PlayerErasure) -> StoreResult<u64>;
}
