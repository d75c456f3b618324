//! The approval simulation: 10,000 Monte Carlo trials of what an offer would do to the
//! economy's 7-day faucet/sink ratio if it served to the players active now.
//!
//! **Population.** The players active in the last 7 days, each with its observed 7-day
//! earned and spent amounts (weighed as the FSR report weighs currencies: USD per unit, or
//! raw units) and its L1 segment. They are summarised once into buckets: a bucket is a
//! segment crossed with an earned class and a spent class (0, then one class per power of
//! two), holding the count and the mean and variance of the amounts inside it. A trial then
//! costs the same for 1,000 or 1,000,000 players.
//!
//! **One trial**, for each bucket of `n` players:
//! - the number of takers is `Binomial(n, p)`, `p` the L1 model's posterior mean for the
//!   offer's arm in the bucket's segment (its prior where the arm was never shown);
//! - the bucket's earned and spent totals are the sum of `n` amounts resampled from the
//!   bucket's observed ones, drawn as that sum's distribution: normal with mean `n x mean`
//!   and variance `n x variance` (inside a bucket the amounts differ by at most a factor of
//!   two, so the sum is close to normal even for small `n`);
//! - each taker adds the offer's currency grant to earned and the `earned_price` of its
//!   items to spent.
//!
//! Sums of these draws over buckets are drawn directly (one Binomial per segment, one normal
//! per side: see [`Simulation::run`]), so a trial makes at most eleven draws. The totals are
//! kept at 0 or above. The trial's projected FSR is total earned over total spent. `pass_rate` is the share of
//! trials whose FSR lands in the genre's healthy range, ends included; `aggregate_fsr` is
//! the median trial and `fsr_bounds` the 5th and 95th percentiles (nearest rank). A trial
//! in which nothing is spent has no ratio: it counts as outside the range and sorts above
//! every ratio (pure faucet), so a bound that falls on such trials is `null`, as is
//! everything when no player is active.

use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Binomial, Distribution, StandardNormal};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::bandit::{SEGMENT_COUNT, Segment};
use crate::economy::Quadrant;
use crate::fsr::Thresholds;

/// Trials per simulation.
pub const TRIALS: usize = 10_000;
/// Amount classes per side: 0, then `[2^(c-1), 2^c)` for `c` up to the last, which takes
/// everything above.
const CLASSES: usize = 48;

/// One active player as the simulation sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ObservedPlayer {
    /// Its L1 segment, which gives its chance of taking the offer.
    pub segment: Segment,
    /// Earned over the last 7 days, weighted.
    pub earned: f64,
    /// Spent over the last 7 days, weighted.
    pub spent: f64,
}

/// Running count, mean and squared deviations of one side of a bucket (Welford).
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    mean: f64,
    m2: f64,
}

impl Moments {
    fn add(&mut self, n: u64, x: f64) {
        let delta = x - self.mean;
        self.mean += delta / n as f64;
        self.m2 += delta * (x - self.mean);
    }

    /// Population variance of the `n` amounts seen.
    fn variance(&self, n: u64) -> f64 {
        if n == 0 { 0.0 } else { self.m2 / n as f64 }
    }
}

/// Players of one segment with alike earned and spent amounts.
#[derive(Debug, Clone)]
struct Bucket {
    segment: Segment,
    n: u64,
    earned: Moments,
    spent: Moments,
}

/// The active population, summarised once.
#[derive(Debug, Clone, Default)]
pub struct Population {
    buckets: Vec<Bucket>,
    players: u64,
}

impl Population {
    /// Buckets the players: one pass, memory bounded by the number of buckets.
    pub fn summarise(players: impl IntoIterator<Item = ObservedPlayer>) -> Self {
        let mut index: std::collections::HashMap<(usize, usize, usize), usize> =
            std::collections::HashMap::new();
        let mut out = Self::default();
        for p in players {
            let (earned, spent) = (clean(p.earned), clean(p.spent));
            let key = (p.segment.index(), class(earned), class(spent));
            let at = *index.entry(key).or_insert_with(|| {
                out.buckets.push(Bucket {
                    segment: p.segment,
                    n: 0,
                    earned: Moments::default(),
                    spent: Moments::default(),
                });
                out.buckets.len() - 1
            });
            if let Some(b) = out.buckets.get_mut(at) {
                b.n += 1;
                b.earned.add(b.n, earned);
                b.spent.add(b.n, spent);
            }
            out.players += 1;
        }
        out
    }

