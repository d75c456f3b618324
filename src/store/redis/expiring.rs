//! Short-lived documents in Redis: each one a string key with a time to live
//! (`<prefix>:global:ttl:<collection>:<id>` or `<prefix>:{<game_id>}:ttl:<collection>:<id>`),
//! which Redis forgets by itself.

use std::time::Duration;

use async_trait::async_trait;

use super::{RedisStore, bounded};
use crate::store::{Collection, Expiring, StoreResult};

/// Compare-and-swap of a short-lived document, keeping its time to live. KEYS: the
/// document's key. ARGV: expected value, new value.
pub(super) const SWAP_EXPIRING_LUA: &str = include_str!("scripts/swap_expiring.lua");

#[async_trait]
impl Expiring for RedisStore {
    async fn insert_expiring(
        &self,
        coll: Collection,
        id: &str,
        value: Vec<u8>,
        ttl: Duration,
    ) -> StoreResult<bool> {
        // At least a millisecond: Redis refuses a time to live of 0.
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let mut cmd = ::redis::cmd("SET");
        cmd.arg(self.keys.expiring(coll, id))
            .arg(value)
            .arg("PX")
            .arg(ttl_ms)
            .arg("NX");
        let written: Option<String> = self.query("insert_expiring", &cmd).await?;
        Ok(written.is_some())
    }

    async fn get_expiring(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>> {
        self.get_string("get_expiring", self.keys.expiring(coll, id))
            .await
    }

    async fn swap_expiring(
        &self,
        coll: Collection,
        id: &str,
        expected: &[u8],
        new: Vec<u8>,
    ) -> StoreResult<bool> {
        let mut invocation = self.swap_expiring_script.key(self.keys.expiring(coll, id));
        invocation.arg(expected).arg(new);
        let mut conn = self.conn.clone();
        let swapped: i64 = bounded(
            self.timeout,
            "swap_expiring",
            invocation.invoke_async(&mut conn),
        )
        .await?;
        Ok(swapped == 1)
    }
}
