//! Forgetting idempotency records past `store.idempotency_retention_days`, on stores that
//! do not sweep their own (Redis).
//!
//! Every node runs the sweep at start and then hourly: for each game and environment it asks
//! the store to forget the records received before the cutoff, a chunk at a time, so no
//! single store step runs long. Two nodes sweeping at once forget the same records once.
//! The trade-off is the retention's: an event retried after it is counted again.

use std::time::Duration;

use chrono::Utc;
use offer_domain::environment::Environment;
use tokio::sync::watch;
use uuid::Uuid;

use super::{ServiceResult, Services};

/// Time between two sweeps.
const EVERY: Duration = Duration::from_secs(3600);

/// Most records one store step forgets.
const CHUNK: usize = 1000;

/// Sweeps at start and every [`EVERY`] until `shutdown` turns true.
pub async fn keep_pruning(state: Services, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = super::stopped(&mut shutdown) => return,
        }
        match prune(&state).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                forgotten = n,
                "idempotency records past their retention forgotten"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "forgetting old idempotency records failed; retried at the next sweep")
            }
        }
    }
}

/// One sweep over every game and environment; how many records were forgotten.
pub async fn prune(state: &Services) -> ServiceResult<usize> {
    let days = i64::from(state.settings.store.idempotency_retention_days);
    let before = Utc::now() - chrono::Duration::days(days);
    let mut forgotten = 0;
    for (id, _) in state.store.list(super::games::games_collection()).await? {
        let Ok(game_id) = id.parse::<Uuid>() else {
            continue;
        };
        for env in [Environment::Production, Environment::Sandbox] {
            loop {
                let n = state
                    .store
                    .forget_tx_before(game_id, env, before, CHUNK)
                    .await?;
                forgotten += n;
                if n < CHUNK {
                    break;
                }
            }
        }
    }
    Ok(forgotten)
}
