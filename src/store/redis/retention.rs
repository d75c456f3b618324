//! Retention in Redis: the engine's sweep forgets old idempotency records and drops old raw
//! ledger lines, each call one script over one game's and environment's keys (one slot),
//! oldest first and at most a given number at a time.

use ::redis::Script;
use async_trait::async_trait;

use super::{RedisStore, bounded};
use crate::store::{Retention, StoreResult, Sweep};

/// Forgets the oldest idempotency records received before a time. KEYS: the records' hash,
/// the sorted set of their receive times (one game and environment: one slot). ARGV: the
/// time in Unix milliseconds (exclusive), the most records to forget. Returns how many.
pub(super) const FORGET_TX_LUA: &str = include_str!("scripts/forget_tx.lua");

/// Drops the oldest raw ledger lines received before a time. KEYS: the ledger list. ARGV:
/// the time in Unix milliseconds (exclusive), the most lines to drop. Lines are appended in
/// the order they are received, so the old ones are a prefix; a line without a receive time
/// (written before lines carried one) ends the prefix and is kept. Returns how many.
pub(super) const TRIM_LEDGER_LUA: &str = include_str!("scripts/trim_ledger.lua");

impl RedisStore {
    /// Runs a retention script over `keys` (one game's: one slot): drops at most `limit`
    /// entries received before `before`; how many it dropped.
    async fn prune(
        &self,
        what: &str,
        script: &Script,
        keys: &[String],
        sweep: Sweep,
    ) -> StoreResult<usize> {
        let mut invocation = script.prepare_invoke();
        for key in keys {
            invocation.key(key);
        }
        invocation
            .arg(sweep.before.timestamp_millis())
            .arg(sweep.limit.max(1));
        let mut conn = self.conn.clone();
        bounded(self.timeout, what, invocation.invoke_async(&mut conn)).await
    }
}

#[async_trait]
impl Retention for RedisStore {
    async fn forget_tx_before(&self, sweep: Sweep) -> StoreResult<usize> {
        let keys = [
            self.keys.tx(sweep.game_id, sweep.env),
            self.keys.tx_received(sweep.game_id, sweep.env),
        ];
        self.prune("forget_tx_before", &self.forget_script, &keys, sweep)
            .await
    }

    async fn trim_ledger_before(&self, sweep: Sweep) -> StoreResult<usize> {
        let keys = [self.keys.ledger(sweep.game_id, sweep.env)];
        self.prune("trim_ledger_before", &self.trim_script, &keys, sweep)
            .await
    }
}