    /// Number of players summarised.
    pub fn players(&self) -> u64 {
        self.players
    }

    /// Number of buckets: what one trial's cost grows with.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }

    /// The player count of each segment that has players: the Binomial draws of one trial
    /// (the benchmark's baseline makes the same draws without the model around them).
    pub fn segment_sizes(&self) -> Vec<u64> {
        let mut sizes = [0u64; SEGMENT_COUNT];
        for b in &self.buckets {
            if let Some(count) = sizes.get_mut(b.segment.index()) {
                *count += b.n;
            }
        }
        sizes.into_iter().filter(|n| *n > 0).collect()
    }
}

/// A negative, NaN or infinite amount is a fault upstream; it counts as 0.
fn clean(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 { x } else { 0.0 }
}

/// The amount class of a cleaned amount.
fn class(x: f64) -> usize {
    if x <= 0.0 {
        return 0;
    }
    // 1 + floor(log2(x)) for x >= 1; amounts below one unit share class 1.
    let bits = if x < 1.0 { 0.0 } else { x.log2().floor() };
    (1 + bits as usize).min(CLASSES - 1)
}

/// The offer under review, as the economy sees one taker of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OfferEffect {
    /// Chance that one player of each segment takes it, by [`Segment::index`].
    pub take_rate: [f64; SEGMENT_COUNT],
    /// Weighted currency one taker receives (faucet).
    pub grant: f64,
    /// Weighted earned currency one taker pays (sink).
    pub sink: f64,
}

/// Where the game stands: the range the projection is judged against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GenreContext {
    /// The game's genre.
    pub genre: String,
    /// Lowest healthy FSR.
    pub healthy_fsr_min: f64,
    /// Highest healthy FSR.
    pub healthy_fsr_max: f64,
    /// The game's quadrant now; `null` before anything moved.
    pub quadrant: Option<Quadrant>,
}

/// The 5th and 95th percentile of the trials' projected FSR.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FsrBounds {
    /// 5th percentile; `null` when it falls on trials with nothing spent.
    pub lower: Option<f64>,
    /// 95th percentile; `null` when it falls on trials with nothing spent.
    pub upper: Option<f64>,
}

/// The simulation's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SimulationResult {
    /// `pass_rate` reached the configured threshold.
    pub pass: bool,
    /// Share of trials whose projected 7-day FSR is in the healthy range.
    pub pass_rate: f64,
    /// Trials run.
    pub monte_carlo_runs: u32,
    /// Players active in the last 7 days, the population simulated.
    pub n_players: u64,
    /// Median projected FSR; `null` when it falls on trials with nothing spent.
    pub aggregate_fsr: Option<f64>,
    /// 5th and 95th percentiles of the projected FSR.
    pub fsr_bounds: FsrBounds,
    /// The genre's healthy range and the game's quadrant.
    pub genre_context: GenreContext,
    /// The seed of the trials' random numbers: simulating again with it gives this result
    /// again on the same population.
    pub seed: u64,
}

/// What one simulation runs with.
#[derive(Debug, Clone)]
pub struct Simulation<'a> {
    /// The active population.
    pub population: &'a Population,
    /// The offer.
    pub offer: OfferEffect,
    /// The genre's healthy range.
    pub thresholds: Thresholds,
    /// Share of trials in range needed to pass.
    pub pass_threshold: f64,
    /// Trials to run ([`TRIALS`] in the engine; fewer in quick tests).
    pub trials: usize,
    /// Seed of the trials' random numbers: the same seed gives the same result.
    pub seed: u64,
}

/// The draws of one trial, prepared once per simulation from the buckets.
///
/// The takers of every bucket of one segment share the segment's take rate, so their sum
/// is one `Binomial(players of the segment, p)`; the resampled totals of the buckets are
/// independent normals, so their sum is one normal with the summed means and variances.
/// A trial therefore draws one Binomial per segment and two normals, whatever the number of
/// players or buckets, and has exactly the distribution of the per-bucket draws (the total
/// is kept at 0 or above instead of each bucket's).
struct Prepared {
    takers: Vec<Binomial>,
    earned_mean: f64,
    earned_sd: f64,
    spent_mean: f64,
    spent_sd: f64,
}

