//! Decision records in Redis: each one a string key with a time to live
//! (`<prefix>:{<game_id>}:decision:<decision_id>`), which Redis forgets by itself. A
//! player's data request finds a game's records by walking its keys ([`super::scan`]).

use std::time::Duration;

use async_trait::async_trait;
use uuid::Uuid;

use super::{RedisStore, bounded};
use crate::store::{DecisionFilter, Decisions, StoreResult};

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

    async fn find_decisions(
        &self,
        game_id: Uuid,
        keep: DecisionFilter,
    ) -> StoreResult<Vec<Vec<u8>>> {
        let pattern = self.keys.decisions_pattern(game_id);
        let beside = self.keys.kill(game_id);
        let mut kept = Vec::new();
        let mut cursor: u64 = 0;
        loop {
            let (next, keys) = self
                .scan_page("find_decisions", &beside, &pattern, cursor)
                .await?;
            if !keys.is_empty() {
                // One slot (the game's hash tag), so one `MGET` per page; a record that
                // expired since the page was listed reads as nothing.
                let mut cmd = ::redis::cmd("MGET");
                cmd.arg(&keys);
                let values: Vec<Option<Vec<u8>>> = self.query("find_decisions", &cmd).await?;
                kept.extend(values.into_iter().flatten().filter(|v| keep(v)));
            }
            if next == 0 {
                return Ok(kept);
            }
            cursor = next;
        }
    }
}
