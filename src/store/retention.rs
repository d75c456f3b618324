//! Retention: forgetting the idempotency records and raw ledger lines of old money events,
//! in bounded steps. Balances, lifetime spends and day aggregates are never forgotten.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use offer_domain::environment::Environment;
use uuid::Uuid;

use super::StoreResult;

/// One step of a sweep: the records of one game and environment received before `before`,
/// at most `limit` of them, oldest first.
#[derive(Debug, Clone, Copy)]
pub struct Sweep {
    /// The game.
    pub game_id: Uuid,
    /// Its environment.
    pub env: Environment,
    /// Records received before this instant go.
    pub before: DateTime<Utc>,
    /// At most this many go in one step.
    pub limit: usize,
}

/// The sweep of old money records, called by the engine's retention worker.
#[async_trait]
pub trait Retention: Send + Sync {
    /// Forgets the idempotency records of the sweep's events; returns how many it forgot (fewer than
    /// `limit`: none older is left). A retried event whose record is gone counts again. The
    /// embedded store sweeps its records itself on its writer (by ledger id ranges, with
    /// the raw ledger lines) and answers 0 here.
    async fn forget_tx_before(&self, sweep: Sweep) -> StoreResult<usize>;

    /// Drops the sweep's raw ledger lines; returns how many (fewer than `limit`: none older is left).
    /// Day aggregates, balances and lifetime spends are kept. The embedded store sweeps its
    /// lines itself on its writer and answers 0 here.
    async fn trim_ledger_before(&self, sweep: Sweep) -> StoreResult<usize>;
}
