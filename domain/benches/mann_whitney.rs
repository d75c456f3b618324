//! The holdout ARPU test at production size: 1,000,000 treatment and 100,000 control
//! players (and twice that, for the growth with n), payers lognormal (median 5 USD), once with 90% non-payers and once with none.
//!
//! The arrays come from a SplitMix64 stream (three draws per player: pays?, and a
//! Box-Muller pair) that `tools/fixtures/mann_whitney_bench.py` reproduces to time scipy on
//! the same data; both print the payer count and revenue sum so the arrays can be compared.

use criterion::{Criterion, criterion_group, criterion_main};
use offer_domain::mann_whitney::{Group, greater};
use std::hint::black_box;

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// Output `k` (1-based) of the SplitMix64 stream started at `seed`.
fn splitmix64_at(seed: u64, k: u64) -> u64 {
    let mut z = seed.wrapping_add(GAMMA.wrapping_mul(k));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform in (0, 1].
fn unit(x: u64) -> f64 {
    ((x >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `n` players: non-payers counted, payers' cents drawn lognormal(ln 500, 1.2).
fn players(seed: u64, n: u64, zero_per_mille: u64) -> (u64, Vec<u64>) {
    let mut zeros = 0;
    let mut paid = Vec::new();
    for i in 0..n {
        let r = splitmix64_at(seed, 3 * i + 1);
        if r % 1000 < zero_per_mille {
            zeros += 1;
            continue;
        }
        let u1 = unit(splitmix64_at(seed, 3 * i + 2));
        let u2 = unit(splitmix64_at(seed, 3 * i + 3));
        let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        paid.push((500f64.ln() + 1.2 * normal).exp().round().max(1.0) as u64);
    }
    (zeros, paid)
}

fn bench(c: &mut Criterion) {
    // The production size, then twice it: the test is O(n log n), so doubling n should cost
    // a little over twice the time.
    for (size, scale) in [("1m_vs_100k", 1), ("2m_vs_200k", 2)] {
        for (label, zero_per_mille) in [("90pct_zeros", 900), ("no_zeros", 0)] {
            bench_size(c, size, scale, label, zero_per_mille);
        }
    }
}

/// One size and shape of the groups: `scale` million treated and `scale` x 100,000 holdout
/// players.
fn bench_size(c: &mut Criterion, size: &str, scale: u64, label: &str, zero_per_mille: u64) {
    let (tz, tp) = players(1, scale * 1_000_000, zero_per_mille);
    let (cz, cp) = players(2, scale * 100_000, zero_per_mille);
    eprintln!(
        "{label}: treatment {} payers sum {}, control {} payers sum {}",
        tp.len(),
        tp.iter().sum::<u64>(),
        cp.len(),
        cp.iter().sum::<u64>()
    );
    c.bench_function(&format!("mann_whitney_{size}_{label}"), |b| {
        b.iter(|| {
            greater(
                Group {
                    zeros: tz,
                    paid: black_box(&tp),
                },
                Group {
                    zeros: cz,
                    paid: black_box(&cp),
                },
            )
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
