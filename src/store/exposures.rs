//! Experiment exposures: per experiment, variant and player, the offers of the experiment
//! shown to the player, the purchases of them and their revenue. Every node adds to them as
//! events arrive, so an experiment's results read these totals, never the ledger.

use async_trait::async_trait;
use offer_domain::environment::Environment;
use uuid::Uuid;

use super::StoreResult;

/// Whose totals an addition is for.
#[derive(Debug, Clone, Copy)]
pub struct ExposureKey<'a> {
    /// The game.
    pub game_id: Uuid,
    /// Production or sandbox: kept apart.
    pub env: Environment,
    /// The experiment.
    pub experiment_id: Uuid,
    /// The variant's name.
    pub variant: &'a str,
    /// The external player id.
    pub player_id: &'a str,
}

/// What one player did in one variant: an addition, or the totals read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExposureTotals {
    /// Offers of the experiment shown.
    pub shown: u64,
    /// Purchases of them.
    pub purchases: u64,
    /// Their revenue in cents.
    pub revenue_cents: u64,
}

/// One player's totals in one variant of an experiment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposure {
    /// The variant's name.
    pub variant: String,
    /// The external player id.
    pub player_id: String,
    /// What the player did.
    pub totals: ExposureTotals,
}

/// The per-player totals of every experiment.
#[async_trait]
pub trait Exposures: Send + Sync {
    /// Adds `delta` to one player's totals in one variant, in one atomic step (a player
    /// never seen starts at 0).
    async fn add_exposure(&self, key: ExposureKey<'_>, delta: ExposureTotals) -> StoreResult<()>;

    /// Every player's totals in every variant of one experiment of a game and environment,
    /// in no particular order.
    async fn exposures(
        &self,
        game_id: Uuid,
        env: Environment,
        experiment_id: Uuid,
    ) -> StoreResult<Vec<Exposure>>;
}
