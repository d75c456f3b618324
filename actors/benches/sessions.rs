//! Criterion bench of finding one player's sessions among a node's open sessions, the step
//! every pushed balance or inventory takes: through the player index, and by walking the
//! game's sessions (what it took before the index), at 100, 10,000 and 100,000 open
//! sessions of one game, one player each.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use offer_actors::{ActorSystem, SessionInfo};
use offer_domain::environment::Environment;
use offer_domain::pipeline::PlayerContext;
use uuid::Uuid;

/// A registry holding `n` open sessions of one game, player `p<i>` on session `i`.
fn registry(n: usize) -> (actix_rt::SystemRunner, ActorSystem, Uuid) {
    let system = actix_rt::System::new();
    let actors = system.block_on(async { ActorSystem::start(1, Duration::from_secs(3600)) });
    let game_id = Uuid::new_v4();
    for i in 0..n {
        let player_id = format!("p{i}");
        let player = PlayerContext::new(&player_id, game_id);
        actors.open_session(
            SessionInfo {
                session_id: Uuid::new_v4(),
                game_id,
                env: Environment::Production,
                player_id,
            },
            player,
        );
    }
    (system, actors, game_id)
}

fn player_lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("sessions_of_one_player");
    for n in [100, 10_000, 100_000] {
        let (_system, actors, game_id) = registry(n);
        let player = format!("p{}", n / 2);
        group.bench_with_input(BenchmarkId::new("index", n), &player, |b, player| {
            b.iter(|| {
                actors
                    .sessions_of_player(game_id, Environment::Production, black_box(player))
                    .len()
            });
        });
        group.bench_with_input(BenchmarkId::new("game_walk", n), &player, |b, player| {
            b.iter(|| {
                let mut found = 0;
                actors.for_each_session_of(game_id, |s| {
                    let info = s.info();
                    if info.env == Environment::Production && info.player_id == *black_box(player) {
                        found += 1;
                    }
                });
                found
            });
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(2));
    targets = player_lookup
}
criterion_main!(benches);
