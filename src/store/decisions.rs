//! Decision records: what the engine decided for a player, written by every node in
//! batches and readable from any node while their time to live lasts.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreResult;

/// Which records a scan of a game's decision records keeps, given a record's bytes.
pub type DecisionFilter = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// The decision records of every game.
#[async_trait]
pub trait Decisions: Send + Sync {
    /// Stores decision records of one game in one step, each a JSON document under its
    /// decision id, kept for `ttl` from now and then forgotten (an id written again is
    /// replaced and kept `ttl` from the new write). Nodes write their decisions here in
    /// batches, behind the responses, so that any node can show any decision.
    async fn put_decisions(
        &self,
        game_id: Uuid,
        records: Vec<(Uuid, Vec<u8>)>,
        ttl: Duration,
    ) -> StoreResult<()>;

    /// A decision record of a game, while its time to live lasts.
    async fn get_decision(&self, game_id: Uuid, decision_id: Uuid) -> StoreResult<Option<Vec<u8>>>;

    /// Every decision record of a game still within its time to live that `keep` accepts.
    /// A scan of all the game's records (of every game's, on the embedded store): for a
    /// player's data request, an admin operation, never a hot path.
    async fn find_decisions(
        &self,
        game_id: Uuid,
        keep: DecisionFilter,
    ) -> StoreResult<Vec<Vec<u8>>>;
}
