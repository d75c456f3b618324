//! Exponential backoff with full jitter for reconnecting and resending: each failure doubles
//! the ceiling (from `base` up to `cap`), and the wait is a random point below it, so many
//! clients cut off together do not come back together.

use std::time::Duration;

/// The retry schedule of one loop; reset after a success.
#[derive(Debug, Clone)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    failures: u32,
}

impl Backoff {
    /// A schedule starting at `base` and never waiting more than `cap`.
    pub fn new(base: Duration, cap: Duration) -> Self {
        Self {
            base,
            cap,
            failures: 0,
        }
    }

    /// The wait before the next attempt, after one more failure.
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = self
            .base
            .saturating_mul(2u32.saturating_pow(self.failures.min(16)))
            .min(self.cap);
        self.failures = self.failures.saturating_add(1);
        ceiling.mul_f64(rand::random::<f64>()).max(self.base / 2)
    }

    /// Back to the first step, after a success.
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_stay_under_the_cap_and_reset() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(2));
        for _ in 0..40 {
            let d = b.next_delay();
            assert!(
                d <= Duration::from_secs(2) && d >= Duration::from_millis(50),
                "{d:?}"
            );
        }
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(100));
    }
}