impl Simulation<'_> {
    /// Runs the trials. `genre_context` is passed through to the result.
    pub fn run(&self, genre_context: GenreContext) -> SimulationResult {
        let prepared = self.prepare();
        let mut rng = StdRng::seed_from_u64(self.seed);
        let (min, max) = (self.thresholds.min, self.thresholds.max);
        let mut ratios: Vec<f64> = Vec::with_capacity(self.trials);
        let mut in_range = 0usize;
        for _ in 0..self.trials {
            let takers: u64 = prepared.takers.iter().map(|d| d.sample(&mut rng)).sum();
            let z_e: f64 = StandardNormal.sample(&mut rng);
            let z_s: f64 = StandardNormal.sample(&mut rng);
            let takers = takers as f64;
            let earned = (prepared.earned_mean + prepared.earned_sd * z_e).max(0.0)
                + takers * self.offer.grant;
            let spent =
                (prepared.spent_mean + prepared.spent_sd * z_s).max(0.0) + takers * self.offer.sink;
            // Nothing spent: no ratio, sorted above every ratio (pure faucet).
            let ratio = if spent > 0.0 {
                earned / spent
            } else {
                f64::INFINITY
            };
            if ratio.is_finite() && ratio >= min && ratio <= max {
                in_range += 1;
            }
            ratios.push(ratio);
        }
        ratios.sort_unstable_by(f64::total_cmp);
        let pass_rate = if self.trials == 0 {
            0.0
        } else {
            in_range as f64 / self.trials as f64
        };
        SimulationResult {
            pass: self.population.players > 0 && pass_rate >= self.pass_threshold,
            pass_rate,
            monte_carlo_runs: u32::try_from(self.trials).unwrap_or(u32::MAX),
            n_players: self.population.players,
            aggregate_fsr: percentile(&ratios, 50),
            fsr_bounds: FsrBounds {
                lower: percentile(&ratios, 5),
                upper: percentile(&ratios, 95),
            },
            genre_context,
            seed: self.seed,
        }
    }

    fn prepare(&self) -> Prepared {
        let mut per_segment = [0u64; SEGMENT_COUNT];
        let (mut earned_mean, mut earned_var, mut spent_mean, mut spent_var) = (0.0, 0.0, 0.0, 0.0);
        for b in &self.population.buckets {
            if let Some(count) = per_segment.get_mut(b.segment.index()) {
                *count += b.n;
            }
            let n = b.n as f64;
            earned_mean += n * b.earned.mean;
            earned_var += n * b.earned.variance(b.n);
            spent_mean += n * b.spent.mean;
            spent_var += n * b.spent.variance(b.n);
        }
        let takers = per_segment
            .iter()
            .zip(self.offer.take_rate)
            .filter(|(n, _)| **n > 0)
            .filter_map(|(n, p)| {
                let p = if p.is_finite() {
                    p.clamp(0.0, 1.0)
                } else {
                    0.0
                };
                Binomial::new(*n, p).ok()
            })
            .collect();
        Prepared {
            takers,
            earned_mean,
            earned_sd: earned_var.sqrt(),
            spent_mean,
            spent_sd: spent_var.sqrt(),
        }
    }
}

