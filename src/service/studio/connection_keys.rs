//! The key a kept-alive connection presented last, verified once for all its requests.
//!
//! A game client sends every request of a session on one connection with the same key.
//! Verifying it means checking its form and checksum, hashing it with SHA-256 and looking
//! the hash up in the node's cache; a connection that remembers the key it verified last
//! compares the header's text with it instead and skips all three.
//!
//! What still holds, remembered or not:
//! - a revoked key is refused on its next request: every revocation this node hears of (its
//!   own, or another node's over the bus, within the bus's delay) moves the key service's
//!   epoch, and a key remembered at an older epoch is verified again;
//! - a key expires on time: expiry is checked on every request against the service's clock;
//! - a remembered key is verified again after 30 s, as the node's cache is (a lost
//!   revocation message is bounded by the same delay);
//! - another key on the same connection is verified in full, and then remembered instead.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::keys::{AuthService, KEY_CACHE_TTL, KeyRecord};
use crate::service::ServiceResult;

/// The last key one connection presented, as verified. A connection handles one request at
/// a time, so the lock is never contended.
#[derive(Default)]
pub struct ConnectionKeys {
    last: Mutex<Option<Remembered>>,
}

/// A verified key: its text, its record, and when and at which epoch it was verified.
struct Remembered {
    token: Box<str>,
    record: Arc<KeyRecord>,
    epoch: u64,
    at: Instant,
}

impl ConnectionKeys {
    /// The record of `token` when it is the key remembered, verified at `epoch`, recently.
    fn recall(&self, token: &str, epoch: u64) -> Option<Arc<KeyRecord>> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.as_ref()
            .filter(|r| r.epoch == epoch && &*r.token == token && r.at.elapsed() < KEY_CACHE_TTL)
            .map(|r| Arc::clone(&r.record))
    }

    /// Remembers `token`, verified at `epoch`, in place of the key before it.
    fn remember(&self, token: &str, record: &Arc<KeyRecord>, epoch: u64) {
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        *last = Some(Remembered {
            token: token.into(),
            record: Arc::clone(record),
            epoch,
            at: Instant::now(),
        });
    }
}

impl AuthService {
    /// [`AuthService::key`], remembered by the connection the request came on when there is
    /// one (see the module documentation for what is still checked on every request).
    pub async fn key_on(
        &self,
        connection: Option<&ConnectionKeys>,
        token: &str,
    ) -> ServiceResult<Arc<KeyRecord>> {
        let Some(connection) = connection else {
            return self.key(token).await;
        };
        // Read before verifying: a revocation landing meanwhile leaves the remembered key
        // behind the epoch, so the next request verifies it again.
        let epoch = self.epoch();
        if let Some(record) = connection.recall(token, epoch) {
            self.live(&record)?;
            return Ok(record);
        }
        let record = self.key(token).await?;
        connection.remember(token, &record, epoch);
        Ok(record)
    }
}
