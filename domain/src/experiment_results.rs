//! The results of a price experiment: per variant, the players exposed (shown at least one
//! offer the experiment priced), the players among them who bought one, conversion, offers
//! shown, purchases and revenue per exposed player; each variant against the first (the
//! control) with its tests; and the sample-ratio-mismatch check of the assignment.
//!
//! Every statistic matches a reference implementation (the fixture script
//! `tools/fixtures/experiment_results.py` writes what the domain tests check):
//!
//! - conversion: the pooled two-proportion z-test, two-sided, as statsmodels'
//!   `proportions_ztest([x_v, x_c], [n_v, n_c])`, and the 95% Wald interval of the
//!   difference, as `confint_proportions_2indep(..., method="wald", compare="diff")`;
//! - revenue per exposed player: the two-sided Mann-Whitney U of [`mann_whitney::two_sided`]
//!   (scipy's `mannwhitneyu(..., alternative="two-sided", method="asymptotic")`), and the
//!   Welch 95% interval of the mean difference (statsmodels'
//!   `CompareMeans.tconfint_diff(usevar="unequal")`), which is descriptive only: revenue is
//!   heavily skewed, so the rank test is the one that decides;
//! - sample ratio: Pearson's chi-square goodness of fit of the distinct exposed players
//!   against the configured weights (scipy's `chisquare`), a mismatch below
//!   [`SRM_ALPHA`].
//!
//! Conventions where the references answer nothing (`nan`, or refuse): a test with an empty
//! group or no variation has `p = 1` and no statistic; an interval that cannot be formed is
//! `null`.

use serde::Serialize;
use statrs::distribution::{ChiSquared, ContinuousCDF, Normal, StudentsT};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::environment::Environment;
use crate::holdout_arpu::RevenueBasis;
use crate::mann_whitney::{self, Group};

/// A sample-ratio p-value below this flags a mismatch: the assignment or the exposure is
/// broken, and the comparison is not to be trusted.
pub const SRM_ALPHA: f64 = 0.001;
/// Coverage of the intervals.
const CONFIDENCE: f64 = 0.95;

/// What one player of an experiment did, as kept while events arrive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlayerTotals {
    /// Offers of the experiment shown to the player.
    pub shown: u64,
    /// Purchases of those offers.
    pub purchases: u64,
    /// Their revenue in cents.
    pub revenue_cents: u64,
}

/// One variant's players, as the analysis reads them.
#[derive(Debug, Clone, Copy)]
pub struct VariantInput<'a> {
    /// The variant's name.
    pub name: &'a str,
    /// Its configured weight.
    pub weight: u32,
    /// Every player with totals in it, in any order; those never shown an offer are left out
    /// of every figure (a purchase reported without its show exposes no one).
    pub players: &'a [PlayerTotals],
}

/// The results of one experiment in one environment.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExperimentResults {
    /// The experiment.
    pub experiment_id: Uuid,
    /// Production or sandbox.
    pub environment: Environment,
    /// `true` until every variant with a positive weight has `min_sample` exposed players:
    /// until then the figures may move a lot and no decision should be made on them.
    pub provisional: bool,
    /// Exposed players each variant needs before the results stop being provisional.
    pub min_sample: u64,
    /// `verified` while the game checks store receipts (only purchases a store signed for
    /// count), else `reported`.
    pub revenue_basis: RevenueBasis,
    /// The control: the first variant, which every other is compared against.
    pub control: String,
    /// Every variant, in the order the experiment lists them.
    pub variants: Vec<VariantResult>,
    /// Whether the exposed players split as the weights say.
    pub sample_ratio: SampleRatio,
}

/// One variant's figures.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VariantResult {
    /// The variant's name.
    pub name: String,
    /// Its configured weight.
    pub weight: u32,
    /// Players shown at least one offer the experiment priced in this variant.
    pub exposed_players: u64,
    /// Exposed players who bought at least one of those offers.
    pub buyers: u64,
    /// Buyers over exposed players (0 with no exposed player).
    pub conversion: f64,
    /// Offers of the experiment shown to exposed players.
    pub offers_shown: u64,
    /// Purchases of those offers by exposed players.
    pub purchases: u64,
    /// Their revenue, in USD.
    pub revenue_usd: f64,
    /// Revenue over exposed players, in USD (0 with no exposed player).
    pub revenue_per_exposed_usd: f64,
    /// This variant against the control; `null` for the control itself.
    pub versus_control: Option<Comparison>,
}

