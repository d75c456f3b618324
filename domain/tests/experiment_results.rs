//! The price experiments' statistics against their references: the fixture file is written by
//! `tools/fixtures/experiment_results.py` from statsmodels (the pooled two-proportion z-test,
//! the Wald interval, the Welch interval) and scipy (the two-sided Mann-Whitney U, the
//! chi-square goodness of fit), and every case must agree closely.

use offer_domain::experiment_results::{chi_square_fit, two_proportions, welch_ci95};
use offer_domain::mann_whitney::{Group, two_sided};
use serde::Deserialize;

const FIXTURE: &str = include_str!("fixtures/experiment_results.json");

#[derive(Deserialize)]
struct Fixture {
    proportions: Vec<ProportionCase>,
    revenue: Vec<RevenueCase>,
    ratios: Vec<RatioCase>,
}

#[derive(Deserialize)]
struct ProportionCase {
    name: String,
    x1: u64,
    n1: u64,
    x2: u64,
    n2: u64,
    z: f64,
    p_value: f64,
    wald_ci95: [f64; 2],
}

#[derive(Deserialize)]
struct Revenue {
    zeros: u64,
    paid: Vec<u64>,
}

impl Revenue {
    fn group(&self) -> Group<'_> {
        Group {
            zeros: self.zeros,
            paid: &self.paid,
        }
    }

    fn usd(&self) -> Vec<f64> {
        std::iter::repeat_n(0.0, usize::try_from(self.zeros).expect("small"))
            .chain(self.paid.iter().map(|c| *c as f64 / 100.0))
            .collect()
    }
}

#[derive(Deserialize)]
struct RevenueCase {
    name: String,
    a: Revenue,
    b: Revenue,
    u: f64,
    p_value: f64,
    welch_ci95_usd: [f64; 2],
}

#[derive(Deserialize)]
struct RatioCase {
    name: String,
    observed: Vec<u64>,
    weights: Vec<u32>,
    chi_square: f64,
    p_value: f64,
}

/// Equal within a relative `rel`, or an absolute `rel` near zero.
fn close(actual: f64, expected: f64, rel: f64) -> bool {
    actual == expected || (actual - expected).abs() <= rel * expected.abs().max(1e-3)
}

fn fixture() -> Fixture {
    serde_json::from_str(FIXTURE).expect("fixture parses")
}

#[test]
fn the_z_test_and_wald_interval_match_statsmodels() {
    let f = fixture();
    assert!(f.proportions.len() >= 5);
    for c in &f.proportions {
        let got = two_proportions(c.x1, c.n1, c.x2, c.n2);
        let z = got.z.unwrap_or(0.0);
        assert!(close(z, c.z, 1e-9), "{}: z {z} vs {}", c.name, c.z);
        assert!(
            close(got.p_value, c.p_value, 1e-9),
            "{}: p {} vs {}",
            c.name,
            got.p_value,
            c.p_value
        );
        let ci = got.wald_ci95.expect("both groups have players");
        for (a, b) in ci.iter().zip(&c.wald_ci95) {
            assert!(
                close(*a, *b, 1e-9),
                "{}: Wald {ci:?} vs {:?}",
                c.name,
                c.wald_ci95
            );
        }
    }
}

#[test]
fn the_two_sided_mann_whitney_and_welch_interval_match_scipy_and_statsmodels() {
    let f = fixture();
    assert!(f.revenue.len() >= 5);
    for c in &f.revenue {
        let got = two_sided(c.a.group(), c.b.group());
        assert!(
            close(got.p_value, c.p_value, 1e-9),
            "{}: p {} vs scipy {}",
            c.name,
            got.p_value,
            c.p_value
        );
        let u = got.u.expect("both groups have players");
        assert!(close(u, c.u, 1e-12), "{}: U {u} vs scipy {}", c.name, c.u);
        let ci = welch_ci95(&c.a.usd(), &c.b.usd()).expect("an interval");
        for (a, b) in ci.iter().zip(&c.welch_ci95_usd) {
            assert!(
                close(*a, *b, 1e-7),
                "{}: Welch {ci:?} vs {:?}",
                c.name,
                c.welch_ci95_usd
            );
        }
    }
}

#[test]
fn the_sample_ratio_check_matches_scipy_chisquare() {
    let f = fixture();
    assert!(f.ratios.len() >= 4);
    for c in &f.ratios {
        let (chi, df, p) = chi_square_fit(&c.observed, &c.weights);
        assert_eq!(df as usize, c.observed.len() - 1, "{}", c.name);
        assert!(
            close(chi, c.chi_square, 1e-9),
            "{}: chi {chi} vs {}",
            c.name,
            c.chi_square
        );
        assert!(
            close(p, c.p_value, 1e-8),
            "{}: p {p} vs scipy {}",
            c.name,
            c.p_value
        );
    }
}

/// The one-sided holdout test is unchanged by the two-sided one beside it: the two-sided
/// p-value of a case whose treatment is the larger is twice the one-sided, capped at 1.
#[test]
fn the_two_sided_p_value_doubles_the_upper_tail() {
    let a = [3, 5, 7, 9, 11];
    let b = [1, 2, 4, 6];
    let (ga, gb) = (Group { zeros: 0, paid: &a }, Group { zeros: 0, paid: &b });
    let one = offer_domain::mann_whitney::greater(ga, gb).p_value;
    let two = two_sided(ga, gb).p_value;
    assert!(
        close(two, (2.0 * one).min(1.0), 1e-12),
        "{two} vs 2 x {one}"
    );
}
