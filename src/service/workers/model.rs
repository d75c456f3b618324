//! The L1 learner shared by every node: each node adds what it learned to one set of
//! counters per game in the store and serves the totals it reads back.
//!
//! Every `offers.model_sync_ms` each game this node serves hands over the increments of its
//! learner's statistics since the last sync (natural parameters of the weights' Gaussian
//! posteriors as fixed-point integers, and the offer count that drives forgetting: sums, so
//! nodes add them in any order); they are added to the store's counters in one atomic step,
//! which returns the totals (every node's learning, and what survives a restart), and the
//! game actor serves those totals plus what it learned meanwhile. The offer path never waits
//! for this: it reads the actor's published view. A failed store step keeps the increments
//! on the node for the next sync, so nothing learned is lost or counted twice. The counters
//! are kept per half-life: a game that changes its half-life starts a new set.

use std::time::Duration;

use offer_actors::GameHandle;
use tokio::sync::watch;

use crate::service::{ServiceResult, Services};
use crate::store::Collection;

/// The counters of a game's L1 learner.
fn counters(game: &GameHandle) -> Collection {
    Collection::game(game.view().game.game_id, "l1_learner")
}

/// The prefix of the counters of one half-life: `h<offers>/`.
fn prefix(half_life_offers: u32) -> String {
    format!("h{half_life_offers}/")
}

/// Syncs every game's model until `shutdown` turns true, then syncs once more (so what
/// this node learned last is kept) and returns.
pub async fn keep_synced(state: Services, mut shutdown: watch::Receiver<bool>) {
    let every = Duration::from_millis(state.settings.offers.model_sync_ms);
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = crate::service::stopped(&mut shutdown) => {
                sync_all(&state).await;
                return;
            }
        }
        sync_all(&state).await;
    }
}

/// One sync of every game this node serves.
async fn sync_all(state: &Services) {
    for game in state.actors.games() {
        if let Err(e) = sync(state, &game).await {
            tracing::warn!(error = %e, "syncing the L1 model failed; kept for the next sync");
        }
    }
}

/// Adds what `game` learned on this node to the store's totals and serves the totals.
async fn sync(state: &Services, game: &GameHandle) -> ServiceResult<()> {
    let learned = game.take_learned().await?;
    let half_life = learned.half_life_offers;
    let prefix = prefix(half_life);
    let named = learned
        .counters
        .into_iter()
        .map(|(name, v)| (format!("{prefix}{name}"), v))
        .collect();
    let added = state.store.add_counters(counters(game), named).await;
    match added {
        Ok(totals) => {
            let ours = totals
                .into_iter()
                .filter_map(|(name, v)| Some((name.strip_prefix(&prefix)?.to_owned(), v)))
                .collect();
            game.model_synced(half_life, Some(ours)).await?;
            Ok(())
        }
        Err(e) => {
            game.model_synced(half_life, None).await?;
            Err(e.into())
        }
    }
}
