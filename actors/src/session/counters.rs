//! The per-session offer counters that frequency caps check, shared lock-free between the
//! actor and the readers on the offer path.
//!
//! A slot is reserved with a compare-exchange, so concurrent requests of one session can
//! never exceed a cap. The service keeps a copy in the store, written behind the answers,
//! and merges it back in when a session starts on another node ([`OfferCounters::merge`]).

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};

use chrono::{DateTime, Utc};
use offer_domain::game::Guardrails;

/// Counters checked by frequency caps, shared lock-free between the actor and readers.
#[derive(Debug, Default)]
pub struct OfferCounters {
    shown: AtomicU32,
    /// Unix milliseconds of the last offer, 0 when none.
    last_ms: AtomicI64,
}

impl OfferCounters {
    /// Offers served this session.
    pub fn shown(&self) -> u32 {
        self.shown.load(Ordering::Acquire)
    }

    /// When the last offer was served.
    pub fn last(&self) -> Option<DateTime<Utc>> {
        match self.last_ms.load(Ordering::Acquire) {
            0 => None,
            ms => DateTime::from_timestamp_millis(ms),
        }
    }

    /// Takes in counts kept elsewhere (the store, when the session moved from another node
    /// or the node restarted): each counter keeps the larger of its value and the given one,
    /// so a merge never lowers what this node already counted.
    pub fn merge(&self, shown: u32, last: Option<DateTime<Utc>>) {
        self.shown.fetch_max(shown, Ordering::AcqRel);
        if let Some(last) = last {
            self.last_ms
                .fetch_max(last.timestamp_millis(), Ordering::AcqRel);
        }
    }

    /// Reserves one offer slot under the guardrails' caps; `false` when a concurrent
    /// request took the last one.
    pub fn reserve(&self, guardrails: &Guardrails, now: DateTime<Utc>) -> bool {
        let max = guardrails.max_offers_per_session.unwrap_or(u32::MAX);
        let reserved = self
            .shown
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok();
        if !reserved {
            return false;
        }
        let now_ms = now.timestamp_millis();
        if let Some(interval) = guardrails.min_offer_interval_s {
            let min_gap = i64::from(interval) * 1000;
            let prev = self.last_ms.load(Ordering::Acquire);
            if prev != 0 && now_ms - prev < min_gap
                || self
                    .last_ms
                    .compare_exchange(prev, now_ms, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                self.shown.fetch_sub(1, Ordering::AcqRel);
                return false;
            }
        } else {
            self.last_ms.store(now_ms, Ordering::Release);
        }
        true
    }
}
