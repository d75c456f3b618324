//! Erasure in Redis: one script over one game's and environment's keys (they share the
//! game's hash tag, so one slot on a cluster), atomic on the server. It deletes the player's
//! wallet and renames its fields of the spend hashes, the day spend and day total hashes of
//! the days named, the idempotency records and their receive times, its ledger lines (in
//! place, by their `"player_id"`) and its fields of the experiments' exposure hashes.
//!
//! The experiments reached are the ones named by the caller (the game's current ones) and
//! every one in the game's set of exposed experiments
//! ([`Keys::experiments`](crate::store::keys::Keys::experiments)), read just before the
//! script: so an experiment deleted from the game since it counted the player is reached
//! too. An experiment whose only exposures were counted before that set was kept, and that
//! is no longer the game's, is not in it. An exposure counted between the read and the
//! script is the case of any event landing after the store step: the player's sessions are
//! closed first, and asking again erases it.
//!
//! Cost: the ledger list is read whole, and the idempotency hash, the day totals and the
//! exposure hashes are walked with `HSCAN ... MATCH`, each a pass over one game's key; the
//! script blocks that Redis (that master, on a cluster) for the length of the pass, a few
//! milliseconds per hundred thousand ledger lines. An erasure is a rare admin operation, so
//! that is acceptable; a game whose ledger outgrows the store's timeout answers 503 and
//! nothing is changed (the script is all or nothing).

use std::collections::BTreeSet;

use async_trait::async_trait;
use uuid::Uuid;

use super::{RedisStore, bounded};
use crate::store::{Erasure, PlayerErasure, StoreError, StoreResult};

/// Erases a player. KEYS: the wallet, the lifetime spends, the lifetime unverified
/// purchases, the idempotency records, their receive times, the ledger; then per day its
/// day spends, its unverified day spends and its player day totals; then each experiment's
/// exposures. ARGV: the player id, the tombstone, the number of days, the ledger's
/// `,"player_id":<id>,` of the player and of the tombstone, the idempotency records' name
/// prefix `<len>:<player>:` and the player id, each escaped for a `MATCH` pattern. Returns
/// how many records it changed.
pub(super) const ERASE_PLAYER_LUA: &str = include_str!("scripts/erase_player.lua");

/// `text` escaped for a glob-style `MATCH` pattern.
fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\' | '^' | '-') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// How a ledger line names `player_id` (the line's `player_id` follows its `tx_id`, so a
/// comma leads, and `kind` follows, so a comma ends it): a player id's own text can never
/// hold this, since a quote inside a JSON string is always escaped.
fn ledger_needle(player_id: &str) -> StoreResult<String> {
    let id = serde_json::to_string(player_id)
        .map_err(|err| StoreError::Corrupt(format!("player id: {err}")))?;
    Ok(format!(",\"player_id\":{id},"))
}

impl RedisStore {
    /// The experiments whose exposure hashes the erasure walks: the ones the caller names
    /// and every one that ever counted an exposure in the game and environment, each once.
    async fn exposed_experiments(&self, erasure: &PlayerErasure) -> StoreResult<BTreeSet<Uuid>> {
        let mut cmd = ::redis::cmd("SMEMBERS");
        cmd.arg(self.keys.experiments(erasure.game_id, erasure.env));
        let members: Vec<String> = self.query("exposed_experiments", &cmd).await?;
        let mut all: BTreeSet<Uuid> = erasure.experiments.iter().copied().collect();
        for member in members {
            all.insert(member.parse().map_err(|_| {
                StoreError::Corrupt(format!("an exposed experiment `{member}` is not an id"))
            })?);
        }
        Ok(all)
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
        for day in &erasure.days {
            invocation
                .key(self.keys.spend_day(game_id, env, *day))
                .key(self.keys.spend_day_unverified(game_id, env, *day))
                .key(self.keys.player_days(game_id, env, *day));
        }
        for experiment in self.exposed_experiments(erasure).await? {
            invocation.key(self.keys.experiment(game_id, env, experiment));
        }
        invocation
            .arg(player)
            .arg(&erasure.tombstone)
            .arg(erasure.days.len())
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
