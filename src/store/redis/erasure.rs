//! Erasure in Redis: one script over one game's and environment's keys (they share the
//! game's hash tag, so one slot on a cluster), atomic on the server. It deletes the player's
//! wallet and renames its fields of the spend hashes, the day spend and day total hashes of
//! every day, the idempotency records and their receive times, its ledger lines (in
//! place, by their `"player_id"`) and its fields of the experiments' exposure hashes.
//!
//! The day and exposure hashes reached are found, not named by the caller: one `SCAN` of
//! the server holding the game (on a cluster, the master of the game's slot) with a
//! pattern that matches the game's and environment's keys
//! ([`Keys::env_pattern`](crate::store::keys::Keys::env_pattern)) lists every day that has
//! a day spend, an unverified day spend or day totals, and every experiment that has an
//! exposure hash: the days whose ledger lines the retention dropped, the days before the
//! player's install (imported history) and the experiments deleted from the game since
//! are reached like any other. A key written between the scan and the script is the case
//! of any event landing after the store step: the player's sessions are closed first, and
//! asking again erases it.
//!
//! Cost: the scan walks the server's key space in pages of about a thousand keys, each
//! page a short command (a millisecond or two) between which the server serves everyone
//! else; about a microsecond per key the server holds (13 s for ten million keys). The script then reads the ledger list whole, and walks the
//! idempotency hash, the day totals and the exposure hashes with `HSCAN ... MATCH`, each a
//! pass over one game's key; the script blocks that Redis (that master, on a cluster) for the length of the pass, a few
//! milliseconds per hundred thousand ledger lines. An erasure is a rare admin operation, so
//! that is acceptable; a game whose ledger outgrows the store's timeout answers 503 and
//! nothing is changed (the script is all or nothing).

use std::collections::BTreeSet;

use async_trait::async_trait;
use chrono::NaiveDate;
use offer_domain::environment::Environment;
use uuid::Uuid;

use super::{RedisStore, bounded};
use crate::store::keys::{EnvKey, glob_escape};
use crate::store::{Erasure, PlayerErasure, StoreError, StoreResult};

/// Erases a player. KEYS: the wallet, the lifetime spends, the lifetime unverified
/// purchases, the idempotency records, their receive times, the ledger; then per day its
/// day spends, its unverified day spends and its player day totals; then each experiment's
/// exposures. ARGV: the player id, the tombstone, the number of days, the ledger's
/// `,"player_id":<id>,` of the player and of the tombstone, the idempotency records' name
/// prefix `<len>:<player>:` and the player id, each escaped for a `MATCH` pattern. Returns
/// how many records it changed.
pub(super) const ERASE_PLAYER_LUA: &str = include_str!("scripts/erase_player.lua");

/// How a ledger line names `player_id` (the line's `player_id` follows its `tx_id`, so a
/// comma leads, and `kind` follows, so a comma ends it): a player id's own text can never
/// hold this, since a quote inside a JSON string is always escaped.
fn ledger_needle(player_id: &str) -> StoreResult<String> {
    let id = serde_json::to_string(player_id)
        .map_err(|err| StoreError::Corrupt(format!("player id: {err}")))?;
    Ok(format!(",\"player_id\":{id},"))
}

/// The day and exposure hashes of a game and environment that may hold a player's fields.
#[derive(Default)]
struct Reach {
    days: BTreeSet<NaiveDate>,
    experiments: BTreeSet<Uuid>,
}

impl RedisStore {
    /// Every day and experiment of the game and environment that has a per-player hash,
    /// from one `SCAN` of the server that holds the game's slot.
    async fn reach(&self, game_id: Uuid, env: Environment) -> StoreResult<Reach> {
        let pattern = self.keys.env_pattern(game_id, env);
        let beside = self.keys.ledger(game_id, env);
        let mut reach = Reach::default();
        let mut cursor: u64 = 0;
        loop {
            let (next, page) = self
                .scan_page("erase_player scan", &beside, &pattern, cursor)
                .await?;
            for key in page {
                match self.keys.erasure_target(game_id, env, &key) {
                    Some(EnvKey::Day(day)) => {
                        reach.days.insert(day);
                    }
                    Some(EnvKey::Experiment(experiment)) => {
                        reach.experiments.insert(experiment);
                    }
                    None => {}
                }
            }
            if next == 0 {
                return Ok(reach);
            }
            cursor = next;
        }
    }
}

#[async_trait]
impl Erasure for RedisStore {
    async fn erase_player(&self, erasure: &PlayerErasure) -> StoreResult<u64> {
        let (game_id, env) = (erasure.game_id, erasure.env);
        // The idempotency records are in the per-player layout before they are renamed.
        let money = self.money_keys_of(game_id, env).await?;
        let player = erasure.player_id.as_str();
        let mut invocation = self.erase_script.prepare_invoke();
        invocation
            .key(self.keys.wallet(game_id, env, player))
            .key(&*money.spend)
            .key(&*money.spend_unverified)
            .key(&*money.tx)
            .key(&*money.tx_received)
            .key(&*money.ledger);
        let reach = self.reach(game_id, env).await?;
        for day in &reach.days {
            invocation
                .key(self.keys.spend_day(game_id, env, *day))
                .key(self.keys.spend_day_unverified(game_id, env, *day))
                .key(self.keys.player_days(game_id, env, *day));
        }
        for experiment in &reach.experiments {
            invocation.key(self.keys.experiment(game_id, env, *experiment));
        }
        invocation
            .arg(player)
            .arg(&erasure.tombstone)
            .arg(reach.days.len())
            .arg(ledger_needle(player)?)
            .arg(ledger_needle(&erasure.tombstone)?)
            .arg(glob_escape(&format!("{}:{player}:", player.len())))
            .arg(glob_escape(player));
        let mut conn = self.conn.clone();
        bounded(
            self.timeout,
            "erase_player",
            invocation.invoke_async(&mut conn),
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_and_needles_match_the_id_only() {
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
        assert_eq!(
            ledger_needle("p\"1").expect("needle"),
            ",\"player_id\":\"p\\\"1\","
        );
    }
}
