//! `cluster`: the engine on a three-master Redis Cluster against the engine on one Redis, in
//! one run, for the two paths that matter: REST offers and wallet operations.
//!
//! Servers are child processes: one `redis-server` (no persistence), three cluster-enabled
//! `redis-server`s joined with `redis-cli --cluster create`, and two engines, one on each
//! store (`redis://...` and `redis+cluster://...`). Each engine is set up over REST as a studio
//! would (a game, its catalogue, an SDK key, the sessions of the offer runs) and gets its own
//! WebSocket sessions for the wallet runs. Rounds alternate single Redis, cluster, single,
//! cluster, ... for offers (`POST /v1/sdk/offers/next`, the same driver as `compare`) and
//! then for wallets (`currency_earned` over WebSocket, one in flight per session, as in
//! `wallet`). The tables give each side's medians and the ratio cluster/single.
//!
//! All of one game's keys share its hash slot, so one game's wallet operations all go to one
//! master: the figure is the cost of the cluster client, not a scale-out.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::child::{Server, free_port, logs_dir, wait_tcp};
use crate::drive::{self, Plan, Stats, Target};
use crate::figures::{median, ratio};
use crate::redis_server;
use crate::servers::secret;
use crate::wallet::{Run, engine_run};
use crate::ws_client::{self, Socket};
use crate::{LoadArgs, SetupArgs, parse_duration, setup};

/// Flags of `cluster`.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// The engine binary (built beforehand: `cargo build --release -p offer-engine`).
    #[arg(long, default_value = "target/release/offer-engine")]
    pub engine_bin: PathBuf,
    /// The `redis-server` binary.
    #[arg(long, default_value = "redis-server")]
    pub redis_bin: PathBuf,
    /// The `redis-cli` binary (forms the cluster).
    #[arg(long, default_value = "redis-cli")]
    pub redis_cli: PathBuf,
    /// Offer load settings of every offer run.
    #[command(flatten)]
    pub load: LoadArgs,
    /// Engine setup (sessions of the offer runs, catalogue size).
    #[command(flatten)]
    pub setup: SetupArgs,
    /// Wallet operations in flight (WebSocket sessions per engine).
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Measured duration of each wallet run.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub wallet_duration: Duration,
    /// Unmeasured warm-up of each engine before the rounds of each path.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Measured rounds of each path; each round is one single-Redis run then one cluster run.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Directory for the servers' output and the cluster's state files (default: a fresh
    /// directory under the temp dir).
    #[arg(long)]
    pub logs: Option<PathBuf>,
    /// Longest wait for a server to answer after its start.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub start_timeout: Duration,
}

/// One engine and what the runs need of it.
struct Side {
    name: &'static str,
    engine: Server,
    /// The offer runs' requests.
    plan: Arc<Plan>,
    /// Where the wallet sessions connect.
    ws_url: String,
    /// Its SDK key.
    api_key: String,
}

impl Side {
    /// Opens the wallet sessions. Done just before the wallet runs: a session that reads
    /// nothing during the offer runs would miss the engine's pings and be closed as idle.
    async fn open_sessions(&self, n: usize) -> Result<Vec<Socket>> {
        ws_client::open_many(&self.ws_url, &self.api_key, n, 64)
            .await
            .with_context(|| {
                format!(
                    "opening the {} engine's sessions; {}",
                    self.name,
                    self.engine.log_tail()
                )
            })
    }
}

