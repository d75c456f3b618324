//! Decision records in Redis: each one a string key with a time to live
//! (`<prefix>:{<game_id>}:decision:<decision_id>`), which Redis forgets by itself.

use std::time::Duration;

use async_trait::async_trait;
use uuid::Uuid;

use super::{RedisStore, bounded};
use crate::store::{Decisions, StoreResult};

#[async_trait]
impl Decisions for RedisStore {
    async fn put_decisions(
        &self,
        game_id: Uuid,
        records: Vec<(Uuid, Vec<u8>)>,
        ttl: Duration,
    ) -> StoreResult<()> {
        if records.is_empty() {
            return Ok(());
        }
        // At least a millisecond: Redis refuses a time to live of 0.
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        // One transaction: the keys share the game's hash tag, so on a cluster they live in
        // one slot and `MULTI` stays legal.
        let mut pipe = ::redis::pipe();
        pipe.atomic();
        for (id, value) in &records {
            pipe.cmd("SET")
                .arg(self.keys.decision(game_id, *id))
                .arg(value)
                .arg("PX")
                .arg(ttl_ms)
                .ignore();
        }
        let mut conn = self.conn.clone();
        bounded(
            self.timeout,
            "put_decisions",
            pipe.query_async::<()>(&mut conn),
        )
        .await
    }

    async fn get_decision(&self, game_id: Uuid, decision_id: Uuid) -> StoreResult<Option<Vec<u8>>> {
        self.get_string("get_decision", self.keys.decision(game_id, decision_id))
            .await
    }
}