/// A variant against the control (variant minus control).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Comparison {
    /// Difference in conversion.
    pub conversion_diff: f64,
    /// The pooled two-proportion z statistic; `null` when a group is empty or no player
    /// of either bought (or every one did).
    pub conversion_z: Option<f64>,
    /// Its two-sided p-value.
    pub conversion_p_value: f64,
    /// The 95% Wald interval of the conversion difference; `null` when a group is empty.
    pub conversion_diff_ci95: Option<[f64; 2]>,
    /// Difference in revenue per exposed player, in USD.
    pub revenue_per_exposed_diff_usd: f64,
    /// The Mann-Whitney U statistic of this variant's exposed players' revenue; `null` when
    /// a group is empty.
    pub revenue_mann_whitney_u: Option<f64>,
    /// Its two-sided p-value: the test of the revenue difference.
    pub revenue_p_value: f64,
    /// The Welch 95% interval of the difference in mean revenue per exposed player, in USD:
    /// descriptive only (revenue is skewed; the Mann-Whitney p-value decides). `null` with
    /// fewer than two exposed players in a group or no variation at all.
    pub revenue_diff_ci95_usd_descriptive: Option<[f64; 2]>,
}

/// The sample-ratio-mismatch check over the variants with a positive weight.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SampleRatio {
    /// Pearson's chi-square of the exposed players against the weights (0 when there is
    /// nothing to test: one variant, or no exposed player).
    pub chi_square: f64,
    /// Degrees of freedom: the variants with a positive weight, less one.
    pub degrees_of_freedom: u64,
    /// Its p-value (1 when there is nothing to test).
    pub p_value: f64,
    /// `true` when `p_value` is below 0.001: the split does not follow the weights.
    pub mismatch: bool,
}

/// A two-sided two-proportion test and interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProportionTest {
    /// `x1 / n1 - x2 / n2`.
    pub diff: f64,
    /// The pooled z statistic, when defined.
    pub z: Option<f64>,
    /// Two-sided p-value.
    pub p_value: f64,
    /// 95% Wald interval of `diff`, when both groups have players.
    pub wald_ci95: Option<[f64; 2]>,
}

/// The standard normal quantile of a two-sided 95% interval.
fn z_quantile() -> f64 {
    Normal::standard().inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0)
}

/// Compares the proportions `x1 / n1` and `x2 / n2`.
pub fn two_proportions(x1: u64, n1: u64, x2: u64, n2: u64) -> ProportionTest {
    if n1 == 0 || n2 == 0 {
        return ProportionTest {
            diff: 0.0,
            z: None,
            p_value: 1.0,
            wald_ci95: None,
        };
    }
    let (x1f, n1f, x2f, n2f) = (x1 as f64, n1 as f64, x2 as f64, n2 as f64);
    let (p1, p2) = (x1f / n1f, x2f / n2f);
    let diff = p1 - p2;
    let pooled = (x1f + x2f) / (n1f + n2f);
    let se_pooled = (pooled * (1.0 - pooled) * (1.0 / n1f + 1.0 / n2f)).sqrt();
    let (z, p_value) = if se_pooled > 0.0 {
        let z = diff / se_pooled;
        // Both tails, from the complementary error function: small p-values keep their
        // precision.
        let p = statrs::function::erf::erfc(z.abs() / std::f64::consts::SQRT_2);
        (Some(z), p.clamp(0.0, 1.0))
    } else {
        (None, 1.0)
    };
    let se = (p1 * (1.0 - p1) / n1f + p2 * (1.0 - p2) / n2f).sqrt();
    let half = z_quantile() * se;
    ProportionTest {
        diff,
        z,
        p_value,
        wald_ci95: Some([diff - half, diff + half]),
    }
}

