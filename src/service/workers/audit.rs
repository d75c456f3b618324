//! Settling the audit trail's intents that a stopped node left: any node records the change
//! an intent announced when its documents changed, and drops the intent when they did not.
//!
//! The deployment-wide intents (members, device sign-ins, the operator's settings) are
//! settled every [`IN_FLIGHT`]; each game's, kept in the game's own slot, a minute after the
//! node starts and then hourly (one read per game). A crash's interrupted changes are
//! therefore recorded about a minute after any node starts again, or within the hour.

use tokio::sync::watch;
use uuid::Uuid;

use crate::service::Services;
use crate::service::audit::intent::{IN_FLIGHT, settle_pending};
use crate::store::StoreResult;

/// Sweeps of the deployment-wide intents between two sweeps of every game's.
const GAMES_EVERY: u32 = 60;

/// Settles old intents until `shutdown` turns true.
pub async fn keep_settling(state: Services, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(IN_FLIGHT);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ticks: u32 = 0;
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = crate::service::stopped(&mut shutdown) => return,
        }
        // The first tick is at once; the first sweep of the games comes one interval later,
        // when every intent a crash left is old enough to settle.
        let games = ticks % GAMES_EVERY == 1;
        ticks = ticks.wrapping_add(1);
        match settle(&state, games).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                settled = n,
                "interrupted changes settled in the audit trail"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "settling the audit trail's intents failed; retried")
            }
        }
    }
}

/// Settles the deployment-wide intents and, when `games`, every game's; how many.
async fn settle(state: &Services, games: bool) -> StoreResult<usize> {
    let store = &*state.store;
    let mut settled = settle_pending(store, None).await?;
    if games {
        for (id, _) in store
            .list(crate::service::game::games::games_collection())
            .await?
        {
            if let Ok(game_id) = id.parse::<Uuid>() {
                settled += settle_pending(store, Some(game_id)).await?;
            }
        }
    }
    Ok(settled)
}
