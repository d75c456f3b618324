//! `holdout`: the holdout comparison (`GET /v1/games/{id}/holdout-arpu`) of a game with a
//! million players in Redis, and what computing it does to the offer path.
//!
//! Servers are child processes: a private `redis-server` and the engine using it, with the
//! comparison's cache off (`economy.figures_cache_ms = 0`) so that every read computes. The
//! population is written straight into the engine's Redis through its own store code (one
//! document per player, as a session would register it; payers' purchases through the
//! engine's atomic wallet step), which takes a fraction of the time a million sessions would.
//! Then, in one run: the comparison's time (median of `--reads` reads), and the offer path's
//! p50 and p99 first alone and then while the comparison is read in a loop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use chrono::Utc;
use clap::Args;
use offer_domain::holdout::is_holdout;
use offer_engine::store::redis::RedisStore;
use offer_engine::store::{Collection, Documents as _, Money as _, MoneyKind, MoneyOp};
use uuid::Uuid;

use crate::drive::{self, Plan, Target};
use crate::figures::median;
use crate::parse_duration;
use crate::servers::ServerArgs;
use crate::setup::{self, admin_token};
use crate::wallet::money_op;

/// Key prefix the engine uses in Redis.
const ENGINE_PREFIX: &str = "offer";
/// Documents written per store call while seeding.
const BATCH: usize = 10_000;

/// Flags of `holdout`.
#[derive(Debug, Args)]
pub struct HoldoutArgs {
    /// Players in the game's production population.
    #[arg(long, default_value_t = 1_000_000)]
    pub players: usize,
    /// Per mille of them who paid (the rest count as 0).
    #[arg(long, default_value_t = 100)]
    pub payers_per_mille: usize,
    /// Comparison reads to time.
    #[arg(long, default_value_t = 5)]
    pub reads: usize,
    /// Keep-alive connections driving the offer path.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// Each offer-path measurement (alone, then during the reads).
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub duration: Duration,
    /// The servers started for the measurement.
    #[command(flatten)]
    pub servers: ServerArgs,
}

/// Writes the population of `game_id`: `players` entries, the first `payers` of them paid
/// 1 to 50 dollars.
async fn seed(store: &RedisStore, game_id: Uuid, players: usize, payers: usize) -> Result<()> {
    let today = Utc::now().date_naive();
    let coll = Collection::game(game_id, "players_production");
    let ids: Vec<String> = (0..players).map(|i| format!("player_{i}")).collect();
    for chunk in ids.chunks(BATCH) {
        let entries = chunk
            .iter()
            .map(|id| {
                let entry = serde_json::json!({
                    "holdout": is_holdout(id, game_id),
                    "install_day": today,
                    "last_seen": today,
                });
                Ok((id.clone(), serde_json::to_vec(&entry)?))
            })
            .collect::<Result<Vec<_>>>()?;
        store
            .put_all(coll, entries)
            .await
            .context("writing players")?;
    }
    for (i, id) in ids.iter().take(payers).enumerate() {
        let op = MoneyOp {
            holdout: is_holdout(id, game_id),
            import: true,
            ..money_op(
                game_id,
                id.clone(),
                format!("seed-{i}"),
                MoneyKind::Purchase,
                100 * (1 + (i % 50) as i64),
            )
        };
        store.apply_money(&op).await.context("writing a purchase")?;
    }
    Ok(())
}

/// Reads the comparison `reads` times; each read's duration in milliseconds.
async fn read_comparison(base: &str, token: &str, game_id: Uuid, reads: usize) -> Result<Vec<f64>> {
    let client = reqwest::Client::new();
    let mut times = Vec::with_capacity(reads);
    for _ in 0..reads {
        let start = Instant::now();
        let answer = client
            .get(format!("{base}/v1/games/{game_id}/holdout-arpu"))
            .bearer_auth(token)
            .send()
            .await
            .context("reading the comparison")?;
        if !answer.status().is_success() {
            bail!("the comparison answered {}", answer.status());
        }
        let body: serde_json::Value = answer.json().await.context("the comparison's JSON")?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        eprintln!(
            "comparison: {:.0} ms, n_treatment {}, n_control {}, p {}",
            times.last().copied().unwrap_or_default(),
            body["n_treatment"],
            body["n_control"],
            body["p_value"]
        );
    }
    Ok(times)
}

/// Runs `holdout`.
pub async fn run(args: HoldoutArgs) -> Result<()> {
    if args.players == 0 || args.reads == 0 || args.connections == 0 {
        bail!("--players, --reads and --connections must be at least 1");
    }
    let logs = args.servers.engine.logs_dir()?;
    let (_redis, redis_url) = args.servers.redis(&[], &logs).await?;
    let (mut engine, addr, secret, _) = args
        .servers
        .engine
        .start(
            "engine",
            &[
                ("OFFER__STORE__REDIS_URL", redis_url.clone()),
                ("OFFER__ECONOMY__FIGURES_CACHE_MS", "0".to_owned()),
            ],
            &logs,
        )
        .await?;
    let base = format!("http://{addr}");
    let setup_args = crate::SetupArgs {
        sessions: args.connections * 4,
        items: 20,
        mode: crate::GameMode::Shadow,
    };
    let prepared = setup::prepare(&base, &secret, &setup_args)
        .await
        .with_context(|| format!("setting the engine up; {}", engine.log_tail()))?;
    let game_id = prepared.game_id;
    let store = RedisStore::connect(&redis_url, ENGINE_PREFIX, Duration::from_secs(2))
        .await
        .context("connecting to the engine's Redis")?;
    let payers = args.players * args.payers_per_mille / 1000;
    let seeding = Instant::now();
    seed(&store, game_id, args.players, payers).await?;
    eprintln!(
        "seeded {} players ({payers} payers) in {:.1} s",
        args.players,
        seeding.elapsed().as_secs_f64()
    );
    let token = admin_token(&secret, "load-studio")?;
    let times = read_comparison(&base, &token, game_id, args.reads).await?;

    let plan = Arc::new(Plan::new(
        &Target::local(addr),
        &prepared.api_key,
        &prepared.sessions,
    )?);
    let alone = drive::run(&plan, args.connections, args.duration).await?;
    let reader = {
        let (base, token) = (base.clone(), token.clone());
        tokio::spawn(async move {
            let until = Instant::now() + args.duration;
            let mut reads = 0usize;
            while Instant::now() < until {
                read_comparison(&base, &token, game_id, 1).await?;
                reads += 1;
            }
            anyhow::Ok(reads)
        })
    };
    let during = drive::run(&plan, args.connections, args.duration).await?;
    let reads_during = reader.await.context("the reading task")??;
    engine.check_alive()?;

    println!(
        "\nHoldout comparison of {} players ({payers} payers) in Redis, cache off",
        args.players
    );
    println!(
        "comparison: median {:.0} ms over {} reads",
        median(&times),
        times.len()
    );
    println!(
        "{:<34} {:>9} {:>9} {:>9}",
        "offer path", "rps", "p50 ms", "p99 ms"
    );
    for (label, stats) in [("alone", &alone), ("during comparison reads", &during)] {
        println!(
            "{label:<34} {:>9.0} {:>9.2} {:>9.2}",
            stats.rps(),
            stats.quantile_ms(0.5),
            stats.quantile_ms(0.99)
        );
    }
    println!("comparison reads during the second run: {reads_during}");
    Ok(())
}