/// The nearest-rank `pct` percentile of sorted values; `None` when there are none or it is
/// a trial without a ratio.
fn percentile(sorted: &[f64], pct: usize) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (pct * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandit::{Platform, SpenderTier};

    const SEGMENT: Segment = Segment {
        platform: Platform::Other,
        tier: SpenderTier::NonPayer,
    };

    fn context() -> GenreContext {
        GenreContext {
            genre: "rpg".into(),
            healthy_fsr_min: 0.8,
            healthy_fsr_max: 1.5,
            quadrant: Some(Quadrant::Healthy),
        }
    }

    /// `n` players earning `earned` and spending `spent` each, give or take 10%.
    fn population(n: usize, earned: f64, spent: f64) -> Population {
        Population::summarise((0..n).map(|i| {
            let wobble = 0.9 + 0.2 * (i % 10) as f64 / 10.0;
            ObservedPlayer {
                segment: SEGMENT,
                earned: earned * wobble,
                spent: spent * wobble,
            }
        }))
    }

    fn run(pop: &Population, grant: f64, sink: f64, rate: f64, seed: u64) -> SimulationResult {
        Simulation {
            population: pop,
            offer: OfferEffect {
                take_rate: [rate; SEGMENT_COUNT],
                grant,
                sink,
            },
            thresholds: Thresholds { min: 0.8, max: 1.5 },
            pass_threshold: 0.95,
            trials: 2_000,
            seed,
        }
        .run(context())
    }

    #[test]
    fn the_same_seed_gives_the_same_result_and_another_seed_another() {
        let pop = population(5_000, 100.0, 90.0);
        let a = run(&pop, 500.0, 0.0, 0.05, 7);
        assert_eq!(a, run(&pop, 500.0, 0.0, 0.05, 7));
        assert_ne!(
            a.aggregate_fsr,
            run(&pop, 500.0, 0.0, 0.05, 8).aggregate_fsr
        );
        assert_eq!(a.monte_carlo_runs, 2_000);
        assert_eq!(a.n_players, 5_000);
    }

    #[test]
    fn a_large_grant_in_an_inflating_economy_fails_and_a_sink_in_a_healthy_one_passes() {
        // Earned 140 for 100 spent: inflating but inside 0.8..1.5; a big grant pushes it out.
        let inflating = population(5_000, 140.0, 100.0);
        let grant = run(&inflating, 2_000.0, 0.0, 0.2, 1);
        assert!(!grant.pass, "{grant:?}");
        assert!(grant.pass_rate < 0.05);
        assert!(grant.aggregate_fsr.is_some_and(|f| f > 1.5));
        // A healthy economy; the offer only takes earned currency out, a little.
        let healthy = population(5_000, 110.0, 100.0);
        let sink = run(&healthy, 0.0, 20.0, 0.05, 1);
        assert!(sink.pass, "{sink:?}");
        assert!(sink.pass_rate >= 0.95);
        let (lo, hi) = (sink.fsr_bounds.lower, sink.fsr_bounds.upper);
        assert!(lo.zip(hi).is_some_and(|(lo, hi)| lo <= hi));
        assert!(sink.aggregate_fsr.is_some_and(|f| f < 1.1));
    }

    #[test]
    fn nobody_active_gives_no_ratio_and_no_pass() {
        let r = run(&Population::default(), 10.0, 0.0, 0.5, 1);
        assert!(!r.pass);
        assert_eq!(r.pass_rate, 0.0);
        assert_eq!((r.n_players, r.aggregate_fsr), (0, None));
        assert_eq!(r.fsr_bounds.lower, None);
    }

    #[test]
    fn a_population_without_spending_is_a_pure_faucet() {
        let r = run(&population(100, 50.0, 0.0), 0.0, 0.0, 0.1, 3);
        assert_eq!(r.pass_rate, 0.0);
        assert_eq!(r.aggregate_fsr, None);
    }

    #[test]
    fn a_trial_costs_the_same_for_a_thousand_or_a_million_players() {
        // Same amounts, so the same buckets: the trials draw the same number of numbers.
        let small = population(1_000, 100.0, 90.0);
        let large = population(1_000_000, 100.0, 90.0);
        assert_eq!(small.buckets(), large.buckets());
        assert_eq!(large.players(), 1_000_000);
        assert_eq!(large.segment_sizes(), vec![1_000_000]);
    }

    #[test]
    fn amount_classes_are_powers_of_two() {
        assert_eq!(class(0.0), 0);
        assert_eq!(class(0.5), 1);
        assert_eq!(class(1.0), 1);
        assert_eq!(class(2.0), 2);
        assert_eq!(class(3.9), 2);
        assert_eq!(class(4.0), 3);
        assert_eq!(class(f64::MAX), CLASSES - 1);
        assert_eq!(clean(f64::NAN), 0.0);
        assert_eq!(clean(-3.0), 0.0);
    }

    #[test]
    fn percentiles_take_the_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 5), Some(5.0));
        assert_eq!(percentile(&v, 50), Some(50.0));
        assert_eq!(percentile(&v, 95), Some(95.0));
        assert_eq!(percentile(&[1.0, f64::INFINITY], 95), None);
        assert_eq!(percentile(&[], 50), None);
    }
}
