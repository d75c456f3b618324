//! A rate limiter with one state per key (`governor`, GCRA), kept in this node's memory and
//! swept now and then so that a flood of new keys cannot grow it without bound. A refusal is
//! [`ServiceError::RateLimited`] with the whole seconds to wait, which both transports answer
//! as 429 `rate_limited` with `Retry-After`.

use std::hash::Hash;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, NotUntil, Quota, RateLimiter};

use crate::service::ServiceError;

/// Checks of a keyed limiter between two sweeps of the keys whose state is back to fresh,
/// so that a flood of new addresses cannot grow its memory without bound.
const SWEEP_EVERY: u32 = 4096;

/// A limiter with one state per key, swept now and then.
pub struct Keyed<K: Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
    checks: AtomicU32,
}

impl<K: Hash + Eq + Clone> Keyed<K> {
    /// At most `per_minute` checks per key per minute.
    pub fn new(per_minute: NonZeroU32) -> Self {
        Self::with_quota(Quota::per_minute(per_minute))
    }

    /// At most `per_hour` checks per key per hour (a burst of all of them, then one every
    /// hour / `per_hour`).
    pub fn per_hour(per_hour: NonZeroU32) -> Self {
        Self::with_quota(Quota::per_hour(per_hour))
    }

    fn with_quota(quota: Quota) -> Self {
        Self {
            limiter: RateLimiter::keyed(quota),
            checks: AtomicU32::new(0),
        }
    }

    /// Counts one check of `key`; refused (429) past the limit.
    pub fn check(&self, key: &K) -> Result<(), ServiceError> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(key).map_err(refusal)
    }
}

/// The answer to a refused attempt: wait until the limiter has a cell again (whole seconds,
/// at least one).
pub(super) fn refusal(not_until: NotUntil<<DefaultClock as Clock>::Instant>) -> ServiceError {
    let wait = not_until.wait_time_from(DefaultClock::default().now());
    ServiceError::RateLimited(retry_after_s(wait))
}

/// Whole seconds to wait for `wait`, rounded up, at least one.
fn retry_after_s(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}
