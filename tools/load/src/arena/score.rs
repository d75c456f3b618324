//! Scoring a run: each offer's expected revenue under the truth for the engine, the oracle,
//! uniform random and every single arm, and the shares of the oracle's revenue they earn
//! over a window of offers.

use offer_domain::bandit::ARM_COUNT;

/// What one offer to a scored (non-holdout) player was worth, in expected cents.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OfferScore {
    /// What the engine served: true purchase probability x price (0 for no offer).
    pub engine: f64,
    /// The expected revenue of every arm in this context.
    pub arms: [f64; ARM_COUNT],
}

impl OfferScore {
    /// The best arm's expected revenue: the oracle's.
    pub fn oracle(&self) -> f64 {
        self.arms.iter().copied().fold(0.0, f64::max)
    }

    /// The mean over the arms: uniform random's.
    pub fn uniform(&self) -> f64 {
        self.arms.iter().sum::<f64>() / ARM_COUNT as f64
    }
}

/// Shares of the oracle's expected revenue over a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shares {
    /// The engine's.
    pub engine: f64,
    /// The best single arm's, for everyone.
    pub single: f64,
    /// Uniform random's.
    pub uniform: f64,
}

/// The index of the arm with the highest expected revenue summed over `offers`: the best
/// single offer for everyone.
pub fn best_single_arm(offers: &[OfferScore]) -> usize {
    let mut sums = [0.0; ARM_COUNT];
    for o in offers {
        for (sum, r) in sums.iter_mut().zip(&o.arms) {
            *sum += r;
        }
    }
    (0..ARM_COUNT)
        .max_by(|a, b| sums[*a].total_cmp(&sums[*b]))
        .unwrap_or(0)
}

/// The shares over `offers`, the single arm being `single` (see [`best_single_arm`]); all
/// 0 when the oracle earns nothing there.
pub fn shares(offers: &[OfferScore], single: usize) -> Shares {
    let oracle: f64 = offers.iter().map(OfferScore::oracle).sum();
    if oracle <= 0.0 {
        return Shares {
            engine: 0.0,
            single: 0.0,
            uniform: 0.0,
        };
    }
    let sum = |f: &dyn Fn(&OfferScore) -> f64| offers.iter().map(f).sum::<f64>() / oracle;
    Shares {
        engine: sum(&|o| o.engine),
        single: sum(&|o| o.arms[single]),
        uniform: sum(&OfferScore::uniform),
    }
}

/// The running shares over trailing windows of `window` offers, one point every `step`
/// offers: `(offers played, shares of the window ending there)`. `single` is the arm of
/// the single-offer line.
pub fn running(
    offers: &[OfferScore],
    window: usize,
    step: usize,
    single: usize,
) -> Vec<(usize, Shares)> {
    let step = step.max(1);
    (window.max(1)..=offers.len())
        .step_by(step)
        .map(|end| (end, shares(&offers[end - window.max(1)..end], single)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An offer where arm 0 earns `a0`, arm 1 earns `a1`, the others nothing, and the
    /// engine `engine`.
    fn offer(engine: f64, a0: f64, a1: f64) -> OfferScore {
        let mut arms = [0.0; ARM_COUNT];
        arms[0] = a0;
        arms[1] = a1;
        OfferScore { engine, arms }
    }

    #[test]
    fn shares_compare_with_the_oracle_of_each_offer() {
        // The oracle earns 10 + 10; arm 0 earns 10 + 0, arm 1 earns 0 + 10.
        let offers = [offer(10.0, 10.0, 0.0), offer(5.0, 0.0, 10.0)];
        let single = best_single_arm(&offers);
        assert!(single < 2);
        let s = shares(&offers, single);
        assert!((s.engine - 0.75).abs() < 1e-12);
        assert!((s.single - 0.5).abs() < 1e-12);
        assert!((s.uniform - 20.0 / ARM_COUNT as f64 / 20.0).abs() < 1e-12);
    }

    #[test]
    fn the_best_single_arm_earns_most_over_the_window() {
        let offers = [offer(0.0, 3.0, 1.0), offer(0.0, 0.0, 4.0)];
        assert_eq!(best_single_arm(&offers), 1);
    }

    #[test]
    fn running_windows_trail_the_offers() {
        let offers: Vec<OfferScore> = (0..10)
            .map(|i| offer(if i < 5 { 0.0 } else { 1.0 }, 1.0, 0.0))
            .collect();
        let points = running(&offers, 5, 5, 0);
        assert_eq!(points.len(), 2);
        assert_eq!(points[0].0, 5);
        assert_eq!(points[0].1.engine, 0.0);
        assert_eq!(points[1].1.engine, 1.0);
    }

    #[test]
    fn an_empty_window_shares_nothing() {
        assert_eq!(shares(&[], 0).engine, 0.0);
    }
}
