//! `offer-load`: the end-to-end load tool of the offer engine.
//!
//! Subcommands:
//! - `baseline` runs a trivial axum server that does the same HTTP work as the engine's
//!   `POST /v1/sdk/offers/next` (bearer check, JSON body in, one-item offer out) and nothing
//!   else: the cheapest honest "same work minus the engine".
//! - `offers` drives `POST /v1/sdk/offers/next` on a target with many keep-alive connections
//!   and prints throughput and latency.
//! - `setup` prepares a running engine over REST as a studio would (game, catalogue, SDK key,
//!   sessions), so `offers` can be pointed at it by hand.
//! - `compare` does everything in one run: starts the engine and the baseline as child
//!   processes, sets the engine up, alternates engine and baseline rounds, and prints a table
//!   (engine, baseline, ratio) last. `--against memory` compares the engine on its default
//!   store (a SQLite file) with the engine on SQLite in memory instead. `--curve 25,50,75`
//!   then drives both at those shares of the baseline's maximum rate, at a constant rate.
//! - `ws-idle` measures the engine's memory per idle WebSocket session (10,000 by default).
//! - `ws-broadcast` times a kill-switch broadcast to 10,000 sessions against `ws-baseline`, a
//!   bare tokio-tungstenite broadcast server.
//! - `wallet` measures wallet operations per second through the engine (over WebSocket, 64 in
//!   flight) against the engine's own wallet script called directly through redis-rs.
//! - `cluster` measures offers and wallet operations with the engine on a three-master Redis
//!   Cluster against the engine on one Redis.
//! - `cluster-check` measures the per-operation costs of a capacity model (engine and Redis
//!   CPU and memory per session, offer and wallet operation) on one engine and one Redis,
//!   predicts from them what two engine nodes on a three-master Redis Cluster use under a
//!   given load, and measures it (`docs/capacity.md`).
//! - `nodes` measures REST offers with one engine node against two nodes on one Redis, the
//!   clients spread over both.
//! - `wallet-stores` measures the same operations through the engine on its two durable
//!   stores: SQLite with `sync = full` against Redis with `appendfsync always`.
//! - `holdout` times the holdout comparison of a million players in Redis and the offer
//!   path while it is computed.
//! - `growth-games` measures start-up time and memory with 1, 100 and 10,000 games of 500
//!   items in the store; `growth-sessions` the memory per open REST session (no socket) at
//!   100,000 and 1,000,000 sessions.
//! - `receipt-flood` measures the REST offer path alone and while many clients send purchases
//!   with forged App Store receipts (the costliest kind that grants nothing) as fast as they
//!   are answered: the offer path's p99 under the flood against its p99 without.
//! - `capacity` measures what one engine node holds at 5,000, 10,000 and 19,000 WebSocket
//!   sessions (a process here may hold at most 20,000 files): its memory, the time to open
//!   the sessions, the kill switch's delivery to all of them (p50, p99, last), and the REST
//!   offer path's latency at half its maximum rate while they are held, each beside the bare
//!   tokio-tungstenite server where one exists, with the growth per session from the
//!   smallest size to the largest; then it checks that an engine at `server.max_connections`
//!   refuses the connections past it and still reaches the sessions it holds.
//! - `arena` plays a simulated game against the engine through its SDK surfaces (players
//!   with attributes, triggers, purchases drawn from a known truth) and reports the share
//!   of the achievable revenue its AI earns, scenario by scenario (`docs/arena.md`).
//!
//! On a shared 2-core machine absolute latencies measure the machine; quote the ratio.

mod arena;
mod baseline;
mod callgrind;
mod capacity;
mod catalogue;
mod child;
mod cluster;
mod cluster_check;
mod compare;
mod drive;
mod fdlimit;
mod figures;
mod growth;
mod holdout;
mod nodes;
mod rate_curve;
mod receipt_flood;
mod redis_server;
mod script_calls;
mod servers;
mod settle;
mod setup;
mod target_line;
mod wallet;
mod wallet_stores;
mod ws_baseline;
mod ws_client;
mod ws_load;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};

