//! Decision records: what the engine decided for a player, written by every node in
//! batches and readable from any node while their time to live lasts.

use std::time::Duration;

use async_trait::async_trait;
use uuid::Uuid;

use super::StoreResult;

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
}
