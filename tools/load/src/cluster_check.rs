//! `cluster-check`: a capacity model's per-operation costs checked against two engine nodes
//! on a three-master Redis Cluster, at a scale one machine holds.
//!
//! 1. **Costs**, on one engine with one private `redis-server`, one game, each load alone:
//!    the engine's memory and Redis's memory per WebSocket session held (`VmRSS`, and
//!    `used_memory` of `INFO memory`); then, at constant rates, the engine's CPU and Redis's
//!    CPU (`used_cpu_user` + `used_cpu_sys` of `INFO cpu`) and Redis's memory per offer
//!    (`POST /v1/sdk/offers/next`) and per wallet operation (`currency_earned` over
//!    WebSocket).
//!    CPU is split into a fixed part (each process idle with the sessions held, read over
//!    `--duration`) and the part above it per operation.
//! 2. **Prediction**: two engines (one JWT secret) on a three-master cluster formed with
//!    `redis-cli --cluster create`; `--games` games set up on the first node. A game's keys
//!    share its hash tag, so each game lives on one master, found with `CLUSTER KEYSLOT` and
//!    `CLUSTER COUNTKEYSINSLOT`. The sessions, offers and wallet operations are spread evenly
//!    over the nodes and the games; from the costs and the operations each node and each game
//!    actually served, the tool predicts each node's CPU and memory growth and each master's
//!    CPU and memory growth; a process's fixed CPU part is read again on the two-node setup,
//!    idle with its sessions held, since a cluster node's (its cluster bus and cron) is not a
//!    single server's.
//! 3. **Measurement** of the same figures during the run; the table puts both side by side.
//!
//! Every client, engine and Redis shares the machine's cores: the check is of the model's
//! sums (costs add up per operation, a game's load lands on its master), not of a throughput.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use futures::{StreamExt as _, TryStreamExt as _};
use redis::aio::MultiplexedConnection;
use tokio::task::JoinSet;
use uuid::Uuid;

use crate::child::Server;
use crate::drive::{self, Pace, Plan, Target};
use crate::servers::{ServerArgs, secret, spawn_engine};
use crate::settle::{TICK_US, cpu_ticks, settle};
use crate::wallet::wallet_op;
use crate::ws_client::{self, Fleet, Socket};
use crate::ws_load::{KILL_MARKER, rss_kib};
use crate::{SetupArgs, parse_duration, setup};

/// Catalogue size of every game.
const ITEMS: usize = 20;
/// Longest wait for a process to go quiet.
const SETTLE_LIMIT: Duration = Duration::from_secs(30);

/// Flags of `cluster-check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Games of the two-node run, each set up on the first node.
    #[arg(long, default_value_t = 3)]
    pub games: usize,
    /// WebSocket sessions held per engine node (spread over the games), and by the engine
    /// of the costs' run.
    #[arg(long, default_value_t = 4000)]
    pub sessions: usize,
    /// REST sessions per game the offers go round-robin over.
    #[arg(long, default_value_t = 500)]
    pub rest_sessions: usize,
    /// Offers per second, over both nodes in the two-node run.
    #[arg(long, default_value_t = 2000.0)]
    pub offer_rate: f64,
    /// Offer connections, over both nodes and every game in the two-node run.
    #[arg(long, default_value_t = 24)]
    pub connections: usize,
    /// Wallet operations per second, over both nodes in the two-node run.
    #[arg(long, default_value_t = 600.0)]
    pub wallet_rate: f64,
    /// WebSocket sessions sending the wallet operations (one in flight each), over both
    /// nodes and every game in the two-node run.
    #[arg(long, default_value_t = 24)]
    pub wallet_sessions: usize,
    /// Length of every measured load.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,
    /// The `redis-cli` binary (forms the cluster).
    #[arg(long, default_value = "redis-cli")]
    pub redis_cli: std::path::PathBuf,
    /// The servers started for the measurement.
    #[command(flatten)]
    pub servers: ServerArgs,
}

