//! Walking the keys of one game: `SCAN` with a pattern, sent to the server that holds the
//! game's hash slot (on a cluster its master, where `SCAN` walks that master's keys; a
//! command that names no key would otherwise go to any node). Each page is a short command
//! between which the server serves everyone else; a walk costs about a microsecond per key
//! the server holds. For rare admin operations only (a player's erasure and data export).

use super::{RedisStore, bounded};
use crate::store::StoreResult;

/// How many keys one `SCAN` page asks the server to walk.
const SCAN_PAGE: u32 = 1000;

impl RedisStore {
    /// One page of the keys matching `pattern` on the server holding `beside` (a key of
    /// the game) from `cursor`: the next cursor (0 once the walk is done) and the keys found.
    pub(super) async fn scan_page(
        &self,
        what: &str,
        beside: &str,
        pattern: &str,
        cursor: u64,
    ) -> StoreResult<(u64, Vec<String>)> {
        let mut cmd = ::redis::cmd("SCAN");
        cmd.arg(cursor)
            .arg("MATCH")
            .arg(pattern)
            .arg("COUNT")
            .arg(SCAN_PAGE);
        let mut conn = self.conn.clone();
        bounded(self.timeout, what, conn.query_beside(beside, cmd)).await
    }
}
