//! The idempotency records keyed by player: a `tx_id` is unique per player, not per game, so
//! no player can spoil another's event by sending its `tx_id` first.
//!
//! Each game's and environment's tx hash names a record `<len>:<player id>:<tx_id>` (the
//! player id's length first, so no two pairs run together), and its receive-time set names
//! the same. Records written before this layout were named by the bare `tx_id`: before this
//! node applies the first money event of a game and environment, [`PER_PLAYER_LUA`] renames
//! them, atomically, once per hash (a marker field records that it ran), so a retry of an event
//! applied before the upgrade is still recognised. Every node of a deployment must run this
//! layout before any of them applies money events with it.

use ::redis::Script;

use super::super::StoreResult;
use super::bounded;
use super::conn::CommandConn;
use super::money_keys::MoneyKeys;

/// Renames the bare-`tx_id` records of one tx hash to the per-player names and sets the
/// hash's marker field `~per_player` (a name no record can have: records start with a
/// digit); with the marker set it does nothing. KEYS: the tx hash, its receive-time set.
/// Returns how many records it renamed. The player is read from the record
/// (`<balance>|<fingerprint>`, the fingerprint starting with the player id).
pub(super) const PER_PLAYER_LUA: &str = include_str!("money/per_player.lua");

/// The name of one player's `tx_id` in the tx hash and its receive-time set.
pub(super) fn tx_field(player_id: &str, tx_id: &str) -> String {
    [&player_id.len().to_string(), player_id, tx_id].join(":")
}

/// Runs [`PER_PLAYER_LUA`] over `keys`' tx hash once for this node: later calls for the same
/// keys return at once.
pub(super) async fn ensure_per_player(
    script: &Script,
    conn: &CommandConn,
    keys: &MoneyKeys,
    timeout: std::time::Duration,
) -> StoreResult<()> {
    keys.per_player
        .get_or_try_init(|| async {
            let mut invocation = script.prepare_invoke();
            invocation.key(&*keys.tx).key(&*keys.tx_received);
            let mut conn = conn.clone();
            let moved: u64 = bounded(
                timeout,
                "per-player tx records",
                invocation.invoke_async(&mut conn),
            )
            .await?;
            if moved > 0 {
                tracing::info!(
                    moved,
                    key = &*keys.tx,
                    "idempotency records keyed by player"
                );
            }
            Ok(())
        })
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_names_its_player_and_tx_id_without_ambiguity() {
        assert_eq!(tx_field("p1", "t"), "2:p1:t");
        assert_ne!(tx_field("a:b", "c"), tx_field("a", "b:c"));
    }
}
