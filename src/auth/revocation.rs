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

use std::sync::Arc;

use dashmap::DashMap;
use tokio::sync::watch;

/// Per key hash, `true` once the key is revoked.
type Keys = DashMap<String, watch::Sender<bool>>;

/// The keys revoked while this node runs, and the sockets watching theirs.
#[derive(Default)]
pub struct Revocations {
    keys: Arc<Keys>,
}

impl Revocations {
    /// Marks a key revoked and wakes every socket watching it.
    pub fn revoke(&self, key_hash: &str) {
        self.keys
            .entry(key_hash.to_owned())
            .or_insert_with(|| watch::channel(false).0)
            .send_replace(true);
    }

    /// A watch of `key_hash` that resolves once the key is revoked (at once when it already
    /// is).
    pub fn watch(&self, key_hash: &str) -> RevocationWatch {
        let rx = self
            .keys
            .entry(key_hash.to_owned())
            .or_insert_with(|| watch::channel(false).0)
            .subscribe();
        RevocationWatch {
            keys: self.keys.clone(),
            key_hash: key_hash.to_owned(),
            rx: Some(rx),
        }
    }
}

/// One socket's watch of its key; dropping the last watch of a live key forgets its entry.
pub struct RevocationWatch {
    keys: Arc<Keys>,
    key_hash: String,
    /// Always `Some` until the watch is dropped.
    rx: Option<watch::Receiver<bool>>,
}

impl RevocationWatch {
    /// Resolves when the key is revoked; never resolves while it is not.
    pub async fn revoked(&mut self) {
        if let Some(rx) = &mut self.rx
            && rx.wait_for(|revoked| *revoked).await.is_ok()
        {
            return;
        }
        // The sender lives as long as a receiver does, so this is never reached.
        std::future::pending::<()>().await;
    }
}

impl Drop for RevocationWatch {
    fn drop(&mut self) {
        drop(self.rx.take());
        // Under the map's lock: a socket subscribing at the same time either keeps the entry
        // (it subscribed first) or makes a new one (it comes after the removal).
        self.keys.remove_if(&self.key_hash, |_, tx| {
            !*tx.borrow() && tx.receiver_count() == 0
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Whether the watch has resolved, without waiting.
    async fn resolved(watch: &mut RevocationWatch) -> bool {
        tokio::time::timeout(Duration::ZERO, watch.revoked())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_revocation_wakes_every_watch_of_its_key_only() {
        let r = Revocations::default();
        let mut a = r.watch("k1");
        let mut b = r.watch("k1");
        let mut other = r.watch("k2");
        assert!(!resolved(&mut a).await);
        r.revoke("k1");
        assert!(resolved(&mut a).await);
        assert!(resolved(&mut b).await);
        assert!(!resolved(&mut other).await);
    }

    #[tokio::test]
    async fn a_watch_started_after_the_revocation_resolves_at_once() {
        let r = Revocations::default();
        r.revoke("k1");
        assert!(resolved(&mut r.watch("k1")).await);
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