/// Runs `cluster`.
pub async fn run(args: ClusterArgs) -> Result<()> {
    if args.rounds == 0 || args.concurrency == 0 {
        bail!("--rounds and --concurrency must be at least 1");
    }
    let logs = logs_dir(args.logs.as_ref())?;

    let single_addr = free_port()?;
    let mut single = Server::spawn(
        "redis-single",
        redis_server::command(&args.redis_bin, single_addr.port(), &[]),
        &logs,
    )?;
    wait_tcp(&mut single, single_addr, args.start_timeout).await?;
    let (_nodes, seeds) =
        start_cluster(&args.redis_bin, &args.redis_cli, args.start_timeout, &logs).await?;

    let mut sides = [
        start_side(
            &args,
            "single",
            "engine-single",
            format!("redis://{single_addr}/0"),
            &logs,
        )
        .await?,
        start_side(
            &args,
            "cluster",
            "engine-cluster",
            format!("redis+cluster://{}", seeds.join(",")),
            &logs,
        )
        .await?,
    ];
    eprintln!("both engines set up; logs in {}", logs.display());

    // Offers.
    if !args.warmup.is_zero() {
        for side in &sides {
            drive::run(&side.plan, args.load.connections, args.warmup).await?;
        }
    }
    let mut offers: [Vec<Stats>; 2] = [Vec::new(), Vec::new()];
    for round in 1..=args.rounds {
        for (i, side) in sides.iter_mut().enumerate() {
            let stats = drive::run(&side.plan, args.load.connections, args.load.duration).await?;
            side.engine.check_alive()?;
            eprintln!(
                "offers round {round} {:<8} {:>9.0} rps  p50 {:.3} ms  p99 {:.3} ms  {}",
                side.name,
                stats.rps(),
                stats.quantile_ms(0.5),
                stats.quantile_ms(0.99),
                stats.status_line()
            );
            offers[i].push(stats);
        }
    }

    // Wallets.
    let mut sockets = [
        sides[0].open_sessions(args.concurrency).await?,
        sides[1].open_sessions(args.concurrency).await?,
    ];
    if !args.warmup.is_zero() {
        for fleet in &mut sockets {
            engine_run(fleet, "warm", args.warmup).await?;
        }
    }
    let mut wallets: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    for round in 1..=args.rounds {
        let label = format!("r{round}");
        for (i, side) in sides.iter_mut().enumerate() {
            let run = engine_run(&mut sockets[i], &label, args.wallet_duration).await?;
            side.engine.check_alive()?;
            eprintln!(
                "wallet round {round} {:<8} {:>9.0} ops/s ({} failed)",
                side.name,
                run.ops_per_s(),
                run.failed
            );
            wallets[i].push(run);
        }
    }

    print!("{}", table(&args, &offers, &wallets, &logs)?);
    Ok(())
}

/// A free loopback port `p <= 55535` with `p + 10000` free too (a cluster node's bus port).
fn cluster_port(taken: &[u16]) -> Result<u16> {
    for _ in 0..1000 {
        let port = free_port()?.port();
        let clash = taken
            .iter()
            .any(|t| *t == port || *t + 10000 == port || port + 10000 == *t);
        if port <= 55535
            && !clash
            && std::net::TcpListener::bind(("127.0.0.1", port + 10000)).is_ok()
        {
            return Ok(port);
        }
    }
    bail!("found no loopback port p <= 55535 with p + 10000 free")
}

