//! Criterion bench of one in-memory offer decision on a realistic game
//! ([`SnapshotFixture::realistic`]): 500 items, 20 studio bundles, 10 genre templates and a
//! trained L1 model.
//!
//! Paths measured: L1 (a featured player in Autonomous mode: Thompson sampling over every
//! allowed arm), L1 with a price experiment (adds the assignment hash), L2 in Assisted mode
//! (the L1 pick is computed and queued for approval, then the approved template serves), and
//! L4 (a player with no features). The target is a median under 2 µs per decision.
//!
//! The group `decision_by_catalogue` runs the L1, L2 and L4 paths against catalogues of 50,
//! 500, 5,000 and 50,000 items (the rest of the game as above): a decision must cost the same
//! whatever the catalogue's size, because the snapshot precomputes what each level reads.

use std::collections::HashSet;
use std::hint::black_box;
use std::num::NonZeroU32;
use std::time::Duration;

use chrono::Utc;
use criterion::{Criterion, criterion_group, criterion_main};
use offer_domain::category::Category;
use offer_domain::game::Mode;
use offer_domain::offer::Experiment;
use offer_domain::pipeline::{GameSnapshot, PlayerContext, decide};
use offer_domain::testing::{self, GAME_ID, SnapshotFixture};
use rand::SeedableRng;
use rand::rngs::SmallRng;

fn snapshot(mode: Mode, experiments: &[Experiment], approved: HashSet<String>) -> GameSnapshot {
    sized_snapshot(500, mode, experiments, approved)
}

/// [`SnapshotFixture::realistic`] with a catalogue of `n` items.
fn sized_snapshot(
    n: usize,
    mode: Mode,
    experiments: &[Experiment],
    approved: HashSet<String>,
) -> GameSnapshot {
    let mut fx = SnapshotFixture::realistic();
    fx.items = testing::items(n);
    fx.game.mode = mode;
    fx.experiments = experiments.to_vec();
    fx.approved = approved;
    fx.snapshot()
}

/// A player every level can serve: iOS in France, a payer, three events seen.
fn featured_player() -> PlayerContext {
    let mut p = testing::player();
    p.spend_cents = 500;
    p.events_seen = 3;
    p
}

fn bench(c: &mut Criterion) {
    let now = Utc::now();
    let experiment = [testing::experiment(0xe1, 1, ("cheaper", 1, 0.8))];
    // The template pick of boss_raid fills with cosmetics, so a catalogue of only those
    // (where L1 finds no arm) queues exactly the definition the full game's L2 proposes.
    let mut probe = SnapshotFixture::realistic();
    probe.game.mode = Mode::Assisted;
    probe.items.retain(|i| i.category == Category::Cosmetic);
    let l2_key = decide(
        &probe.snapshot(),
        &featured_player(),
        "boss_raid",
        now,
        &mut SmallRng::seed_from_u64(1),
        NonZeroU32::MIN,
    )
    .approval_candidates
    .into_iter()
    .next()
    .map(|c| c.definition_key)
    .unwrap_or_default();
    let cases = [
        (
            "l1_ai",
            snapshot(Mode::Autonomous, &[], HashSet::new()),
            featured_player(),
            1,
        ),
        (
            "l1_ai_with_experiment",
            snapshot(Mode::Autonomous, &experiment, HashSet::new()),
            featured_player(),
            1,
        ),
        (
            "l2_template_assisted",
            snapshot(Mode::Assisted, &[], HashSet::from([l2_key])),
            featured_player(),
            2,
        ),
        (
            "l4_no_features",
            snapshot(Mode::Autonomous, &[], HashSet::new()),
            PlayerContext::new("player_0", GAME_ID),
            4,
        ),
    ];
    let mut group = c.benchmark_group("decision");
    group
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, snap, player, expected_level) in &cases {
        let mut rng = SmallRng::seed_from_u64(1);
        let event = "boss_raid";
        let first = decide(snap, player, event, now, &mut rng, NonZeroU32::MIN);
        assert_eq!(
            testing::offer(&first).level,
            *expected_level,
            "{name}: {first:?}"
        );
        group.bench_function(*name, |b| {
            b.iter(|| {
                decide(
                    black_box(snap),
                    black_box(player),
                    black_box(event),
                    now,
                    &mut rng,
                    NonZeroU32::MIN,
                )
            });
        });
    }
    group.finish();
}

/// One decision per path against catalogues of growing size.
fn by_catalogue(c: &mut Criterion) {
    let now = Utc::now();
    let mut group = c.benchmark_group("decision_by_catalogue");
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for n in [50, 500, 5_000, 50_000] {
        let autonomous = sized_snapshot(n, Mode::Autonomous, &[], HashSet::new());
        let cases = [
            ("l1_ai", &autonomous, featured_player()),
            (
                "l4_no_features",
                &autonomous,
                PlayerContext::new("player_0", GAME_ID),
            ),
        ];
        for (name, snap, player) in cases {
            let mut rng = SmallRng::seed_from_u64(1);
            group.bench_function(format!("{name}/{n}"), |b| {
                b.iter(|| {
                    decide(
                        black_box(snap),
                        black_box(&player),
                        black_box("boss_raid"),
                        now,
                        &mut rng,
                        NonZeroU32::MIN,
                    )
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench, by_catalogue);
criterion_main!(benches);
