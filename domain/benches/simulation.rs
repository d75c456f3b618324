//! The approval simulation at production size: 10,000 trials over an active population of
//! 1,000 and of 1,000,000 players (the same shape of amounts, so the trials should cost the
//! same), against a plain loop that makes the same random draws (per trial one Binomial per
//! segment and two standard normals) and only adds them up.

use criterion::{Criterion, criterion_group, criterion_main};
use offer_domain::bandit::{SEGMENT_COUNT, Segment};
use offer_domain::economy::Quadrant;
use offer_domain::fsr::Thresholds;
use offer_domain::simulation::{
    GenreContext, ObservedPlayer, OfferEffect, Population, Simulation, TRIALS,
};
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand_distr::{Binomial, Distribution, StandardNormal};
use std::hint::black_box;

/// `n` players spread over every segment, earned and spent amounts from 1 to about 4,000
/// units (a geometric spread, so the amounts fill a dozen classes on each side).
fn population(n: u64) -> Population {
    let segments: Vec<Segment> = Segment::all().collect();
    Population::summarise((0..n).map(|i| {
        let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        ObservedPlayer {
            segment: segments[(h % SEGMENT_COUNT as u64) as usize],
            earned: 2f64.powf(((h >> 8) % 1200) as f64 / 100.0),
            spent: 2f64.powf(((h >> 24) % 1200) as f64 / 100.0),
        }
    }))
}

fn simulation(pop: &Population) -> Simulation<'_> {
    Simulation {
        population: pop,
        offer: OfferEffect {
            take_rate: [0.05; SEGMENT_COUNT],
            grant: 500.0,
            sink: 0.0,
        },
        thresholds: Thresholds { min: 0.8, max: 2.0 },
        pass_threshold: 0.95,
        trials: TRIALS,
        seed: 42,
    }
}

fn context() -> GenreContext {
    GenreContext {
        genre: "rpg".into(),
        healthy_fsr_min: 0.8,
        healthy_fsr_max: 2.0,
        quadrant: Some(Quadrant::Healthy),
    }
}

/// The draws of the simulation over `pop` and nothing else.
fn plain_draws(pop: &Population) -> f64 {
    let binomials: Vec<Binomial> = pop
        .segment_sizes()
        .into_iter()
        .filter_map(|n| Binomial::new(n, 0.05).ok())
        .collect();
    let mut rng = StdRng::seed_from_u64(42);
    let mut total = 0.0;
    for _ in 0..TRIALS {
        let k: u64 = binomials.iter().map(|d| d.sample(&mut rng)).sum();
        let z1: f64 = StandardNormal.sample(&mut rng);
        let z2: f64 = StandardNormal.sample(&mut rng);
        total += k as f64 + z1 + z2;
    }
    total
}

fn bench(c: &mut Criterion) {
    let small = population(1_000);
    let large = population(1_000_000);
    println!(
        "buckets: {} for 1,000 players, {} for 1,000,000",
        small.buckets(),
        large.buckets()
    );
    let mut g = c.benchmark_group("simulation");
    g.sample_size(10);
    g.bench_function("10k_trials_1k_players", |b| {
        b.iter(|| black_box(simulation(&small).run(context())))
    });
    g.bench_function("10k_trials_1m_players", |b| {
        b.iter(|| black_box(simulation(&large).run(context())))
    });
    g.bench_function("plain_draws_1k_players", |b| {
        b.iter(|| black_box(plain_draws(&small)))
    });
    g.bench_function("plain_draws_1m_players", |b| {
        b.iter(|| black_box(plain_draws(&large)))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