/// Command line of `offer-load`.
#[derive(Debug, Parser)]
#[command(name = "offer-load", version, about = "Load tool of the offer engine")]
struct Cli {
    /// What to run.
    #[command(subcommand)]
    command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Run the baseline server (a trivial offer endpoint) until killed.
    Baseline {
        /// Listen address.
        #[arg(long, default_value = "127.0.0.1:8090")]
        bind: SocketAddr,
    },
    /// Drive `POST /v1/sdk/offers/next` on a target and print rps, p50 and p99.
    Offers {
        /// Base URL of the target, for example http://127.0.0.1:8080.
        #[arg(long)]
        target: String,
        /// SDK key sent as `Authorization: Bearer <key>`.
        #[arg(long)]
        key: String,
        /// A file with one session id (UUID) per line, or a number N of random session ids
        /// (fine for the baseline; the engine answers only sessions it knows).
        #[arg(long, default_value = "2000")]
        sessions: String,
        /// Load settings.
        #[command(flatten)]
        load: LoadArgs,
        /// Untimed warm-up before the measured run.
        #[arg(long, default_value = "0s", value_parser = parse_duration)]
        warmup: Duration,
    },
    /// Set a running engine up over REST (game, catalogue, SDK key, sessions); prints the key.
    Setup {
        /// Base URL of the engine.
        #[arg(long)]
        target: String,
        /// The engine's JWT secret (OFFER__AUTH__JWT_SECRET), to mint an admin token.
        #[arg(long, env = "OFFER__AUTH__JWT_SECRET")]
        jwt_secret: String,
        /// Setup settings.
        #[command(flatten)]
        setup: SetupArgs,
        /// Where to write the opened session ids, one per line (for `offers --sessions`).
        #[arg(long, default_value = "sessions.txt")]
        sessions_file: PathBuf,
    },
    /// Engine against baseline in one run, each server in its own child process.
    Compare(compare::CompareArgs),
    /// Engine RSS per idle WebSocket session (N sessions open, hello and ready, then idle).
    WsIdle(ws_load::IdleArgs),
    /// Kill-switch broadcast to N WebSocket sessions, engine against `ws-baseline`.
    WsBroadcast(ws_load::BroadcastArgs),
    /// The bare tokio-tungstenite broadcast server (the baseline of `ws-broadcast`).
    WsBaseline {
        /// Listen address.
        #[arg(long, default_value = "127.0.0.1:8091")]
        bind: SocketAddr,
    },
    /// Wallet operations per second: engine over WebSocket against its Lua script via redis-rs.
    Wallet(wallet::WalletArgs),
    /// Offers and wallet operations: the engine on a Redis Cluster against one Redis.
    Cluster(cluster::ClusterArgs),
    /// A capacity model's costs on one node, checked against two nodes on three Redis masters.
    ClusterCheck(cluster_check::CheckArgs),
    /// REST offers: one engine node against two on one Redis, clients spread over both.
    Nodes(nodes::NodesArgs),
    /// The holdout comparison of a million players in Redis, and the offer path meanwhile.
    Holdout(holdout::HoldoutArgs),
    /// Wallet operations per second through the engine: SQLite (sync full) against Redis
    /// (appendfsync always).
    WalletStores(wallet_stores::WalletStoresArgs),
    /// Start-up time and memory against the number of games (of 500 items) in the store.
    GrowthGames(growth::GamesArgs),
    /// Memory per open REST session (no socket) at 100,000 and 1,000,000 sessions.
    GrowthSessions(growth::SessionsArgs),
    /// A simulated game against the engine: its AI's share of the achievable revenue.
    Arena(arena::ArenaArgs),
    /// One node's capacity: memory, open time, kill-switch delivery and the offer path's
    /// latency at 5,000, 10,000 and 19,000 WebSocket sessions, and the refusal past
    /// `server.max_connections`.
    Capacity(capacity::CapacityArgs),
    /// REST offers alone, then under a flood of forged purchase receipts: p99 with / without.
    ReceiptFlood(receipt_flood::FloodArgs),
}

/// How hard and how long to drive a target.
#[derive(Debug, Clone, Args)]
pub struct LoadArgs {
    /// Concurrent keep-alive HTTP/1.1 connections, one task each, one request in flight each.
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// Measured duration of a run, for example 10s, 500ms, 1m.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub duration: Duration,
}