/// The Welch 95% interval of `mean(a) - mean(b)`, each group given as its values; `None`
/// with fewer than two values in a group or no variation in either.
pub fn welch_ci95(a: &[f64], b: &[f64]) -> Option<[f64; 2]> {
    let moments = |v: &[f64]| {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
        (n, mean, var)
    };
    if a.len() < 2 || b.len() < 2 {
        return None;
    }
    let (na, ma, va) = moments(a);
    let (nb, mb, vb) = moments(b);
    let (sa, sb) = (va / na, vb / nb);
    let se2 = sa + sb;
    if se2 <= 0.0 || !se2.is_finite() {
        return None;
    }
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    let t = StudentsT::new(0.0, 1.0, df)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - CONFIDENCE) / 2.0);
    let diff = ma - mb;
    let half = t * se2.sqrt();
    Some([diff - half, diff + half])
}

/// Pearson's chi-square goodness of fit of `observed` against shares proportional to
/// `weights` (both of one length): the statistic, its degrees of freedom and p-value.
pub fn chi_square_fit(observed: &[u64], weights: &[u32]) -> (f64, u64, f64) {
    let total: f64 = observed.iter().map(|o| *o as f64).sum();
    let weight_sum: f64 = weights.iter().map(|w| f64::from(*w)).sum();
    let k = observed.len().min(weights.len());
    if k < 2 || total <= 0.0 || weight_sum <= 0.0 {
        return (0.0, k.saturating_sub(1) as u64, 1.0);
    }
    let chi: f64 = observed
        .iter()
        .zip(weights)
        .map(|(o, w)| {
            let expected = total * f64::from(*w) / weight_sum;
            let d = *o as f64 - expected;
            d * d / expected
        })
        .sum();
    let df = (k - 1) as u64;
    let p = ChiSquared::new(df as f64).map_or(1.0, |d| d.sf(chi));
    (chi, df, p.clamp(0.0, 1.0))
}

/// One variant's exposed players reduced to what the tests take.
struct Reduced {
    exposed: u64,
    buyers: u64,
    shown: u64,
    purchases: u64,
    revenue_cents: u128,
    /// Revenue of the exposed players who paid, in cents.
    paid: Vec<u64>,
}

impl Reduced {
    fn of(players: &[PlayerTotals]) -> Self {
        let mut r = Reduced {
            exposed: 0,
            buyers: 0,
            shown: 0,
            purchases: 0,
            revenue_cents: 0,
            paid: Vec::new(),
        };
        for p in players.iter().filter(|p| p.shown > 0) {
            r.exposed += 1;
            r.shown = r.shown.saturating_add(p.shown);
            r.purchases = r.purchases.saturating_add(p.purchases);
            r.revenue_cents += u128::from(p.revenue_cents);
            if p.purchases > 0 {
                r.buyers += 1;
            }
            if p.revenue_cents > 0 {
                r.paid.push(p.revenue_cents);
            }
        }
        r
    }

    fn group(&self) -> Group<'_> {
        Group {
            zeros: self.exposed - self.paid.len() as u64,
            paid: &self.paid,
        }
    }

    /// Every exposed player's revenue in USD, non-payers as 0.
    fn revenue_usd(&self) -> Vec<f64> {
        let zeros = usize::try_from(self.exposed).unwrap_or(usize::MAX) - self.paid.len();
        std::iter::repeat_n(0.0, zeros)
            .chain(self.paid.iter().map(|c| *c as f64 / 100.0))
            .collect()
    }

    fn per_exposed_usd(&self) -> f64 {
        if self.exposed == 0 {
            0.0
        } else {
            self.revenue_cents as f64 / self.exposed as f64 / 100.0
        }
    }

    fn conversion(&self) -> f64 {
        if self.exposed == 0 {
            0.0
        } else {
            self.buyers as f64 / self.exposed as f64
        }
    }
}