/// Per-operation costs from the one-node, one-Redis run: CPU above what each process uses
/// idle with the sessions held (its fixed part, measured on its own).
#[derive(Debug, Clone, Copy)]
struct Costs {
    engine_idle_ms_per_s: f64,
    redis_idle_ms_per_s: f64,
    engine_kib_per_session: f64,
    redis_bytes_per_session: f64,
    engine_us_per_offer: f64,
    redis_us_per_offer: f64,
    redis_bytes_per_offer: f64,
    engine_us_per_op: f64,
    redis_us_per_op: f64,
    redis_bytes_per_op: f64,
    /// Commands Redis processed per offer and per wallet operation, and wallet script calls
    /// per wallet operation: how much the engine combined.
    commands_per_offer: f64,
    commands_per_op: f64,
    scripts_per_op: f64,
}

/// A Redis server's `used_memory` (bytes), CPU time (µs, user and system), commands
/// processed and script calls (`eval` and `evalsha`).
#[derive(Debug, Clone, Copy)]
struct RedisReading {
    memory: f64,
    cpu_us: f64,
    commands: f64,
    scripts: f64,
}

/// Reads `INFO memory cpu stats commandstats`.
async fn redis_reading(conn: &mut MultiplexedConnection) -> Result<RedisReading> {
    let info: String = redis::cmd("INFO")
        .arg("memory")
        .arg("cpu")
        .arg("stats")
        .arg("commandstats")
        .query_async(conn)
        .await
        .context("INFO memory cpu stats commandstats")?;
    let field = |name: &str| -> f64 {
        info.lines()
            .find_map(|line| line.trim().strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    };
    let calls = |name: &str| -> f64 {
        info.lines()
            .find_map(|line| line.trim().strip_prefix(name)?.strip_prefix(":calls="))
            .and_then(|rest| rest.split(',').next()?.parse().ok())
            .unwrap_or(0.0)
    };
    Ok(RedisReading {
        memory: field("used_memory"),
        cpu_us: (field("used_cpu_user") + field("used_cpu_sys")) * 1e6,
        commands: field("total_commands_processed"),
        scripts: calls("cmdstat_eval") + calls("cmdstat_evalsha"),
    })
}

/// A connection to the Redis at `addr` (`host:port`).
async fn connect(addr: &str) -> Result<MultiplexedConnection> {
    redis::Client::open(format!("redis://{addr}/"))
        .context("a Redis address")?
        .get_multiplexed_async_connection()
        .await
        .with_context(|| format!("connecting to {addr}"))
}

/// One game on one node: its key, its offer plan and its sessions.
struct GameOnNode {
    game: usize,
    api_key: String,
    plan: Arc<Plan>,
    ws_url: String,
}

/// Opens `n` sessions of players `<prefix><i>` to `url`, at most 64 handshakes at once.
async fn open_named(url: &str, key: &str, n: usize, prefix: &str) -> Result<Vec<Socket>> {
    futures::stream::iter(0..n)
        .map(|i| async move {
            ws_client::open(url, key, Uuid::new_v4(), &format!("{prefix}{i}"))
                .await
                .with_context(|| format!("session {prefix}{i}"))
        })
        .buffer_unordered(64)
        .try_collect()
        .await
}

/// One wallet session's paced loop: a `currency_earned` every `interval`, each waited for;
/// the operations answered with a balance.
async fn wallet_loop(
    mut ws: Socket,
    tag: String,
    interval: Duration,
    until: Instant,
) -> Result<u64> {
    let mut ok = 0;
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut k = 0u64;
    loop {
        ticker.tick().await;
        if Instant::now() >= until {
            return Ok(ok);
        }
        k += 1;
        let answered = wallet_op(&mut ws, &tag, k).await?;
        ok += u64::from(answered);
    }
}

/// What one measured load served, per (node, game).
#[derive(Debug, Default)]
struct Served {
    offers: BTreeMap<(usize, usize), u64>,
    ops: BTreeMap<(usize, usize), u64>,
}

/// Runs the offers (`rate` over every plan) and the wallet operations (`wallet_rate` over
/// every wallet session) at once for `duration`.
async fn load(
    plans: &[(usize, &GameOnNode)],
    wallets: Vec<((usize, usize), Socket)>,
    args: &CheckArgs,
    rate: f64,
    wallet_rate: f64,
) -> Result<Served> {
    let mut tasks = JoinSet::new();
    let until = Instant::now() + args.duration;
    if rate > 0.0 {
        let per = plans.len().max(1);
        for (node, g) in plans {
            let plan = Arc::clone(&g.plan);
            let connections = (args.connections / per).max(1);
            let pace = Pace {
                rps: rate / per as f64,
            };
            let (node, game, duration) = (*node, g.game, args.duration);
            tasks.spawn(async move {
                let stats = drive::run_paced(&plan, connections, duration, pace).await?;
                if stats.errors > 0 {
                    bail!("offers failed: {}", stats.status_line());
                }
                Ok((true, (node, game), stats.answered()))
            });
        }
    }
    if wallet_rate > 0.0 && !wallets.is_empty() {
        let interval = Duration::from_secs_f64(wallets.len() as f64 / wallet_rate);
        for (i, (at, ws)) in wallets.into_iter().enumerate() {
            let tag = format!("w{i}-{}", Uuid::new_v4().simple());
            tasks.spawn(async move {
                let ok = wallet_loop(ws, tag, interval, until).await?;
                Ok((false, at, ok))
            });
        }
    }
    let mut served = Served::default();
    while let Some(joined) = tasks.join_next().await {
        let (offers, at, n) = joined.context("a load task panicked")??;
        let map = if offers {
            &mut served.offers
        } else {
            &mut served.ops
        };
        *map.entry(at).or_default() += n;
    }
    Ok(served)
}

/// Sets a game up on the engine at `addr`: its id, its REST sessions, and its key and offer
/// plan on that engine.
async fn game_on(
    addr: SocketAddr,
    secret: &str,
    game: usize,
    rest_sessions: usize,
) -> Result<(Uuid, Vec<Uuid>, GameOnNode)> {
    let prepared = setup::prepare(
        &format!("http://{addr}"),
        secret,
        &SetupArgs {
            sessions: rest_sessions,
            items: ITEMS,
            mode: crate::GameMode::Shadow,
        },
    )
    .await?;
    let plan = Arc::new(Plan::new(
        &Target::local(addr),
        &prepared.api_key,
        &prepared.sessions,
    )?);
    Ok((
        prepared.game_id,
        prepared.sessions,
        GameOnNode {
            game,
            api_key: prepared.api_key,
            plan,
            ws_url: format!("ws://{addr}/v1/sdk/ws"),
        },
    ))
}

/// The same game served by another node at `addr`.
fn same_game_on(addr: SocketAddr, g: &GameOnNode, sessions: &[Uuid]) -> Result<GameOnNode> {
    Ok(GameOnNode {
        game: g.game,
        api_key: g.api_key.clone(),
        plan: Arc::new(Plan::new(&Target::local(addr), &g.api_key, sessions)?),
        ws_url: format!("ws://{addr}/v1/sdk/ws"),
    })
}

/// Measures the per-operation costs on one engine and one Redis.
async fn costs(args: &CheckArgs, logs: &Path) -> Result<Costs> {
    let (_redis, url) = args.servers.redis(&[], logs).await?;
    let addr = url
        .trim_start_matches("redis://")
        .trim_end_matches("/0")
        .to_owned();
    let mut conn = connect(&addr).await?;
    let secret = secret();
    let engine_args = &args.servers.engine;
    let (mut engine, engine_addr) = spawn_engine(
        "engine-costs",
        &engine_args.engine_bin,
        &secret,
        &[("OFFER__STORE__REDIS_URL", url.clone())],
        logs,
        engine_args.start_timeout,
    )
    .await?;
    let (_, _, g) = game_on(engine_addr, &secret, 0, args.rest_sessions).await?;
    let pid = engine.pid();
    // Warm-up: the game loaded, the first offers and wallet calls made.
    let wallets = open_named(&g.ws_url, &g.api_key, args.wallet_sessions, "w").await?;
    let plans = [(0, &g)];
    let tagged = |w: Vec<Socket>| w.into_iter().map(|s| ((0, 0), s)).collect::<Vec<_>>();
    load(
        &plans,
        tagged(wallets),
        args,
        args.offer_rate,
        args.wallet_rate,
    )
    .await?;

    settle(pid, SETTLE_LIMIT).await?;
    let (rss, before) = (rss_kib(pid)?, redis_reading(&mut conn).await?);
    let fleet = Fleet::reading(
        open_named(&g.ws_url, &g.api_key, args.sessions, "i").await?,
        KILL_MARKER,
    );
    settle(pid, SETTLE_LIMIT).await?;
    let (rss_after, after) = (rss_kib(pid)?, redis_reading(&mut conn).await?);
    let n = args.sessions.max(1) as f64;
    let engine_kib_per_session = (rss_after as f64 - rss as f64) / n;
    let redis_bytes_per_session = (after.memory - before.memory) / n;

    // The fixed part: both processes idle, the sessions held.
    let (ticks, before) = (cpu_ticks(pid)?, redis_reading(&mut conn).await?);
    tokio::time::sleep(args.duration).await;
    let idle_s = args.duration.as_secs_f64().max(1e-3);
    let engine_idle_ms_per_s =
        cpu_ticks(pid)?.saturating_sub(ticks) as f64 * TICK_US / 1e3 / idle_s;
    let redis_idle_ms_per_s =
        (redis_reading(&mut conn).await?.cpu_us - before.cpu_us) / 1e3 / idle_s;

    // Above the fixed part, per operation served.
    let measure = |served: &Served,
                   elapsed: Duration,
                   ticks: u64,
                   before: RedisReading,
                   after: RedisReading| {
        let ops = served
            .offers
            .values()
            .chain(served.ops.values())
            .sum::<u64>() as f64;
        let ops = ops.max(1.0);
        let secs = elapsed.as_secs_f64();
        let engine_us = cpu_ticks(pid).map(|t| {
            (t.saturating_sub(ticks) as f64 * TICK_US - engine_idle_ms_per_s * 1e3 * secs) / ops
        });
        engine_us.map(|e| {
            (
                e,
                (after.cpu_us - before.cpu_us - redis_idle_ms_per_s * 1e3 * secs) / ops,
                (after.memory - before.memory) / ops,
            )
        })
    };
    let (ticks, before) = (cpu_ticks(pid)?, redis_reading(&mut conn).await?);
    let started = Instant::now();
    let served = load(&plans, Vec::new(), args, args.offer_rate, 0.0).await?;
    let elapsed = started.elapsed();
    let after = redis_reading(&mut conn).await?;
    let (engine_us_per_offer, redis_us_per_offer, redis_bytes_per_offer) =
        measure(&served, elapsed, ticks, before, after)?;
    let commands_per_offer =
        (after.commands - before.commands) / served.offers.values().sum::<u64>().max(1) as f64;
    settle(pid, SETTLE_LIMIT).await?;

    let wallets = open_named(&g.ws_url, &g.api_key, args.wallet_sessions, "v").await?;
    settle(pid, SETTLE_LIMIT).await?;
    let (ticks, before) = (cpu_ticks(pid)?, redis_reading(&mut conn).await?);
    let started = Instant::now();
    let served = load(&plans, tagged(wallets), args, 0.0, args.wallet_rate).await?;
    let elapsed = started.elapsed();
    let after = redis_reading(&mut conn).await?;
    let (engine_us_per_op, redis_us_per_op, redis_bytes_per_op) =
        measure(&served, elapsed, ticks, before, after)?;
    let ops = served.ops.values().sum::<u64>().max(1) as f64;
    let commands_per_op = (after.commands - before.commands) / ops;
    let scripts_per_op = (after.scripts - before.scripts) / ops;
    engine.check_alive()?;
    fleet.close().await;
    Ok(Costs {
        engine_idle_ms_per_s,
        redis_idle_ms_per_s,
        engine_kib_per_session,
        redis_bytes_per_session,
        engine_us_per_offer,
        redis_us_per_offer,
        redis_bytes_per_offer,
        engine_us_per_op,
        redis_us_per_op,
        redis_bytes_per_op,
        commands_per_offer,
        commands_per_op,
        scripts_per_op,
    })
}

/// The master (index into `masters`) that holds `game_id`'s hash slot.
async fn master_of(masters: &mut [MultiplexedConnection], game_id: Uuid) -> Result<usize> {
    let slot: u64 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(format!("{{{game_id}}}"))
        .query_async(&mut masters[0])
        .await
        .context("CLUSTER KEYSLOT")?;
    for (i, master) in masters.iter_mut().enumerate() {
        let keys: u64 = redis::cmd("CLUSTER")
            .arg("COUNTKEYSINSLOT")
            .arg(slot)
            .query_async(master)
            .await
            .context("CLUSTER COUNTKEYSINSLOT")?;
        if keys > 0 {
            return Ok(i);
        }
    }
    bail!("no master holds a key of game {game_id} (slot {slot})")
}

/// A figure predicted and measured.
fn row(out: &mut String, what: &str, predicted: f64, measured: f64, unit: &str) {
    // A sum over nothing is -0.0; adding 0.0 prints it as 0.0.
    let (predicted, measured) = (predicted + 0.0, measured + 0.0);
    let ratio = if predicted > 0.0 {
        format!("x{:.2}", measured / predicted)
    } else {
        "-".to_owned()
    };
    out.push_str(&format!(
        "{what:<34} {predicted:>12.1} {measured:>12.1} {ratio:>9}  {unit}\n"
    ));
}

/// Runs `cluster-check`.
pub async fn run(args: CheckArgs) -> Result<()> {
    if args.games == 0 || args.wallet_sessions == 0 || args.connections == 0 {
        bail!("--games, --wallet-sessions and --connections must be at least 1");
    }
    crate::fdlimit::ensure(2 * args.sessions as u64 + 2048)?;
    let logs = args.servers.engine.logs_dir()?;
    let costs = costs(&args, &logs).await.context("measuring the costs")?;
    eprintln!("costs on one engine and one Redis: {costs:?}");

    let (_masters, seeds) = crate::cluster::start_cluster(
        &args.servers.redis_bin,
        &args.redis_cli,
        args.servers.engine.start_timeout,
        &logs,
    )
    .await?;
    let mut masters = Vec::new();
    for seed in &seeds {
        masters.push(connect(seed).await?);
    }
    let secret = secret();
    let url = format!("redis+cluster://{}", seeds.join(","));
    let engine_args = &args.servers.engine;
    let mut nodes: Vec<(Server, SocketAddr)> = Vec::new();
    for name in ["node-1", "node-2"] {
        nodes.push(
            spawn_engine(
                name,
                &engine_args.engine_bin,
                &secret,
                &[("OFFER__STORE__REDIS_URL", url.clone())],
                &logs,
                engine_args.start_timeout,
            )
            .await?,
        );
    }
    let mut games: Vec<Vec<GameOnNode>> = vec![Vec::new(), Vec::new()];
    let mut game_master = Vec::new();
    for game in 0..args.games {
        let (game_id, sessions, g) = game_on(nodes[0].1, &secret, game, args.rest_sessions).await?;
        games[1].push(same_game_on(nodes[1].1, &g, &sessions)?);
        games[0].push(g);
        game_master.push(master_of(&mut masters, game_id).await?);
    }
    eprintln!("games on masters {game_master:?} (of {seeds:?})");

    // Warm-up: every game loaded on both nodes.
    let plans: Vec<(usize, &GameOnNode)> = (0..2)
        .flat_map(|n| games[n].iter().map(move |g| (n, g)))
        .collect();
    load(&plans, Vec::new(), &args, args.offer_rate, 0.0).await?;

    // Sessions held: `--sessions` per node, spread over the games.
    for (server, _) in &nodes {
        settle(server.pid(), SETTLE_LIMIT).await?;
    }
    let rss_before: Vec<u64> = nodes
        .iter()
        .map(|(s, _)| rss_kib(s.pid()))
        .collect::<Result<_>>()?;
    let mut mem_before = Vec::new();
    for m in &mut masters {
        mem_before.push(redis_reading(m).await?);
    }
    let mut held = Vec::new();
    let mut sessions_of_game = vec![0usize; args.games];
    for (n, node_games) in games.iter().enumerate() {
        for g in node_games {
            let share =
                args.sessions / args.games + usize::from(g.game < args.sessions % args.games);
            let prefix = format!("i{n}-");
            held.push(Fleet::reading(
                open_named(&g.ws_url, &g.api_key, share, &prefix).await?,
                KILL_MARKER,
            ));
            sessions_of_game[g.game] += share;
        }
    }
    for (server, _) in &nodes {
        settle(server.pid(), SETTLE_LIMIT).await?;
    }
    let rss_after: Vec<u64> = nodes
        .iter()
        .map(|(s, _)| rss_kib(s.pid()))
        .collect::<Result<_>>()?;
    let mut mem_sessions = Vec::new();
    for m in &mut masters {
        mem_sessions.push(redis_reading(m).await?);
    }

    // The load: offers and wallet operations at once.
    let mut wallets = Vec::new();
    for i in 0..args.wallet_sessions {
        let (n, game) = (i % 2, (i / 2) % args.games);
        let g = &games[n][game];
        let ws =
            ws_client::open(&g.ws_url, &g.api_key, Uuid::new_v4(), &format!("w{n}-{i}")).await?;
        wallets.push(((n, game), ws));
    }
    for (server, _) in &nodes {
        settle(server.pid(), SETTLE_LIMIT).await?;
    }
    // Each process's fixed part here, idle with the sessions held.
    let ticks: Vec<u64> = nodes
        .iter()
        .map(|(s, _)| cpu_ticks(s.pid()))
        .collect::<Result<_>>()?;
    let mut idle_before = Vec::new();
    for m in &mut masters {
        idle_before.push(redis_reading(m).await?);
    }
    tokio::time::sleep(args.duration).await;
    let idle_s = args.duration.as_secs_f64().max(1e-3);
    let node_idle_ms_per_s: Vec<f64> = nodes
        .iter()
        .zip(&ticks)
        .map(|((s, _), t)| {
            Ok(cpu_ticks(s.pid())?.saturating_sub(*t) as f64 * TICK_US / 1e3 / idle_s)
        })
        .collect::<Result<_>>()?;
    let mut master_idle_ms_per_s = Vec::new();
    for (m, before) in masters.iter_mut().zip(&idle_before) {
        master_idle_ms_per_s.push((redis_reading(m).await?.cpu_us - before.cpu_us) / 1e3 / idle_s);
    }

    let ticks: Vec<u64> = nodes
        .iter()
        .map(|(s, _)| cpu_ticks(s.pid()))
        .collect::<Result<_>>()?;
    let mut load_before = Vec::new();
    for m in &mut masters {
        load_before.push(redis_reading(m).await?);
    }
    let started = Instant::now();
    let served = load(&plans, wallets, &args, args.offer_rate, args.wallet_rate).await?;
    let load_s = started.elapsed().as_secs_f64();
    let node_cpu_ms: Vec<f64> = nodes
        .iter()
        .zip(&ticks)
        .map(|((s, _), t)| Ok(cpu_ticks(s.pid())?.saturating_sub(*t) as f64 * TICK_US / 1e3))
        .collect::<Result<_>>()?;
    let mut load_after = Vec::new();
    for m in &mut masters {
        load_after.push(redis_reading(m).await?);
    }
    for (server, _) in &mut nodes {
        server.check_alive()?;
    }
    for fleet in held {
        fleet.close().await;
    }

    let count = |map: &BTreeMap<(usize, usize), u64>, f: &dyn Fn(usize, usize) -> bool| {
        map.iter()
            .filter(|((n, g), _)| f(*n, *g))
            .map(|(_, v)| *v as f64)
            .sum::<f64>()
    };
    let mut out = format!(
        "\nTwo engine nodes on a three-master Redis Cluster: {} games (on masters {:?}), {} \
         WebSocket sessions held per node, offers at {:.0}/s and wallet operations at {:.0}/s \
         over both nodes for {:?}; predicted from the costs on one engine and one Redis, then \
         measured; logs in {}\n",
        args.games,
        game_master.iter().map(|m| m + 1).collect::<Vec<_>>(),
        args.sessions,
        args.offer_rate,
        args.wallet_rate,
        args.duration,
        logs.display()
    );
    out.push_str(&format!(
        "costs: idle with the sessions held engine {:.1} ms/s, Redis {:.1} ms/s; engine {:.2} KiB \
         and Redis {:.0} B per session held; above idle, per offer engine {:.0} µs, Redis {:.1} \
         µs and {:.0} B; per wallet operation engine {:.0} µs, Redis {:.1} µs and {:.0} B; Redis \
         commands {:.2} per offer and {:.2} per wallet operation, {:.3} wallet script calls per \
         wallet operation\n\
         CPU predicted = this setup's own idle CPU (measured over {:?} before the load: nodes \
         {:.1?} ms/s, masters {:.1?} ms/s) x the load's length + the operations served x the \
         costs above idle\n",
        costs.engine_idle_ms_per_s,
        costs.redis_idle_ms_per_s,
        costs.engine_kib_per_session,
        costs.redis_bytes_per_session,
        costs.engine_us_per_offer,
        costs.redis_us_per_offer,
        costs.redis_bytes_per_offer,
        costs.engine_us_per_op,
        costs.redis_us_per_op,
        costs.redis_bytes_per_op,
        costs.commands_per_offer,
        costs.commands_per_op,
        costs.scripts_per_op,
        args.duration,
        node_idle_ms_per_s,
        master_idle_ms_per_s
    ));
    out.push_str(&format!(
        "{:<34} {:>12} {:>12} {:>9}\n",
        "figure", "predicted", "measured", "meas/pred"
    ));
    for (n, ((&before, &after), cpu)) in rss_before
        .iter()
        .zip(&rss_after)
        .zip(&node_cpu_ms)
        .enumerate()
    {
        let offers = count(&served.offers, &|node, _| node == n);
        let ops = count(&served.ops, &|node, _| node == n);
        row(
            &mut out,
            &format!("node {} memory, sessions", n + 1),
            args.sessions as f64 * costs.engine_kib_per_session / 1024.0,
            (after as f64 - before as f64) / 1024.0,
            "MiB",
        );
        row(
            &mut out,
            &format!("node {} CPU ({offers:.0} offers, {ops:.0} ops)", n + 1),
            node_idle_ms_per_s[n] * load_s
                + (offers * costs.engine_us_per_offer + ops * costs.engine_us_per_op) / 1e3,
            *cpu,
            "ms",
        );
    }
    for (m, master) in seeds.iter().enumerate() {
        let on = |g: usize| game_master[g] == m;
        let sessions: f64 = (0..args.games)
            .filter(|g| on(*g))
            .map(|g| sessions_of_game[g] as f64)
            .sum();
        let offers = count(&served.offers, &|_, g| on(g));
        let ops = count(&served.ops, &|_, g| on(g));
        row(
            &mut out,
            &format!("master {} memory, sessions", m + 1),
            sessions * costs.redis_bytes_per_session / 1024.0,
            (mem_sessions[m].memory - mem_before[m].memory) / 1024.0,
            "KiB",
        );
        row(
            &mut out,
            &format!("master {} memory, load", m + 1),
            (offers * costs.redis_bytes_per_offer + ops * costs.redis_bytes_per_op) / 1024.0,
            (load_after[m].memory - load_before[m].memory) / 1024.0,
            "KiB",
        );
        row(
            &mut out,
            &format!("master {} CPU ({offers:.0} offers, {ops:.0} ops)", m + 1),
            master_idle_ms_per_s[m] * load_s
                + (offers * costs.redis_us_per_offer + ops * costs.redis_us_per_op) / 1e3,
            (load_after[m].cpu_us - load_before[m].cpu_us) / 1e3,
            &format!("ms ({master})"),
        );
        row(
            &mut out,
            &format!("master {} commands", m + 1),
            offers * costs.commands_per_offer + ops * costs.commands_per_op,
            load_after[m].commands - load_before[m].commands,
            "",
        );
        row(
            &mut out,
            &format!("master {} wallet script calls", m + 1),
            ops * costs.scripts_per_op,
            load_after[m].scripts - load_before[m].scripts,
            "",
        );
    }
    print!("{out}");
    Ok(())
}
