//! Criterion bench of one decision of the contextual learner: 18 allowed arms and 64 active
//! features, on a learner trained on 20,000 offers. The target is a median of at most 5 µs.
//!
//! `learner_choose_18_arms_64_features` times the choice alone (features already
//! extracted); `learner_extract_and_choose_64_features` adds the extraction of the 64
//! features from a session context, which a decision also pays.

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use offer_domain::bandit::Arm;
use offer_domain::learner::{Context, Features, Learner, LearnerSettings, Prior};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

fn attributes() -> HashMap<String, serde_json::Value> {
    // Six fixed features (bias, trigger, platform, country, tier, install) and 29 numeric
    // attributes of two features each: 64.
    (0..29)
        .map(|i| (format!("stat{i:02}"), serde_json::Value::from(i * 7 + 3)))
        .collect()
}

fn context(attributes: &HashMap<String, serde_json::Value>) -> Context<'_> {
    Context {
        trigger: "currency_low",
        platform: Some("ios"),
        country: Some("FR"),
        spend_cents: 1_500,
        days_since_install: Some(30),
        attributes,
    }
}

fn bench(c: &mut Criterion) {
    let attrs = attributes();
    let features = Features::extract(&context(&attrs), &[]);
    assert_eq!(features.len(), 64);
    let arms: Vec<Arm> = Arm::all().collect();
    let mut learner = Learner::new(LearnerSettings::default(), Prior::default());
    let mut rng = SmallRng::seed_from_u64(1);
    for i in 0..20_000 {
        let arm = arms[i % arms.len()];
        learner.observe(&features, arm, rng.random_bool(0.05));
    }
    c.bench_function("learner_choose_18_arms_64_features", |b| {
        b.iter(|| learner.choose(black_box(&features), black_box(&arms), &mut rng));
    });
    c.bench_function("learner_extract_and_choose_64_features", |b| {
        b.iter(|| {
            let f = Features::extract(&context(black_box(&attrs)), &[]);
            learner.choose(&f, black_box(&arms), &mut rng)
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
