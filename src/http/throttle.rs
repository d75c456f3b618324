//! The rate limits of device sign-in, kept in this node's memory (`governor`, GCRA): starting
//! a sign-in and polling for its key, per client IP; approving or denying a user code (each
//! attempt, right or wrong, since a guess cannot be told from a typo before the lookup), per
//! dashboard user and for the whole node. A refusal is a 429 `rate_limited` with
//! `Retry-After`. The limits are `device.*` in the configuration; `docs/errors.md` derives
//! the bound they put on guessing a user code.

use std::hash::Hash;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultDirectRateLimiter, DefaultKeyedRateLimiter, NotUntil, Quota, RateLimiter};

use crate::config::DeviceSettings;
use crate::service::ServiceError;

/// Checks of a keyed limiter between two sweeps of the keys whose state is back to fresh,
/// so that a flood of new addresses cannot grow its memory without bound.
const SWEEP_EVERY: u32 = 4096;

/// A limiter with one state per key, swept now and then (the dashboard's sign-in limits use
/// it too).
pub(crate) struct Keyed<K: Hash + Eq + Clone> {
    limiter: DefaultKeyedRateLimiter<K>,
    checks: AtomicU32,
}

impl<K: Hash + Eq + Clone> Keyed<K> {
    /// At most `per_minute` checks per key per minute.
    pub(crate) fn new(per_minute: NonZeroU32) -> Self {
        Self::with_quota(Quota::per_minute(per_minute))
    }

    /// At most `per_hour` checks per key per hour (a burst of all of them, then one every
    /// hour / `per_hour`).
    pub(crate) fn per_hour(per_hour: NonZeroU32) -> Self {
        Self::with_quota(Quota::per_hour(per_hour))
    }

    fn with_quota(quota: Quota) -> Self {
        Self {
            limiter: RateLimiter::keyed(quota),
            checks: AtomicU32::new(0),
        }
    }

    /// Counts one check of `key`; refused (429) past the limit.
    pub(crate) fn check(&self, key: &K) -> Result<(), ServiceError> {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(key).map_err(refusal)
    }
}

/// The answer to a refused attempt: wait until the limiter has a cell again (whole seconds,
/// at least one).
fn refusal(not_until: NotUntil<<DefaultClock as Clock>::Instant>) -> ServiceError {
    let wait = not_until.wait_time_from(DefaultClock::default().now());
    ServiceError::RateLimited(retry_after_s(wait))
}

/// Every limit of device sign-in on this node.
pub struct Throttle {
    starts: Keyed<IpAddr>,
    polls: Keyed<IpAddr>,
    guesses_by_user: Keyed<(String, String)>,
    guesses: DefaultDirectRateLimiter,
}

impl Throttle {
    /// Limits as configured.
    pub fn new(settings: &DeviceSettings) -> Self {
        Self {
            starts: Keyed::new(settings.starts_per_ip_per_minute),
            polls: Keyed::new(settings.polls_per_ip_per_minute),
            guesses_by_user: Keyed::new(settings.attempts_per_user_per_minute),
            guesses: RateLimiter::direct(Quota::per_minute(settings.attempts_per_minute)),
        }
    }

    /// A sign-in started from `ip`.
    pub fn start(&self, ip: IpAddr) -> Result<(), ServiceError> {
        self.starts.check(&ip)
    }

    /// A poll for a key from `ip`.
    pub fn poll(&self, ip: IpAddr) -> Result<(), ServiceError> {
        self.polls.check(&ip)
    }

    /// An approval or denial by user `sub` of `studio_id`: the user's own limit first, then
    /// the node's.
    pub fn attempt(&self, studio_id: &str, sub: &str) -> Result<(), ServiceError> {
        self.guesses_by_user
            .check(&(studio_id.to_owned(), sub.to_owned()))?;
        self.guesses.check().map_err(refusal)
    }
}

/// Whole seconds to wait for `wait`, rounded up, at least one.
fn retry_after_s(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}
