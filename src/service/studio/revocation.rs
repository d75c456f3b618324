//! Revoked keys and the open sockets that must hear of them at once.
//!
//! A WebSocket checks its SDK key once, before the upgrade, and then stays open: revoking the
//! key must still reach it, even when the client is idle. Each socket task holds a
//! [`RevocationWatch`] of its key, which resolves the moment the key is revoked on this node
//! (here, or on another node and heard over the bus). Nothing is looked up per message: the
//! watch wakes its task once.
//!
//! One entry per key: a key that was revoked keeps its entry for the node's lifetime (so a
//! socket that starts watching after the revocation closes at once); a live key has an
//! entry only while sockets watch it.

use std::future::Pending;
use std::sync::Arc;

use dashmap::DashMap;
use futures::future::Either;

use crate::signal::{Signal, Wait};

/// Per key hash, its revocation state.
type Keys = DashMap<String, Arc<Signal>>;

/// The keys revoked while this node runs, and the sockets watching theirs.
#[derive(Default)]
pub struct Revocations {
    keys: Arc<Keys>,
}

impl Revocations {
    /// Marks a key revoked and wakes every socket watching it.
    pub fn revoke(&self, key_hash: &str) {
        let signal = self.keys.entry(key_hash.to_owned()).or_default().clone();
        signal.fire();
    }

    /// A watch of `key_hash` that resolves once the key is revoked (at once when it already
    /// is).
    pub fn watch(&self, key_hash: &str) -> RevocationWatch {
        let signal = self.keys.entry(key_hash.to_owned()).or_default().clone();
        RevocationWatch {
            keys: self.keys.clone(),
            key_hash: key_hash.to_owned(),
            signal: Some(signal),
        }
    }
}

/// One socket's watch of its key; dropping the last watch of a live key forgets its entry.
pub struct RevocationWatch {
    keys: Arc<Keys>,
    key_hash: String,
    /// Always `Some` until the watch is dropped.
    signal: Option<Arc<Signal>>,
}

impl RevocationWatch {
    /// Resolves when the key is revoked; never resolves while it is not.
    ///
    /// A socket task polls this on every turn of its loop: after its first poll it reads the
    /// key's flag only ([`Signal::wait`]), so the future must stay with the task that first
    /// polled it.
    pub fn revoked(&self) -> Either<Wait<'_>, Pending<()>> {
        match self.signal.as_deref() {
            Some(signal) => Either::Left(signal.wait()),
            // Only `None` once dropped: never reached.
            None => Either::Right(std::future::pending()),
        }
    }
}

impl Drop for RevocationWatch {
    fn drop(&mut self) {
        drop(self.signal.take());
        // Under the map's lock: a socket subscribing at the same time either keeps the entry
        // (it subscribed first) or makes a new one (it comes after the removal).
        self.keys.remove_if(&self.key_hash, |_, signal| {
            !signal.fired() && Arc::strong_count(signal) == 1
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Whether the watch has resolved, without waiting.
    async fn resolved(watch: &RevocationWatch) -> bool {
        tokio::time::timeout(Duration::ZERO, watch.revoked())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_revocation_wakes_every_watch_of_its_key_only() {
        let r = Revocations::default();
        let a = r.watch("k1");
        let b = r.watch("k1");
        let other = r.watch("k2");
        assert!(!resolved(&a).await);
        r.revoke("k1");
        assert!(resolved(&a).await);
        assert!(resolved(&b).await);
        assert!(!resolved(&other).await);
    }

    #[tokio::test]
    async fn a_watch_kept_across_polls_is_woken_by_the_revocation() {
        let r = Arc::new(Revocations::default());
        let watch = r.watch("k1");
        let (polled_tx, polled_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut revoked = std::pin::pin!(watch.revoked());
            // Polled on several turns before the revocation, as a socket task's loop does.
            for _ in 0..3 {
                let turn = tokio::time::timeout(Duration::ZERO, revoked.as_mut());
                assert!(turn.await.is_err(), "not revoked yet");
            }
            let _ = polled_tx.send(());
            revoked.await;
        });
        polled_rx.await.expect("the task polled the watch");
        r.revoke("k1");
        let woken = tokio::time::timeout(Duration::from_secs(5), task).await;
        assert!(matches!(woken, Ok(Ok(()))), "the revocation woke the task");
    }

    #[tokio::test]
    async fn a_watch_started_after_the_revocation_resolves_at_once() {
        let r = Revocations::default();
        r.revoke("k1");
        assert!(resolved(&r.watch("k1")).await);
    }

    #[test]
    fn live_keys_are_forgotten_with_their_last_watch_and_revoked_ones_kept() {
        let r = Revocations::default();
        let a = r.watch("live");
        let b = r.watch("live");
        drop(a);
        assert!(r.keys.contains_key("live"), "one watch remains");
        drop(b);
        assert!(!r.keys.contains_key("live"));
        let c = r.watch("gone");
        r.revoke("gone");
        drop(c);
        assert!(r.keys.contains_key("gone"));
    }
}