/// The experiment's results from its variants' players (in the experiment's order, the first
/// the control). The revenue basis is the caller's to set.
pub fn analyse(
    experiment_id: Uuid,
    environment: Environment,
    min_sample: u64,
    variants: &[VariantInput<'_>],
) -> ExperimentResults {
    let reduced: Vec<Reduced> = variants.iter().map(|v| Reduced::of(v.players)).collect();
    let control = reduced.first();
    let results = variants
        .iter()
        .zip(&reduced)
        .enumerate()
        .map(|(i, (v, r))| VariantResult {
            name: v.name.to_owned(),
            weight: v.weight,
            exposed_players: r.exposed,
            buyers: r.buyers,
            conversion: r.conversion(),
            offers_shown: r.shown,
            purchases: r.purchases,
            revenue_usd: r.revenue_cents as f64 / 100.0,
            revenue_per_exposed_usd: r.per_exposed_usd(),
            versus_control: control.filter(|_| i > 0).map(|c| compare(r, c)),
        })
        .collect();
    let weighted: Vec<(u64, u32)> = variants
        .iter()
        .zip(&reduced)
        .filter(|(v, _)| v.weight > 0)
        .map(|(v, r)| (r.exposed, v.weight))
        .collect();
    let observed: Vec<u64> = weighted.iter().map(|(o, _)| *o).collect();
    let weights: Vec<u32> = weighted.iter().map(|(_, w)| *w).collect();
    let (chi_square, degrees_of_freedom, p_value) = chi_square_fit(&observed, &weights);
    let provisional = observed.iter().any(|o| *o < min_sample);
    ExperimentResults {
        experiment_id,
        environment,
        provisional,
        min_sample,
        revenue_basis: RevenueBasis::Reported,
        control: variants
            .first()
            .map(|v| v.name.to_owned())
            .unwrap_or_default(),
        variants: results,
        sample_ratio: SampleRatio {
            chi_square,
            degrees_of_freedom,
            p_value,
            mismatch: p_value < SRM_ALPHA,
        },
    }
}

/// A variant against the control.
fn compare(v: &Reduced, c: &Reduced) -> Comparison {
    let conversion = two_proportions(v.buyers, v.exposed, c.buyers, c.exposed);
    let mwu = mann_whitney::two_sided(v.group(), c.group());
    Comparison {
        conversion_diff: v.conversion() - c.conversion(),
        conversion_z: conversion.z,
        conversion_p_value: conversion.p_value,
        conversion_diff_ci95: conversion.wald_ci95,
        revenue_per_exposed_diff_usd: v.per_exposed_usd() - c.per_exposed_usd(),
        revenue_mann_whitney_u: mwu.u,
        revenue_p_value: mwu.p_value,
        revenue_diff_ci95_usd_descriptive: welch_ci95(&v.revenue_usd(), &c.revenue_usd()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(shown: u64, purchases: u64, revenue_cents: u64) -> PlayerTotals {
        PlayerTotals {
            shown,
            purchases,
            revenue_cents,
        }
    }

    #[test]
    fn only_players_shown_an_offer_count() {
        let control = [player(2, 1, 499), player(1, 0, 0), player(0, 1, 999)];
        let cheap = [player(1, 2, 598), player(3, 0, 0)];
        let r = analyse(
            Uuid::nil(),
            Environment::Production,
            2,
            &[
                VariantInput {
                    name: "control",
                    weight: 1,
                    players: &control,
                },
                VariantInput {
                    name: "cheap",
                    weight: 1,
                    players: &cheap,
                },
            ],
        );
        assert!(!r.provisional);
        assert_eq!(r.control, "control");
        let c = &r.variants[0];
        assert_eq!(
            (c.exposed_players, c.buyers, c.offers_shown, c.purchases),
            (2, 1, 3, 1)
        );
        assert_eq!(c.revenue_usd, 4.99);
        assert!(c.versus_control.is_none());
        let v = &r.variants[1];
        assert_eq!((v.exposed_players, v.buyers, v.purchases), (2, 1, 2));
        assert_eq!(v.revenue_per_exposed_usd, 2.99);
        assert!(v.versus_control.is_some());
    }

    #[test]
    fn degenerate_inputs_answer_no_evidence() {
        let t = two_proportions(0, 10, 0, 12);
        assert_eq!((t.z, t.p_value), (None, 1.0));
        assert_eq!(two_proportions(1, 0, 1, 3).wald_ci95, None);
        assert_eq!(welch_ci95(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch_ci95(&[0.0, 0.0], &[0.0, 0.0]), None);
        assert_eq!(chi_square_fit(&[10], &[1]), (0.0, 0, 1.0));
        assert_eq!(chi_square_fit(&[0, 0], &[1, 1]), (0.0, 1, 1.0));
        let r = analyse(Uuid::nil(), Environment::Sandbox, 1, &[]);
        assert!(r.variants.is_empty());
        assert!(!r.sample_ratio.mismatch);
    }
}
