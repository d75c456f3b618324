//! The Mann-Whitney kernel against scipy: the fixture file is written by
//! `tools/fixtures/mann_whitney.py` from `scipy.stats.mannwhitneyu(..., alternative="greater",
//! method="asymptotic")`, and every case must agree to a relative 1e-9.

use offer_domain::mann_whitney::{Group, greater};
use serde::Deserialize;

const FIXTURE: &str = include_str!("fixtures/mann_whitney.json");
/// Store price points in cents, as in the Python generator.
const TIERS: [u64; 7] = [99, 199, 499, 999, 1999, 4999, 9999];

#[derive(Deserialize)]
struct Fixture {
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    treatment: Option<Explicit>,
    control: Option<Explicit>,
    treatment_gen: Option<Generator>,
    control_gen: Option<Generator>,
    u: Option<f64>,
    p_value: f64,
}

#[derive(Deserialize)]
struct Explicit {
    zeros: u64,
    paid: Vec<u64>,
}

/// Parameters of the seeded generator shared with the Python script.
#[derive(Deserialize)]
struct Generator {
    seed: u64,
    n: u64,
    zero_per_mille: u64,
    double_per_mille: u64,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The same draw as `generate` in the Python script.
fn generate(g: &Generator) -> Explicit {
    let mut state = g.seed;
    let mut out = Explicit {
        zeros: 0,
        paid: Vec::new(),
    };
    for _ in 0..g.n {
        if splitmix64(&mut state) % 1000 < g.zero_per_mille {
            out.zeros += 1;
            continue;
        }
        let a = splitmix64(&mut state);
        let b = splitmix64(&mut state);
        let c = splitmix64(&mut state);
        let mut cents = TIERS[usize::try_from(a % 7).expect("small")] * (1 + b % 4);
        if c % 1000 < g.double_per_mille {
            cents *= 2;
        }
        out.paid.push(cents);
    }
    out
}

fn close(actual: f64, expected: f64) -> bool {
    actual == expected || ((actual - expected) / expected).abs() <= 1e-9
}

#[test]
fn every_fixture_case_matches_scipy() {
    let fixture: Fixture = serde_json::from_str(FIXTURE).expect("fixture parses");
    assert!(fixture.cases.len() >= 10);
    for case in &fixture.cases {
        let t = case.treatment.as_ref().map_or_else(
            || generate(case.treatment_gen.as_ref().expect("gen")),
            |e| Explicit {
                zeros: e.zeros,
                paid: e.paid.clone(),
            },
        );
        let c = case.control.as_ref().map_or_else(
            || generate(case.control_gen.as_ref().expect("gen")),
            |e| Explicit {
                zeros: e.zeros,
                paid: e.paid.clone(),
            },
        );
        let got = greater(
            Group {
                zeros: t.zeros,
                paid: &t.paid,
            },
            Group {
                zeros: c.zeros,
                paid: &c.paid,
            },
        );
        assert!(
            close(got.p_value, case.p_value),
            "{}: p {} vs scipy {}",
            case.name,
            got.p_value,
            case.p_value
        );
        match (got.u, case.u) {
            (Some(a), Some(b)) => assert!(close(a, b), "{}: U {a} vs scipy {b}", case.name),
            (None, None) => {}
            (a, b) => panic!("{}: U {a:?} vs scipy {b:?}", case.name),
        }
    }
}
