//! Settling the audit trail's intents that a stopped node left: every
//! [`IN_FLIGHT`](crate::service::audit::intent::IN_FLIGHT), any node records the change an
//! intent announced when its documents changed, and drops it when they did not. The
//! collection is empty but for changes in flight or interrupted, so a sweep is one read.

use tokio::sync::watch;

use crate::service::Services;
use crate::service::audit::intent::{IN_FLIGHT, settle_pending};

/// Settles old intents every [`IN_FLIGHT`] until `shutdown` turns true.
pub async fn keep_settling(state: Services, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(IN_FLIGHT);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = crate::service::stopped(&mut shutdown) => return,
        }
        match settle_pending(&*state.store).await {
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
