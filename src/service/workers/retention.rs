//! Forgetting idempotency records past `store.idempotency_retention_days`, and raw ledger
//! lines past `store.ledger_retention_days` (when set), on stores that do not sweep their
//! own (Redis); and, on every store, authoring runs past their 30 days
//! ([`runs::purge`](crate::service::authoring::runs::purge)) and audit records past
//! `audit.retention_days`.
//!
//! Every node runs the sweep at start and then hourly: for each game and environment it asks
//! the store to drop what was received before each cutoff, a chunk at a time, so no single
//! store step runs long. Two nodes sweeping at once drop the same entries once. The
//! trade-offs are the retentions': an event retried after its record is gone counts again,
//! and dropped ledger lines are only in exports taken before (the day aggregates, balances
//! and lifetime spends every economy figure reads are kept).

use std::time::Duration;

use chrono::Utc;
use offer_domain::environment::Environment;
use tokio::sync::watch;
use uuid::Uuid;

use crate::service::audit::trail;
use crate::service::{ServiceResult, Services};
use crate::store::Sweep;

/// Time between two sweeps.
const EVERY: Duration = Duration::from_secs(3600);

/// Most records one store step forgets.
const CHUNK: usize = 1000;

/// Sweeps at start and then hourly until `shutdown` turns true.
pub async fn keep_pruning(state: Services, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = crate::service::stopped(&mut shutdown) => return,
        }
        match prune(&state).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                dropped = n,
                "idempotency records, ledger lines, authoring runs and audit records past their retention dropped"
            ),
            Err(e) => {
                tracing::warn!(error = %e, "dropping entries past their retention failed; retried at the next sweep")
            }
        }
    }
}

/// One sweep over every game and environment; how many entries were dropped.
pub async fn prune(state: &Services) -> ServiceResult<usize> {
    let settings = &state.settings.store;
    let now = Utc::now();
    let before = now - chrono::Duration::days(i64::from(settings.idempotency_retention_days));
    let ledger_before = (settings.ledger_retention_days > 0)
        .then(|| now - chrono::Duration::days(i64::from(settings.ledger_retention_days)));
    let audit_before = now - chrono::Duration::days(i64::from(state.settings.audit.retention_days));
    let mut forgotten = trail::forget(&*state.store, trail::studio_log(), audit_before).await?;
    for (id, _) in state
        .store
        .list(crate::service::game::games::games_collection())
        .await?
    {
        let Ok(game_id) = id.parse::<Uuid>() else {
            continue;
        };
        forgotten += crate::service::authoring::runs::purge(state, game_id).await?;
        forgotten += trail::forget(&*state.store, trail::game_log(game_id), audit_before).await?;
        for env in [Environment::Production, Environment::Sandbox] {
            loop {
                let n = state
                    .store
                    .forget_tx_before(Sweep {
                        game_id,
                        env,
                        before,
                        limit: CHUNK,
                    })
                    .await?;
                forgotten += n;
                if n < CHUNK {
                    break;
                }
            }
            let Some(ledger_before) = ledger_before else {
                continue;
            };
            loop {
                let n = state
                    .store
                    .trim_ledger_before(Sweep {
                        game_id,
                        env,
                        before: ledger_before,
                        limit: CHUNK,
                    })
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
