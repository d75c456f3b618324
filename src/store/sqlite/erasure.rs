//! Erasure in SQLite: one job on the writer thread (so one savepoint: all or nothing) that
//! deletes the player's wallet rows and renames its rows of `spend`, `spend_days`,
//! `player_days`, `ledger` and `exposures` to the tombstone, and rehashes its idempotency
//! records (`tx`), whose hash covers the player, so a retry of one of its events under the
//! tombstone's name is still recognised.
//!
//! Cost: the ledger is indexed by game and environment, not by player, so the ledger's and
//! the idempotency records' part reads the game's whole ledger of that environment once, and
//! `spend_days` and `player_days` are read by game and environment too. An erasure is a rare
//! admin operation; holding the writer for one scan of one game's ledger is acceptable.

use async_trait::async_trait;
use rusqlite::{Connection, params};

use super::SqliteStore;
use super::schema::{env_code, tx_hash};
use crate::store::{Erasure, PlayerErasure, StoreResult};

/// The tables whose `player` column is renamed, keyed by game and environment.
const RENAMED: [&str; 5] = ["spend", "spend_days", "player_days", "exposures", "ledger"];

/// Runs the erasure on the writer's connection; how many rows it changed.
fn erase(conn: &Connection, erasure: &PlayerErasure) -> StoreResult<u64> {
    let game = erasure.game_id.as_bytes().as_slice();
    let env = env_code(erasure.env);
    let (player, tombstone) = (erasure.player_id.as_str(), erasure.tombstone.as_str());
    let mut changed = 0u64;
    // The idempotency records first, while their ledger lines still name the player.
    let records: Vec<(i64, String)> = conn
        .prepare_cached(
            "SELECT t.id, l.tx_id FROM ledger l CROSS JOIN tx t ON t.id = l.id
             WHERE l.game = ?1 AND l.env = ?2 AND l.player = ?3",
        )?
        .query_map(params![game, env, player], |row| {
            Ok((row.get(0)?, row.get(1)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut rehash = conn.prepare_cached("UPDATE tx SET hash = ?2 WHERE id = ?1")?;
    for (id, tx_id) in records {
        let hash = tx_hash(erasure.game_id, erasure.env, tombstone, &tx_id);
        changed += rehash.execute(params![id, hash])? as u64;
    }
    changed += conn
        .prepare_cached("DELETE FROM wallets WHERE game = ?1 AND env = ?2 AND player = ?3")?
        .execute(params![game, env, player])? as u64;
    for table in RENAMED {
        changed += conn
            .prepare_cached(&format!(
                "UPDATE {table} SET player = ?4 WHERE game = ?1 AND env = ?2 AND player = ?3"
            ))?
            .execute(params![game, env, player, tombstone])? as u64;
    }
    Ok(changed)
}

#[async_trait]
impl Erasure for SqliteStore {
    async fn erase_player(&self, erasure: &PlayerErasure) -> StoreResult<u64> {
        let erasure = erasure.clone();
        self.write("erase_player", move |conn| erase(conn, &erasure))
            .await
    }
}