/// How a studio's game is set up on the engine.
#[derive(Debug, Clone, Args)]
pub struct SetupArgs {
    /// Sessions opened with `POST /v1/sdk/sessions`.
    #[arg(long, default_value_t = 2000)]
    pub sessions: usize,
    /// Catalogue size (items across currency packs, consumables, equipment, cosmetics).
    #[arg(long, default_value_t = 200)]
    pub items: usize,
    /// The game's mode: Shadow (a new game's, the shelf serves and the learner learns from
    /// it) or Autonomous (the learner serves level 1 to the treated players).
    #[arg(long, value_enum, default_value_t = GameMode::Shadow)]
    pub mode: GameMode,
}

/// The mode the load's game runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GameMode {
    /// As the engine creates a game.
    Shadow,
    /// Promoted through Assisted to Autonomous before the load.
    Autonomous,
}

/// Parses `10s`, `500ms`, `2m`, or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("bad duration `{s}` (try 10s, 500ms, 1m)"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "" | "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        _ => Err(format!("bad duration unit in `{s}` (ms, s or m)")),
    }
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("building the tokio runtime")?;
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Baseline { bind } => baseline::serve(bind).await,
        Command::Offers {
            target,
            key,
            sessions,
            load,
            warmup,
        } => {
            let target = drive::Target::parse(&target)?;
            let sessions = load_sessions(&sessions)?;
            let plan = std::sync::Arc::new(drive::Plan::new(&target, &key, &sessions)?);
            if !warmup.is_zero() {
                drive::run(&plan, load.connections, warmup).await?;
            }
            let stats = drive::run(&plan, load.connections, load.duration).await?;
            stats.print_report(&target.to_string());
            Ok(())
        }
        Command::Setup {
            target,
            jwt_secret,
            setup,
            sessions_file,
        } => {
            let target = target.trim_end_matches('/').to_owned();
            let prepared = setup::prepare(&target, &jwt_secret, &setup).await?;
            let lines: String = prepared.sessions.iter().map(|s| format!("{s}\n")).collect();
            std::fs::write(&sessions_file, lines)
                .with_context(|| format!("writing {}", sessions_file.display()))?;
            eprintln!(
                "game {} ready: {} items, {} sessions in {}",
                prepared.game_id,
                setup.items,
                prepared.sessions.len(),
                sessions_file.display()
            );
            println!("{}", prepared.api_key);
            Ok(())
        }
        Command::Compare(args) => compare::run(args).await,
        Command::WsIdle(args) => interruptible(ws_load::idle(args)).await,
        Command::WsBroadcast(args) => interruptible(ws_load::broadcast(args)).await,
        Command::WsBaseline { bind } => ws_baseline::serve(bind).await,
        Command::Wallet(args) => interruptible(wallet::run(args)).await,
        Command::Cluster(args) => interruptible(cluster::run(args)).await,
        Command::Nodes(args) => interruptible(nodes::run(args)).await,
        Command::Holdout(args) => interruptible(holdout::run(args)).await,
        Command::WalletStores(args) => interruptible(wallet_stores::run(args)).await,
        Command::GrowthGames(args) => interruptible(growth::games(args)).await,
        Command::GrowthSessions(args) => interruptible(growth::sessions(args)).await,
        Command::Arena(args) => interruptible(arena::run(args)).await,
        Command::ReceiptFlood(args) => interruptible(receipt_flood::run(args)).await,
        Command::Capacity(args) => interruptible(capacity::run(args)).await,
        Command::ClusterCheck(args) => interruptible(cluster_check::run(args)).await,
    }
}

/// Runs `work`; Ctrl-C stops it (dropping its child processes, which kills them).
async fn interruptible(work: impl std::future::Future<Output = Result<()>>) -> Result<()> {
    tokio::select! {
        result = work => result,
        _ = tokio::signal::ctrl_c() => bail!("interrupted"),
    }
}

/// Reads session ids from a file (one UUID per line) or makes N random ones.
fn load_sessions(spec: &str) -> Result<Vec<uuid::Uuid>> {
    if let Ok(n) = spec.parse::<usize>() {
        if n == 0 {
            bail!("--sessions must be at least 1");
        }
        return Ok((0..n).map(|_| uuid::Uuid::new_v4()).collect());
    }
    let text = std::fs::read_to_string(spec).with_context(|| format!("reading {spec}"))?;
    let ids = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .enumerate()
        .map(|(i, l)| {
            l.parse()
                .with_context(|| format!("{spec} line {}: not a UUID", i + 1))
        })
        .collect::<Result<Vec<_>>>()?;
    if ids.is_empty() {
        bail!("{spec} holds no session ids");
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("5h").is_err());
    }
}
