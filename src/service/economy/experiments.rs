//! A price experiment's results: the per-player totals its offers' shows and purchases built
//! (see [`crate::service::play::exposures`]), read in one store call, grouped by variant in
//! the experiment's order and analysed by [`offer_domain::experiment_results`].
//!
//! The revenue basis is the game's: `verified` while it checks store receipts (only
//! purchases a store signed for were counted), else `reported`. Totals are kept as events
//! arrive, so a game that turned receipt checks on during an experiment keeps the reported
//! revenue counted before.

use std::collections::HashMap;

use offer_actors::GameHandle;
use offer_domain::environment::Environment;
use offer_domain::experiment_results::{self, ExperimentResults, PlayerTotals, VariantInput};
use offer_domain::holdout_arpu::RevenueBasis;
use uuid::Uuid;

use crate::service::{ServiceError, ServiceResult, Services};

/// The results of the game's experiment `experiment_id` in `env`; an experiment the game
/// does not have is not found.
pub async fn results(
    state: &Services,
    game: &GameHandle,
    env: Environment,
    experiment_id: Uuid,
) -> ServiceResult<ExperimentResults> {
    let (game_id, experiment, basis) = {
        let view = game.view();
        let experiment = view
            .experiments
            .iter()
            .find(|x| x.experiment_id == experiment_id)
            .cloned()
            .ok_or(ServiceError::NotFound("experiment"))?;
        let basis = if view.stores.verification.is_on() {
            RevenueBasis::Verified
        } else {
            RevenueBasis::Reported
        };
        (view.game.game_id, experiment, basis)
    };
    let rows = state.store.exposures(game_id, env, experiment_id).await?;
    // Ranking the payers sorts them: on a blocking thread, not the request threads.
    tokio::task::spawn_blocking(move || {
        let mut by_variant: HashMap<String, Vec<PlayerTotals>> = HashMap::new();
        for row in rows {
            by_variant
                .entry(row.variant)
                .or_default()
                .push(PlayerTotals {
                    shown: row.totals.shown,
                    purchases: row.totals.purchases,
                    revenue_cents: row.totals.revenue_cents,
                });
        }
        let inputs: Vec<VariantInput<'_>> = experiment
            .variants
            .iter()
            .map(|v| VariantInput {
                name: &v.name,
                weight: v.weight,
                players: by_variant.get(&v.name).map_or(&[], Vec::as_slice),
            })
            .collect();
        let mut results =
            experiment_results::analyse(experiment_id, env, experiment.min_sample, &inputs);
        results.revenue_basis = basis;
        results
    })
    .await
    .map_err(|e| ServiceError::Internal(format!("experiment results: {e}")))
}
