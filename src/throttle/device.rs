//! The rate limits of device sign-in, kept in this node's memory (`governor`, GCRA): starting
//! a sign-in and polling for its key, per client IP; approving or denying a user code (each
//! attempt, right or wrong, since a guess cannot be told from a typo before the lookup), per
//! dashboard user and for the whole node. A refusal is a 429 `rate_limited` with
//! `Retry-After`. The limits are `device.*` in the configuration; `docs/errors.md` derives
//! the bound they put on guessing a user code.

use std::net::IpAddr;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use super::keyed::{Keyed, refusal};
use crate::config::DeviceSettings;
use crate::service::ServiceError;

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
