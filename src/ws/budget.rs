//! The budget of refused messages a socket may send before it is closed with 1007.
//!
//! A token bucket: the socket starts with [`CAPACITY`] tokens, each refused message spends
//! one, and one token comes back every [`REFILL`] up to the capacity. A refused message that
//! finds the bucket empty closes the socket. Valid messages do not refill it, so a client
//! cannot keep a stream of malformed messages going by slipping a valid one in between; a
//! client that makes an occasional mistake never runs out.
//!
//! Each refused message is answered with an `error`, so the budget also bounds how many
//! answers a client that never reads can make the server write.

use std::time::Duration;

use tokio::time::Instant;

/// Refused messages a socket may send in a burst.
pub const CAPACITY: u32 = 3;
/// How long the bucket takes to win one token back.
pub const REFILL: Duration = Duration::from_secs(10);

/// One socket's budget.
#[derive(Debug)]
pub struct Budget {
    tokens: u32,
    /// When the tokens were last counted: refills are measured from here.
    counted_at: Instant,
}

impl Budget {
    /// A full bucket at `now`.
    pub fn new(now: Instant) -> Self {
        Self {
            tokens: CAPACITY,
            counted_at: now,
        }
    }

    /// Spends one token for a refused message at `now`; `false` when none is left (the
    /// socket is to be closed).
    pub fn spend(&mut self, now: Instant) -> bool {
        self.refill(now);
        match self.tokens.checked_sub(1) {
            Some(left) => {
                self.tokens = left;
                true
            }
            None => false,
        }
    }

    /// Adds the tokens earned since the last count, keeping the time of a partly earned one.
    fn refill(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.counted_at);
        let earned = elapsed.as_nanos() / REFILL.as_nanos();
        if self.tokens >= CAPACITY {
            self.counted_at = now;
        } else if earned > 0 {
            let earned = u32::try_from(earned).unwrap_or(u32::MAX);
            self.tokens = self.tokens.saturating_add(earned).min(CAPACITY);
            // A whole number of refill periods forward: the remainder counts towards the next.
            self.counted_at = if self.tokens == CAPACITY {
                now
            } else {
                self.counted_at + REFILL * earned
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_spends_the_capacity_then_runs_out() {
        let t = Instant::now();
        let mut b = Budget::new(t);
        for _ in 0..CAPACITY {
            assert!(b.spend(t));
        }
        assert!(!b.spend(t));
    }

    #[test]
    fn one_token_comes_back_per_refill_period_up_to_the_capacity() {
        let t = Instant::now();
        let mut b = Budget::new(t);
        for _ in 0..CAPACITY {
            assert!(b.spend(t));
        }
        // Not quite one period: still empty.
        assert!(!b.spend(t + REFILL - Duration::from_millis(1)));
        // One period: one token, spent at once.
        assert!(b.spend(t + REFILL));
        assert!(!b.spend(t + REFILL));
        // A long pause refills to the capacity, never above it.
        let later = t + REFILL * 100;
        for _ in 0..CAPACITY {
            assert!(b.spend(later));
        }
        assert!(!b.spend(later));
    }

    #[test]
    fn partial_periods_add_up() {
        let t = Instant::now();
        let mut b = Budget::new(t);
        for _ in 0..CAPACITY {
            assert!(b.spend(t));
        }
        // Two looks at 0.6 periods each: the second completes the first token.
        assert!(!b.spend(t + REFILL.mul_f64(0.6)));
        assert!(b.spend(t + REFILL.mul_f64(1.2)));
    }

    #[test]
    fn a_full_bucket_does_not_bank_time() {
        let t = Instant::now();
        let mut b = Budget::new(t);
        // A long quiet time while full, then a burst: only the capacity is available.
        let later = t + REFILL * 50;
        for _ in 0..CAPACITY {
            assert!(b.spend(later));
        }
        assert!(!b.spend(later));
    }
}
