//! Decision records shared by every node: the task that writes this node's decisions to the
//! store behind the responses, and the lookup that falls back to the store.
//!
//! The offer path only hands a record to the [`DecisionLog`]'s bounded outbox; [`persist`]
//! takes whatever has gathered (at most [`MAX_BATCH`]), writes it with one store call per
//! game, each record kept for `offers.decision_ttl_s`, then waits [`LINGER`] so that the
//! next batch gathers instead of costing one store call per decision. A decision is
//! therefore readable from any node a moment after it was served, and for as long as its
//! time to live, across restarts. When the store cannot take a batch the records stay on
//! the deciding node only (logged, not retried: the offer path never waits for the store,
//! and the outbox must keep moving).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use uuid::Uuid;

use crate::service::play::decision_codec;
use crate::service::play::decision_log::DecisionRecord;
use crate::service::{DecisionLog, ServiceError, ServiceResult, Services};

/// Most records written in one batch.
pub const MAX_BATCH: usize = 1024;

/// Pause after each batch, so that the next one gathers.
pub const LINGER: Duration = Duration::from_millis(100);

/// Records encoded between two yields to the runtime: a full batch takes milliseconds to
/// encode, and done in one go it holds a runtime thread that requests are queued on, which
/// shows in their tail latency; in chunks of this size the queued requests run in between.
const ENCODE_CHUNK: usize = 64;

/// A decision of `game_id` as the dashboard sees it: from this node's ring when it is there
/// (no store call), otherwise from the store. Another game's decision is not found.
pub async fn find(
    state: &Services,
    game_id: Uuid,
    decision_id: Uuid,
) -> ServiceResult<serde_json::Value> {
    if let Some(record) = state
        .decisions
        .get(&decision_id)
        .filter(|r| r.game_id == game_id)
    {
        return serde_json::to_value(&*record)
            .map_err(|e| ServiceError::Internal(format!("decision record: {e}")));
    }
    match state.store.get_decision(game_id, decision_id).await? {
        Some(bytes) => Ok(decision_codec::decode(&bytes)?),
        None => Err(ServiceError::NotFound("offer")),
    }
}

/// Writes this node's decisions to the store until `shutdown` turns true, then writes what
/// is still queued and returns. Runs once per node (a second call finds the outbox taken
/// and returns at once).
pub async fn persist(state: Services, mut shutdown: watch::Receiver<bool>) {
    let Some(mut outbox) = state.decisions.take_outbox() else {
        return;
    };
    let ttl = Duration::from_secs(state.settings.offers.decision_ttl_s);
    let mut batch = Vec::with_capacity(MAX_BATCH);
    let mut reported = 0;
    loop {
        let stopping = tokio::select! {
            taken = outbox.recv_many(&mut batch, MAX_BATCH) => {
                if taken == 0 {
                    return;
                }
                false
            }
            () = crate::service::stopped(&mut shutdown) => true,
        };
        if stopping {
            drain(&state, &mut outbox, &mut batch, ttl).await;
            report_dropped(&state.decisions, &mut reported);
            return;
        }
        write(&state, &mut batch, ttl).await;
        report_dropped(&state.decisions, &mut reported);
        tokio::time::sleep(LINGER).await;
    }
}

/// Writes everything still in the outbox, a batch at a time.
async fn drain(
    state: &Services,
    outbox: &mut mpsc::Receiver<Arc<DecisionRecord>>,
    batch: &mut Vec<Arc<DecisionRecord>>,
    ttl: Duration,
) {
    while let Ok(record) = outbox.try_recv() {
        batch.push(record);
        if batch.len() == MAX_BATCH {
            write(state, batch, ttl).await;
        }
    }
    write(state, batch, ttl).await;
}

/// Writes one batch (the cap counters of its sessions, then its records; one store call
/// per game each, so each call stays in one Redis Cluster slot) and empties it.
async fn write(state: &Services, batch: &mut Vec<Arc<DecisionRecord>>, ttl: Duration) {
    // The sessions' cap counters first: a decision visible in the store means its session's
    // counters are there too.
    crate::service::play::caps::save(state, batch).await;
    let mut by_game: HashMap<Uuid, Vec<(Uuid, Vec<u8>)>> = HashMap::new();
    for (i, record) in batch.drain(..).enumerate() {
        if i > 0 && i % ENCODE_CHUNK == 0 {
            tokio::task::yield_now().await;
        }
        match decision_codec::encode(&*record) {
            Ok(bytes) => by_game
                .entry(record.game_id)
                .or_default()
                .push((record.offer_id, bytes)),
            Err(err) => tracing::warn!(error = %err, "a decision record cannot be stored"),
        }
    }
    for (game_id, records) in by_game {
        let count = records.len();
        if let Err(err) = state.store.put_decisions(game_id, records, ttl).await {
            tracing::warn!(error = %err, %game_id, count,
                "decision records not stored: only this node shows them");
        }
    }
}

/// Logs the records the outbox had no room for since the last report (`reported` of them
/// were reported before; the total is the metric `offer_decisions_unstored_total`).
fn report_dropped(log: &DecisionLog, reported: &mut u64) {
    let total = log.dropped();
    let dropped = total - *reported;
    *reported = total;
    if dropped > 0 {
        tracing::warn!(
            dropped,
            "the decision outbox was full: these decisions are shown by their node only"
        );
    }
}
