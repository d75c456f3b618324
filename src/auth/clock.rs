//! The time credentials are checked against: the system clock, plus an offset that only a
//! test moves ([`Clock::advance`]), so that a key's 90 days can be lived through in a test
//! against a running server instead of by rewriting its stored record. The engine itself
//! never advances it.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, Duration, Utc};

/// The system clock, shifted by an offset that starts at zero.
#[derive(Debug, Default)]
pub struct Clock {
    offset_ms: AtomicI64,
}

impl Clock {
    /// The current time as credentials see it.
    pub fn now(&self) -> DateTime<Utc> {
        let offset = Duration::milliseconds(self.offset_ms.load(Ordering::Relaxed));
        Utc::now()
            .checked_add_signed(offset)
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// Moves this clock `by` into the future (tests only).
    pub fn advance(&self, by: Duration) {
        self.offset_ms
            .fetch_add(by.num_milliseconds(), Ordering::Relaxed);
    }
}
