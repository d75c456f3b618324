//! The posterior of one arm's purchase log-odds in one context, for model views and for
//! callers that want the learner's belief rather than a draw from it.

/// Posterior of an arm's purchase log-odds in a context (the prior's offset included): a
/// Gaussian, since the weights are independent Gaussians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Posterior mean of the log-odds.
    pub mean_log_odds: f64,
    /// Posterior standard deviation of the log-odds.
    pub sd_log_odds: f64,
}

impl Estimate {
    /// The purchase probability at the posterior mean, `sigmoid(mean)`.
    pub fn conversion(&self) -> f64 {
        sigmoid(self.mean_log_odds)
    }

    /// The purchase probabilities `z` standard deviations either side of the mean:
    /// `(sigmoid(mean - z sd), sigmoid(mean + z sd))`. The sigmoid is increasing, so this is
    /// the matching interval of the probability (z = 1.96 for 95%).
    pub fn interval(&self, z: f64) -> (f64, f64) {
        let d = z.abs() * self.sd_log_odds;
        (
            sigmoid(self.mean_log_odds - d),
            sigmoid(self.mean_log_odds + d),
        )
    }
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_brackets_the_conversion() {
        let e = Estimate {
            mean_log_odds: -2.0,
            sd_log_odds: 0.5,
        };
        let p = e.conversion();
        assert!((p - 1.0 / (1.0 + 2f64.exp())).abs() < 1e-12);
        let (lo, hi) = e.interval(1.96);
        assert!(lo < p && p < hi);
        assert!((lo - sigmoid(-2.98)).abs() < 1e-12);
        assert!((hi - sigmoid(-1.02)).abs() < 1e-12);
        assert_eq!(e.interval(-1.0), e.interval(1.0));
    }
}
