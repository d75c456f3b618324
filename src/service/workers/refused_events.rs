//! Adds each node's tally of refused events to the store's counters every
//! [`FLUSH_EVERY`], and drops counters older than the days kept (see
//! `service/play/refused_events.rs`).

use std::time::Duration;

use chrono::Utc;
use tokio::sync::watch;

use crate::service::Services;
use crate::service::play::refused_events::{KEEP_DAYS, collection, parse_name};

/// How often a node adds its tally to the store: the most a refusal waits to be shown.
pub const FLUSH_EVERY: Duration = Duration::from_secs(2);

/// Flushes until `shutdown` turns true, then once more, and returns.
pub async fn keep_flushing(state: Services, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(FLUSH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = crate::service::stopped(&mut shutdown) => {
                flush(&state).await;
                return;
            }
        }
        flush(&state).await;
    }
}

/// Adds every game's tally to its counters; a game whose step fails keeps its tally.
async fn flush(state: &Services) {
    let oldest = Utc::now().date_naive() - chrono::Duration::days(KEEP_DAYS);
    for (game_id, counts) in state.refusals.take() {
        let deltas: Vec<(String, i64)> = counts.iter().map(|(n, v)| (n.clone(), *v)).collect();
        match state.store.add_counters(collection(game_id), deltas).await {
            Ok(totals) => {
                // Counters past the days kept go, a few at each flush of their game.
                for (name, _) in totals {
                    if parse_name(&name).is_some_and(|(_, day, _)| day < oldest)
                        && let Err(e) = state.store.delete(collection(game_id), &name).await
                    {
                        tracing::warn!(error = %e, "dropping an old refusal counter failed");
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "counting refused events failed; kept for the next flush");
                state.refusals.restore(game_id, counts);
            }
        }
    }
}
