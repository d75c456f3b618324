//! A short seeded arena run against the engine started in this process (the `offer-engine`
//! library with its production bootstrap, its store in memory): on the `category` scenario
//! the engine must earn a larger share of the oracle's revenue than the best single offer
//! for everyone would, which only a learner that reads the moment does.

use std::path::Path;

use offer_engine::config::{Settings, StoreSettings};
use offer_engine::startup::{self, Running};

use super::play;
use super::scenario::{Scenario, Timeline};
use super::score::{best_single_arm, shares};
use crate::servers::secret;

/// Offers played: the second half is scored.
const OFFERS: usize = 3_000;
/// Players in the population.
const PLAYERS: usize = 300;
/// The arena's seed.
const SEED: u64 = 1;
/// The engine's sampler seed.
const SAMPLER_SEED: u64 = 11;

/// The engine's settings with its sampler seeded, when it takes a seed (read from a
/// configuration file, as an operator would set it).
fn settings(secret: &str, folder: &Path) -> Settings {
    let file = folder.join("arena.toml");
    std::fs::write(&file, format!("[offers]\nsampler_seed = {SAMPLER_SEED}\n"))
        .expect("write the configuration file");
    let mut s = Settings::load(Some(file.as_path()))
        .or_else(|_| Settings::load(None))
        .expect("default settings load");
    s.server.bind = "127.0.0.1:0".parse().expect("address");
    s.server.shards = 2;
    s.auth.jwt_secret = secret.into();
    s.store.path = StoreSettings::IN_MEMORY.into();
    s.store.redis_url = String::new();
    s
}

/// Starts the engine in this process.
async fn engine(secret: &str) -> Running {
    let folder = std::env::temp_dir().join(format!("offer-load-arena-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&folder).expect("create a temporary folder");
    let settings = settings(secret, &folder);
    let _ = std::fs::remove_dir_all(&folder);
    tokio::task::spawn_blocking(move || startup::spawn(settings))
        .await
        .expect("join")
        .expect("the engine starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_category_the_engine_beats_the_best_single_offer() {
    let secret = secret();
    let running = engine(&secret).await;
    let timeline = Timeline::of(Scenario::Category, OFFERS);
    let played = play::play(
        &format!("http://{}", running.addr),
        &secret,
        Scenario::Category,
        timeline,
        PLAYERS,
        SEED,
    )
    .await
    .expect("the arena plays");
    let _ = running.shutdown.send(true);
    assert_eq!(played.scores.len(), OFFERS);
    assert!(played.holdout_requests > 0, "the holdout plays too");
    assert_eq!(played.holdout_offers, 0, "the holdout is never offered");
    let (from, to) = timeline.scored;
    let window = &played.scores[from..to];
    let s = shares(window, best_single_arm(window));
    eprintln!(
        "arena category: engine {:.3}, best single {:.3}, uniform {:.3}",
        s.engine, s.single, s.uniform
    );
    assert!(
        s.engine > s.single,
        "engine {:.3} of the oracle, best single offer {:.3}, uniform {:.3}; no offer and \
         L1 to L4 served {:?}",
        s.engine,
        s.single,
        s.uniform,
        played.levels
    );
}
