//! Watching for a change of taste: the purchase rate of the learner's own offers over the
//! last few hundred compared with its rate over the last few thousand.
//!
//! Forgetting with a half-life of tens of thousands of offers keeps enough evidence to tell
//! close prices apart, but after players change their minds (a new season, a price change)
//! the old evidence keeps the learner confidently wrong for thousands of offers: the arms it
//! ruled out are never drawn again until their evidence fades. A shorter half-life follows
//! a change sooner and learns less the rest of the time. Instead, the learner watches the
//! purchase rate of what it offers and starts again from its prior when that rate collapses.
//!
//! The test compares two exponentially weighted windows of the learner's own (L1) offers,
//! in the spirit of ADWIN (Bifet and Gavaldà, "Learning from Time-Changing Data with
//! Adaptive Windowing", SIAM SDM 2007), which drops the older part of its window when the
//! means of two sub-windows differ significantly. Here the windows have half-lives of
//! [`SHORT_HALF_LIFE`] and [`LONG_HALF_LIFE`] offers; a change is declared when the recent
//! purchases fall below [`DROP_RATIO`] of what the long window's rate predicts for as many
//! offers, and [`Z_THRESHOLD`] standard deviations below it (a one-sided binomial z test).
//! While the learner learns, its rate rises, so the test never fires on learning itself; it
//! is armed only after [`WARM_UP`] offers since the learner started (or started again), so
//! the long window holds a rate worth comparing with.
//!
//! Offers served by other levels do not count: a game going from Autonomous to Shadow mode
//! changes what is offered, not what players want. Each node watches the offers it serves;
//! when one starts again, the others follow at their next sync (see `kernel`).
//!
//! The thresholds were set on the arena's simulated game, the learner alone: over 60 seeds,
//! every preference shift was detected 170 to 590 offers after it happened, and none of the
//! 240 runs of 16,000 offers without a shift ever started again. A z of 4 missed a shift in
//! 2 to 3 runs of 20; 2.5 started again without a shift in 6 runs of 240.

/// Half-life, in the learner's own offers, of the recent window.
pub const SHORT_HALF_LIFE: f64 = 200.0;
/// Half-life, in the learner's own offers, of the long window the recent one is compared
/// with.
pub const LONG_HALF_LIFE: f64 = 3_000.0;
/// Standard deviations below the long window's prediction at which the recent purchases
/// mean a change.
pub const Z_THRESHOLD: f64 = 3.0;
/// The recent purchases must also fall below this share of the long window's prediction:
/// with much traffic a small, harmless dip would otherwise be significant.
pub const DROP_RATIO: f64 = 0.7;
/// Offers since the learner (re)started before the test is armed.
pub const WARM_UP: u64 = 1_000;

/// This node's two windows of the learner's own offers and their purchases.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DriftWatch {
    /// Decayed counts: `[short offers, short purchases, long offers, long purchases]`.
    windows: [f64; 4],
    /// Offers watched since the learner (re)started.
    watched: u64,
}

impl DriftWatch {
    /// One offer of the learner shown: the windows age by one offer. Returns `true` when the
    /// recent purchase rate has collapsed: the learner should start again.
    pub fn shown(&mut self) -> bool {
        let short = (-1.0 / SHORT_HALF_LIFE).exp2();
        let long = (-1.0 / LONG_HALF_LIFE).exp2();
        let [sn, sy, ln, ly] = &mut self.windows;
        *sn = *sn * short + 1.0;
        *sy *= short;
        *ln = *ln * long + 1.0;
        *ly *= long;
        self.watched = self.watched.saturating_add(1);
        self.changed()
    }

    /// One of those offers bought.
    pub fn bought(&mut self) {
        self.windows[1] += 1.0;
        self.windows[3] += 1.0;
    }

    /// Forgets everything watched: the learner started again.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Whether the recent window's purchases fell significantly and markedly below what the
    /// long window's rate predicts.
    fn changed(&self) -> bool {
        let [sn, sy, ln, ly] = self.windows;
        if self.watched < WARM_UP || ln <= 0.0 {
            return false;
        }
        let rate = (ly / ln).clamp(0.0, 1.0);
        let expected = sn * rate;
        let variance = expected * (1.0 - rate);
        if variance <= 0.0 {
            return false;
        }
        let z = (sy - expected) / variance.sqrt();
        z < -Z_THRESHOLD && sy < DROP_RATIO * expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays `offers` offers selling one in `every`, returns at which offer (counted from
    /// the start of this call) the watch fired, if it did.
    fn play(w: &mut DriftWatch, offers: u64, every: u64) -> Option<u64> {
        (0..offers).find(|i| {
            let fired = w.shown();
            if i % every == 0 {
                w.bought();
            }
            fired
        })
    }

    #[test]
    fn a_steady_rate_never_fires() {
        let mut w = DriftWatch::default();
        assert_eq!(play(&mut w, 50_000, 5), None);
    }

    #[test]
    fn a_rising_rate_never_fires() {
        let mut w = DriftWatch::default();
        for every in [20, 10, 5, 3] {
            assert_eq!(play(&mut w, 3_000, every), None);
        }
    }

    #[test]
    fn a_collapse_fires_within_a_few_hundred_offers() {
        let mut w = DriftWatch::default();
        assert_eq!(play(&mut w, 5_000, 4), None);
        let at = play(&mut w, 2_000, 20).expect("a fall from 25% to 5% is a change");
        assert!(at < 400, "fired after {at} offers");
    }

    #[test]
    fn it_is_not_armed_before_the_warm_up() {
        let mut w = DriftWatch::default();
        assert_eq!(play(&mut w, WARM_UP / 2, 2), None);
        assert_eq!(play(&mut w, WARM_UP / 2 - 1, 1_000), None);
        w.reset();
        assert_eq!(play(&mut w, WARM_UP - 1, 1_000), None);
    }

    #[test]
    fn a_mild_dip_is_not_a_change() {
        let mut w = DriftWatch::default();
        assert_eq!(play(&mut w, 10_000, 4), None);
        // 25% to 20%: significant with enough offers, but not a collapse.
        assert_eq!(play(&mut w, 20_000, 5), None);
    }
}