/// Starts three cluster nodes, joins them as three masters and waits until every node says
/// `cluster_state:ok`. Returns the nodes (killed when dropped) and their `host:port`s.
pub(crate) async fn start_cluster(
    redis_bin: &Path,
    redis_cli: &Path,
    start_timeout: Duration,
    logs: &Path,
) -> Result<(Vec<Server>, Vec<String>)> {
    const NAMES: [&str; 3] = ["redis-cluster-1", "redis-cluster-2", "redis-cluster-3"];
    let dir = logs.join("cluster");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut ports = Vec::new();
    let mut nodes = Vec::new();
    for name in NAMES {
        let port = cluster_port(&ports)?;
        ports.push(port);
        let extra = [
            "--cluster-enabled".to_owned(),
            "yes".to_owned(),
            "--cluster-config-file".to_owned(),
            format!("nodes-{port}.conf"),
            "--dir".to_owned(),
            dir.display().to_string(),
        ];
        let mut node = Server::spawn(name, redis_server::command(redis_bin, port, &extra), logs)?;
        wait_tcp(&mut node, ([127, 0, 0, 1], port).into(), start_timeout).await?;
        nodes.push(node);
    }
    let seeds: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    let out = Command::new(redis_cli)
        .args(["--cluster", "create"])
        .args(&seeds)
        .arg("--cluster-yes")
        .output()
        .with_context(|| format!("running {}", redis_cli.display()))?;
    if !out.status.success() {
        bail!(
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let start = Instant::now();
    for port in &ports {
        loop {
            let info = Command::new(redis_cli)
                .args(["-p", &port.to_string(), "cluster", "info"])
                .output()
                .with_context(|| format!("running {}", redis_cli.display()))?;
            if String::from_utf8_lossy(&info.stdout).contains("cluster_state:ok") {
                break;
            }
            if start.elapsed() > start_timeout {
                bail!(
                    "cluster node {port} is not cluster_state:ok after {:?}",
                    start_timeout
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    eprintln!("cluster of three masters on {}", seeds.join(", "));
    Ok((nodes, seeds))
}

/// Starts one engine on `redis_url` and sets it up.
async fn start_side(
    args: &ClusterArgs,
    name: &'static str,
    log_name: &'static str,
    redis_url: String,
    logs: &Path,
) -> Result<Side> {
    if !args.engine_bin.is_file() {
        bail!(
            "no engine binary at {} (build it: cargo build --release -p offer-engine, \
             or pass --engine-bin)",
            args.engine_bin.display()
        );
    }
    let addr = free_port()?;
    let secret = secret();
    let mut cmd = Command::new(&args.engine_bin);
    cmd.arg("serve")
        .envs(crate::servers::ENGINE_ENV)
        .env("OFFER__SERVER__BIND", addr.to_string())
        .env("OFFER__AUTH__JWT_SECRET", &secret)
        .env("OFFER__STORE__REDIS_URL", &redis_url);
    let mut engine = Server::spawn(log_name, cmd, logs)?;
    engine
        .wait_ready(&format!("http://{addr}/readyz"), true, args.start_timeout)
        .await?;
    let target = Target::local(addr);
    let prepared = setup::prepare(&target.to_string(), &secret, &args.setup)
        .await
        .with_context(|| format!("setting the {name} engine up; {}", engine.log_tail()))?;
    let plan = Arc::new(Plan::new(&target, &prepared.api_key, &prepared.sessions)?);
    eprintln!(
        "{name}: engine on {addr} (pid {}) with {redis_url}",
        engine.pid()
    );
    Ok(Side {
        name,
        engine,
        plan,
        ws_url: format!("ws://{addr}/v1/sdk/ws"),
        api_key: prepared.api_key,
    })
}

/// The final tables: offers, then wallets, each with the ratio cluster/single of medians.
fn table(
    args: &ClusterArgs,
    offers: &[Vec<Stats>; 2],
    wallets: &[Vec<Run>; 2],
    logs: &Path,
) -> Result<String> {
    let mut out = format!(
        "\nThe engine on one Redis (single) and on a three-master Redis Cluster (cluster), \
         {} rounds alternating; logs in {}\n",
        args.rounds,
        logs.display()
    );
    out.push_str(&format!(
        "\nPOST /v1/sdk/offers/next, {} connections, {} sessions, {:?} per run\n",
        args.load.connections, args.setup.sessions, args.load.duration
    ));
    out.push_str(&offers_table("store", ["single", "cluster"], offers)?);
    out.push_str(&format!(
        "\nWallet operations (currency_earned over WebSocket), {} in flight, {:?} per run\n",
        args.concurrency, args.wallet_duration
    ));
    out.push_str(&format!(
        "{:<9} {:>11} {:>8}  {}\n",
        "store", "ops/s(med)", "failed", "ops/s per round"
    ));
    let mut ops = [0.0; 2];
    for (i, name) in ["single", "cluster"].into_iter().enumerate() {
        let rates: Vec<f64> = wallets[i].iter().map(Run::ops_per_s).collect();
        ops[i] = median(&rates);
        let per: Vec<String> = rates.iter().map(|r| format!("{r:.0}")).collect();
        out.push_str(&format!(
            "{:<9} {:>11.0} {:>8}  {}\n",
            name,
            ops[i],
            wallets[i].iter().map(|r| r.failed).sum::<u64>(),
            per.join(" ")
        ));
    }
    out.push_str(&format!(
        "cluster/single: ops/s {:.2}\n",
        ratio(ops[1], ops[0])
    ));
    Ok(out)
}

/// Two sides' offer rounds (median rps, p50 and p99 over every round, each round's rps)
/// under the heading `column`, then the ratios of the second side to the first.
pub(crate) fn offers_table(
    column: &str,
    names: [&str; 2],
    offers: &[Vec<Stats>; 2],
) -> Result<String> {
    let mut out = format!(
        "{:<9} {:>10} {:>9} {:>9}  {}\n",
        column, "rps(med)", "p50 ms", "p99 ms", "rps per round"
    );
    let mut rps = [0.0; 2];
    let mut p50 = [0.0; 2];
    let mut p99 = [0.0; 2];
    for (i, name) in names.into_iter().enumerate() {
        let mut merged = Stats::new()?;
        for run in &offers[i] {
            merged.merge(run)?;
        }
        let rates: Vec<f64> = offers[i].iter().map(Stats::rps).collect();
        rps[i] = median(&rates);
        p50[i] = merged.quantile_ms(0.5);
        p99[i] = merged.quantile_ms(0.99);
        let per: Vec<String> = rates.iter().map(|r| format!("{r:.0}")).collect();
        out.push_str(&format!(
            "{:<9} {:>10.0} {:>9.3} {:>9.3}  {}\n",
            name,
            rps[i],
            p50[i],
            p99[i],
            per.join(" ")
        ));
    }
    out.push_str(&format!(
        "{}/{}: rps {:.2}, p50 x{:.2}, p99 x{:.2}\n",
        names[1],
        names[0],
        ratio(rps[1], rps[0]),
        ratio(p50[1], p50[0]),
        ratio(p99[1], p99[0])
    ));
    Ok(out)
}
