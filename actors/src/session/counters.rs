//! The per-session offer counters that frequency caps check, shared lock-free between the
//! actor and the readers on the offer path.
//!
//! A slot is reserved with a compare-exchange, so concurrent requests of one session can
//! never exceed a cap.

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
