//! Growth curves: how the engine's memory and start-up time grow with the games its store
//! holds (`growth-games`) and with the REST sessions it keeps open (`growth-sessions`), so a
//! studio can size a deployment.
//!
//! Both drive a release engine on its default store (a SQLite file in the logs folder) through
//! the public REST API only, as a studio and its game clients would, and read the engine's
//! resident memory (`VmRSS`) between the steps.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use futures::{StreamExt as _, TryStreamExt as _};
use reqwest::{Client, StatusCode};
use serde_json::json;
use uuid::Uuid;

use crate::catalogue::catalogue;
use crate::servers::{EngineArgs, secret, spawn_engine};
use crate::setup::{admin_token, call, create_game};
use crate::ws_load::rss_kib;

/// Flags of `growth-games`.
#[derive(Debug, Args)]
pub struct GamesArgs {
    /// How many games each round fills the store with (one fresh store per round).
    #[arg(long, value_delimiter = ',', default_value = "1,100,10000")]
    pub counts: Vec<usize>,
    /// Items of each game's catalogue.
    #[arg(long, default_value_t = 500)]
    pub items: usize,
    /// Requests in flight while filling the store and loading the games.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// The engine, the output folder and the start timeout.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Flags of `growth-sessions`.
#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Open sessions at which memory is read, ascending (the sessions accumulate).
    #[arg(long, value_delimiter = ',', default_value = "100000,1000000")]
    pub counts: Vec<usize>,
    /// Session opens in flight.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// The engine, the output folder and the start timeout.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// One round of `growth-games`.
struct GamesRound {
    games: usize,
    fill: Duration,
    start_up: Duration,
    idle_kib: u64,
    load_all: Duration,
    loaded_kib: u64,
}

/// Runs `growth-games`: for each count, fills a fresh store with that many games through
/// REST, restarts the engine on it, and measures the time to its first answer, its memory
/// before any game is touched, the time to load every game (one dashboard read each) and its
/// memory with every game live.
pub async fn games(args: GamesArgs) -> Result<()> {
    if args.counts.is_empty() || args.concurrency == 0 {
        bail!("--counts needs at least one count and --concurrency must be at least 1");
    }
    let logs = args.engine.logs_dir()?;
    // Each round's row is printed as soon as it is measured: the largest round takes long.
    println!(
        "\nGames in the store: {} items each, a fresh SQLite file per round; logs in {}",
        args.items,
        logs.display()
    );
    println!(
        "{:>7} {:>9} {:>12} {:>12} {:>11} {:>13} {:>10}",
        "games", "fill s", "start-up ms", "idle MiB", "load all s", "loaded MiB", "KiB/game"
    );
    for &n in &args.counts {
        let r = games_round(&args, &logs, n).await?;
        let per_game = r.loaded_kib.saturating_sub(r.idle_kib) as f64 / r.games as f64;
        println!(
            "{:>7} {:>9.1} {:>12.0} {:>12.1} {:>11.2} {:>13.1} {:>10.1}",
            r.games,
            r.fill.as_secs_f64(),
            r.start_up.as_secs_f64() * 1e3,
            r.idle_kib as f64 / 1024.0,
            r.load_all.as_secs_f64(),
            r.loaded_kib as f64 / 1024.0,
            per_game
        );
    }
    Ok(())
}

/// One round of `growth-games` with `n` games.
async fn games_round(args: &GamesArgs, logs: &Path, n: usize) -> Result<GamesRound> {
    // A folder per round: the engine's store is `<folder>/games.db`.
    let logs = logs.join(format!("games-{n}"));
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let secret = secret();
    let token = admin_token(&secret, "growth-studio")?;
    let client = Client::new();
    // The filler only writes the store: acknowledged writes need not survive a power loss,
    // and each may wait the longest the engine allows, so a busy disk slows the fill down
    // rather than failing it. The measured engine runs with the defaults.
    let fill_env = [
        ("OFFER__STORE__SYNC", "normal".to_owned()),
        ("OFFER__STORE__TIMEOUT_MS", "2000".to_owned()),
    ];
    let (filler, addr) = spawn_engine(
        "games",
        &args.engine.engine_bin,
        &secret,
        &fill_env,
        &logs,
        args.engine.start_timeout,
    )
    .await?;
    let base = format!("http://{addr}");
    let started = Instant::now();
    let items = catalogue(args.items);
    let games: Vec<Uuid> = futures::stream::iter(0..n)
        .map(|i| {
            let name = format!("Growth game {i}");
            let (client, base, token, items) = (&client, &base, &token, &items);
            async move { create_game(client, base, token, &name, items).await }
        })
        .buffer_unordered(args.concurrency)
        .try_collect()
        .await
        .with_context(|| format!("filling the store; {}", filler.log_tail()))?;
    let fill = started.elapsed();
    drop(filler);

    let spawned = Instant::now();
    let (engine, addr) = spawn_engine(
        "games",
        &args.engine.engine_bin,
        &secret,
        &[],
        &logs,
        args.engine.start_timeout,
    )
    .await?;
    let start_up = spawned.elapsed();
    let idle_kib = rss_kib(engine.pid())?;
    let base = format!("http://{addr}");
    let started = Instant::now();
    futures::stream::iter(&games)
        .map(|game_id| {
            let request = client
                .get(format!("{base}/v1/games/{game_id}"))
                .bearer_auth(&token);
            call(request, StatusCode::OK, "GET /v1/games/{game_id}")
        })
        .buffer_unordered(args.concurrency)
        .try_collect::<Vec<_>>()
        .await
        .with_context(|| format!("loading the games; {}", engine.log_tail()))?;
    let load_all = started.elapsed();
    let loaded_kib = rss_kib(engine.pid())?;
    Ok(GamesRound {
        games: n,
        fill,
        start_up,
        idle_kib,
        load_all,
        loaded_kib,
    })
}

/// Runs `growth-sessions`: one engine set up as `compare` sets it up, then REST sessions
/// opened (`POST /v1/sdk/sessions`, no socket) until each count, the engine's memory read at
/// each.
pub async fn sessions(args: SessionsArgs) -> Result<()> {
    if args.counts.is_empty() || args.concurrency == 0 {
        bail!("--counts needs at least one count and --concurrency must be at least 1");
    }
    if args.counts.windows(2).any(|w| w[0] >= w[1]) {
        bail!("--counts must be ascending");
    }
    let logs = args.engine.logs_dir()?;
    let (engine, addr, _secret, prepared) = args.engine.start("engine", &[], &logs).await?;
    let base = format!("http://{addr}");
    let client = Client::new();
    let before_kib = rss_kib(engine.pid())?;
    let mut rows = Vec::new();
    let mut open = 0;
    let started = Instant::now();
    for &count in &args.counts {
        futures::stream::iter(open..count)
            .map(|i| {
                let request = client
                    .post(format!("{base}/v1/sdk/sessions"))
                    .bearer_auth(&prepared.api_key)
                    .json(&json!({
                        "session_id": Uuid::new_v4(),
                        "player_id": format!("g{i}"),
                        "attributes": {"country": "US", "platform": "android"},
                    }));
                call(request, StatusCode::CREATED, "POST /v1/sdk/sessions")
            })
            .buffer_unordered(args.concurrency)
            .try_collect::<Vec<_>>()
            .await
            .with_context(|| format!("opening sessions; {}", engine.log_tail()))?;
        open = count;
        rows.push((count, rss_kib(engine.pid())?, started.elapsed()));
    }
    let mut out = format!(
        "\nREST sessions (no socket) on one engine; RSS before any session {:.1} MiB; logs in {}\n",
        before_kib as f64 / 1024.0,
        logs.display()
    );
    out.push_str(&format!(
        "{:>9} {:>10} {:>13} {:>14}\n",
        "sessions", "RSS MiB", "KiB/session", "opened by s"
    ));
    for (count, kib, at) in rows {
        out.push_str(&format!(
            "{:>9} {:>10.1} {:>13.2} {:>14.1}\n",
            count,
            kib as f64 / 1024.0,
            kib.saturating_sub(before_kib) as f64 / count as f64,
            at.as_secs_f64()
        ));
    }
    print!("{out}");
    Ok(())
}
