//! When a session was last used, so a session without a socket can stop after its idle
//! time.
//!
//! Readers stamp it without a message to the actor: a message per request would wake the
//! actor's thread on every offer.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

/// Milliseconds since `epoch`, for lock-free "last seen" stamps.
fn millis_since(epoch: Instant) -> i64 {
    i64::try_from(epoch.elapsed().as_millis()).unwrap_or(i64::MAX)
}

/// The last use of a session, as milliseconds since the session started.
#[derive(Debug)]
pub(super) struct Activity {
    epoch: Instant,
    last_ms: AtomicI64,
}

impl Activity {
    /// A session used just now.
    pub(super) fn new() -> Self {
        Self {
            epoch: Instant::now(),
            last_ms: AtomicI64::new(0),
        }
    }

    /// Marks the session as used now.
    pub(super) fn touch(&self) {
        self.last_ms
            .store(millis_since(self.epoch), Ordering::Relaxed);
    }

    /// How long the session has not been used.
    pub(super) fn idle_for(&self) -> Duration {
        let idle = millis_since(self.epoch) - self.last_ms.load(Ordering::Relaxed);
        Duration::from_millis(u64::try_from(idle).unwrap_or(0))
    }
}
