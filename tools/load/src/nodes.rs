//! `nodes`: REST offers per second with one engine node against two nodes sharing one
//! Redis, the clients spread over both, in one run.
//!
//! Servers are child processes: a private `redis-server` (no persistence) and two engines on
//! it with the same JWT secret. The first node is set up over REST as `compare` sets an
//! engine up (a game, its catalogue, an SDK key, the sessions); the second serves the same
//! game, key and sessions from the shared store, loading each the first time a request names
//! it. Rounds alternate: all `--connections` on the first node, then the same connections
//! spread round-robin over both nodes, and so on. The table gives each side's median rps,
//! p50 and p99 and the ratio two/one.
//!
//! The offer path reads only the published snapshot, so on a machine with as many cores as
//! the load needs a second node adds throughput. Where every process shares the same two
//! cores (the development machines), a second node adds no core: the ratio then weighs the
//! cost of running two engines (two runtimes, each with its own background work, the second
//! node's loads from the shared store) against how well one engine alone keeps both cores
//! busy; on a machine shared with other work it also counts the larger share of the cores
//! that more threads win from the scheduler. It is not a scale-out figure.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::cluster::offers_table;
use crate::drive::{self, Plan, Stats, Target};
use crate::servers::{ServerArgs, secret, spawn_engine};
use crate::{LoadArgs, SetupArgs, parse_duration, setup};

/// Flags of `nodes`.
#[derive(Debug, Args)]
pub struct NodesArgs {
    /// Connections of every run, on one node or spread over both.
    #[command(flatten)]
    pub load: LoadArgs,
    /// The game's setup (sessions, catalogue size).
    #[command(flatten)]
    pub setup: SetupArgs,
    /// Unmeasured warm-up of each side before the rounds.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Measured rounds; each round is one run on one node, then one on both.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// The servers started for the measurement.
    #[command(flatten)]
    pub servers: ServerArgs,
}

/// Drives `plans` at once for `duration`, `connections` spread over them round-robin;
/// their counters together, over the longest of their wall times.
async fn spread(plans: &[Arc<Plan>], connections: usize, duration: Duration) -> Result<Stats> {
    let runs = futures::future::try_join_all(plans.iter().enumerate().map(|(i, plan)| {
        let share = connections / plans.len() + usize::from(i < connections % plans.len());
        drive::run(plan, share, duration)
    }))
    .await?;
    let mut total = Stats::new()?;
    let mut elapsed = Duration::ZERO;
    for run in &runs {
        total.merge(run)?;
        elapsed = elapsed.max(run.elapsed);
    }
    total.elapsed = elapsed;
    Ok(total)
}

/// Runs `nodes`.
pub async fn run(args: NodesArgs) -> Result<()> {
    if args.rounds == 0 || args.load.connections < 2 {
        bail!("--rounds must be at least 1 and --connections at least 2");
    }
    let logs = args.servers.engine.logs_dir()?;
    let (_redis, redis_url) = args.servers.redis(&[], &logs).await?;
    let secret = secret();
    let env = [("OFFER__STORE__REDIS_URL", redis_url.clone())];
    let engine = &args.servers.engine;
    let mut nodes = Vec::new();
    for name in ["node-1", "node-2"] {
        let (server, addr) = spawn_engine(
            name,
            &engine.engine_bin,
            &secret,
            &env,
            &logs,
            engine.start_timeout,
        )
        .await?;
        eprintln!("{name} on {addr} (pid {}) with {redis_url}", server.pid());
        nodes.push((server, addr));
    }
    let prepared = setup::prepare(&format!("http://{}", nodes[0].1), &secret, &args.setup)
        .await
        .with_context(|| format!("setting the game up; {}", nodes[0].0.log_tail()))?;
    let plans = nodes
        .iter()
        .map(|(_, addr)| {
            Plan::new(&Target::local(*addr), &prepared.api_key, &prepared.sessions).map(Arc::new)
        })
        .collect::<Result<Vec<_>>>()?;
    let sides = [&plans[..1], &plans[..]];
    let connections = args.load.connections;

    if !args.warmup.is_zero() {
        for side in sides {
            spread(side, connections, args.warmup).await?;
        }
    }
    let mut offers: [Vec<Stats>; 2] = [Vec::new(), Vec::new()];
    for round in 1..=args.rounds {
        for (i, side) in sides.into_iter().enumerate() {
            let stats = spread(side, connections, args.load.duration).await?;
            for (server, _) in &mut nodes {
                server.check_alive()?;
            }
            eprintln!(
                "round {round} {} node(s) {:>9.0} rps  p50 {:.3} ms  p99 {:.3} ms  {}",
                side.len(),
                stats.rps(),
                stats.quantile_ms(0.5),
                stats.quantile_ms(0.99),
                stats.status_line()
            );
            offers[i].push(stats);
        }
    }
    let mut out = format!(
        "\nPOST /v1/sdk/offers/next on one engine node, then on two sharing one Redis, {} \
         connections (spread round-robin over the nodes), {} sessions, {} rounds of {:?} \
         alternating; Redis {}; logs in {}\n",
        connections,
        args.setup.sessions,
        args.rounds,
        args.load.duration,
        redis_url,
        logs.display()
    );
    out.push_str(&offers_table("nodes", ["one", "two"], &offers)?);
    print!("{out}");
    Ok(())
}
