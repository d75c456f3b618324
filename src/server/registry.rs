//! The open connections (until their HTTP part ends; an upgraded socket leaves the registry)
//! and the sweeper that enforces their deadlines.
//!
//! One sweeper per server walks the registry a few times per shortest deadline and signals
//! the connections whose time is up. A connection thus costs no timer of its own and a
//! request none at all: a timer per request once cost the offer path a measurable share of
//! its throughput, by waking a parked runtime thread on nearly every request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use super::track::{Clock, DRAIN, Deadlines, KILL, Track};

/// The open connections.
pub(super) struct Registry {
    inner: Mutex<Inner>,
    /// Notified when the last connection leaves.
    emptied: Notify,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    open: HashMap<u64, Arc<Track>>,
}

impl Registry {
    /// An empty registry.
    pub(super) fn new() -> Self {
        Self {
            inner: Mutex::new(Inner::default()),
            emptied: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // The critical sections cannot panic half-way; a poisoned lock still holds a sound map.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a connection; the id removes it.
    pub(super) fn insert(&self, track: Arc<Track>) -> u64 {
        let mut inner = self.lock();
        let id = inner.next_id;
        inner.next_id += 1;
        inner.open.insert(id, track);
        id
    }

    /// Removes a connection.
    pub(super) fn remove(&self, id: u64) {
        let mut inner = self.lock();
        inner.open.remove(&id);
        if inner.open.is_empty() {
            self.emptied.notify_waiters();
        }
    }

    /// Tells every open connection to finish its request in flight and close.
    pub(super) fn drain_all(&self) {
        for track in self.lock().open.values() {
            track.raise(DRAIN);
        }
    }

    /// Returns once no connection is open.
    pub(super) async fn emptied(&self) {
        loop {
            let notified = self.emptied.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.lock().open.is_empty() {
                return;
            }
            notified.await;
        }
    }

    /// Advances `clock` and signals the connections past a deadline, forever: the server
    /// drops this future when it stops.
    pub(super) async fn sweep(&self, clock: &Clock, deadlines: Deadlines) {
        let shortest = deadlines
            .header_ms
            .min(deadlines.body_ms)
            .min(deadlines.idle_ms);
        // A deadline is enforced at most an eighth of itself late.
        let period = Duration::from_millis((shortest / 8).clamp(5, 250));
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut expired = Vec::new();
        loop {
            ticks.tick().await;
            let now = clock.tick();
            expired.extend(
                self.lock()
                    .open
                    .values()
                    .filter(|track| track.expired(now, &deadlines))
                    .cloned(),
            );
            for track in expired.drain(..) {
                track.raise(KILL);
            }
        }
    }
}
