//! `capacity`: what one engine node holds, measured at the session counts a process of these
//! machines can reach (one process may hold at most 20,000 open files, so 19,000 sessions is
//! the top size), and how the figures grow between the smallest size and the largest, the
//! slope a capacity model extrapolates from.
//!
//! Every round starts a fresh release engine (embedded store, set up as the other
//! subcommands set it up) and a fresh bare tokio-tungstenite server
//! ([`crate::ws_baseline`]), each as a child process, so each round's memory is read on a
//! process that never held sessions before. A round then:
//!
//! 1. on the engine: opens REST sessions for the offer driver and warms the offer path up,
//!    waits until the engine is quiet, reads its `VmRSS`, opens the N WebSocket sessions
//!    (connect, `hello`, `ready`) and times it, waits until the engine is quiet again, reads
//!    its CPU time over an idle window and its `VmRSS`; broadcasts the kill switch once to
//!    warm up and once measured (`PUT /v1/games/{id}/kill-switch`, as `ws-broadcast`), each
//!    session's arrival timed from the request being sent; then drives
//!    `POST /v1/sdk/offers/next` at a constant share of the engine's maximum rate while the
//!    sessions are held, and closes them;
//! 2. the same on the bare server (no offers: it has no offer path).
//!
//! Before the rounds a fresh engine with no WebSocket session gives the offer path's maximum
//! rate (closed loop, the median of a few runs, as `compare` does) and its latency at the
//! constant rate with no session held. After them, a last engine configured with
//! `server.max_connections = N` receives N + 100 connection attempts: the table says how
//! many it held, how many it refused and with which answer, and whether every held session
//! still has the kill switch.
//!
//! CPU time is read from `/proc/<pid>/stat` (clock ticks of 10 ms), so the per-operation CPU
//! figures are rough at small counts; they are the inputs of `docs/capacity.md`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use futures::StreamExt as _;

use crate::child::Server;
use crate::drive::{self, Pace, Plan, Stats, Target};
use crate::figures::median;
use crate::parse_duration;
use crate::servers::EngineArgs;
use crate::settle::{TICK_US, cpu_ticks, settle};
use crate::setup;
use crate::ws_client::{self, Fleet, Socket};
use crate::ws_load::{KILL_MARKER, ROUND_TIMEOUT, Trigger, WsCommon, rss_kib};

/// Connection attempts past `server.max_connections` in the refusal check.
const PAST_LIMIT: usize = 100;
/// Untimed offer-path warm-up on each fresh engine.
const WARMUP: Duration = Duration::from_secs(1);
/// Files this process needs beside the sessions (offer connections, triggers, the runtime).
const SPARE_FILES: u64 = 256;

/// Flags of `capacity`.
#[derive(Debug, Args)]
pub struct CapacityArgs {
    /// WebSocket sessions held at once, ascending; the first and last give the growth.
    #[arg(long, value_delimiter = ',', default_value = "5000,10000,19000")]
    pub sizes: Vec<usize>,
    /// Rounds per size; each round is one fresh engine, then one fresh bare server.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Handshakes (connect, hello, ready) in flight while opening the sessions.
    #[arg(long, default_value_t = 64)]
    pub connect_concurrency: usize,
    /// Keep-alive connections of the offer driver.
    #[arg(long, default_value_t = 64)]
    pub connections: usize,
    /// REST sessions the offer driver goes round-robin over.
    #[arg(long, default_value_t = 2000)]
    pub rest_sessions: usize,
    /// Length of every offer run.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Closed-loop offer runs whose median is the maximum rate.
    #[arg(long, default_value_t = 3)]
    pub max_runs: usize,
    /// The constant offer rate while sessions are held, in percent of the maximum rate.
    #[arg(long, default_value_t = 50)]
    pub percent: u32,
    /// Idle window over which the engine's CPU time with the sessions held is read.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub hold: Duration,
    /// Pause before each broadcast, after the target has gone quiet.
    #[arg(long, default_value = "500ms", value_parser = parse_duration)]
    pub pause: Duration,
    /// Longest wait for a target's process to go quiet.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub settle_limit: Duration,
    /// `server.max_connections` of the refusal check (0 skips it).
    #[arg(long, default_value_t = 1000)]
    pub refusal_limit: usize,
    /// The engine, the output folder and the start timeout.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The offer path's figures of one constant-rate run.
struct Offers {
    p50_ms: f64,
    p99_ms: f64,
    rps: f64,
    /// Engine CPU per answered offer, whatever else it did meanwhile.
    cpu_us: f64,
}

/// One target's round at one size.
struct Round {
    open: Duration,
    rss_before_kib: u64,
    rss_after_kib: u64,
    /// Arrival times of the measured broadcast, ascending.
    arrivals: Vec<Duration>,
    /// Sessions still open after the broadcast.
    alive: usize,
    /// Server CPU per session opened.
    open_cpu_us: f64,
    /// Server CPU per second over the idle window, all sessions held.
    held_cpu_ms_per_s: f64,
    /// The engine's offer path meanwhile (none on the bare server).
    offers: Option<Offers>,
}

impl Round {
    fn kib_per_session(&self, n: usize) -> f64 {
        (self.rss_after_kib as f64 - self.rss_before_kib as f64) / n as f64
    }

    fn arrival_ms(&self, q: f64) -> f64 {
        let i = ((self.arrivals.len() as f64 * q).ceil() as usize).clamp(1, self.arrivals.len());
        self.arrivals[i - 1].as_secs_f64() * 1e3
    }
}

/// The offer path before any session: its maximum rate and its figures at the constant rate.
struct Unloaded {
    max_rps: Vec<f64>,
    closed_cpu_us: f64,
    paced: Offers,
}

/// Runs `capacity`.
pub async fn run(args: CapacityArgs) -> Result<()> {
    let Some(&top) = args.sizes.last() else {
        bail!("--sizes needs at least one size");
    };
    if args.sizes.contains(&0) || args.sizes.windows(2).any(|w| w[0] >= w[1]) {
        bail!("--sizes must be positive and ascending");
    }
    if args.rounds == 0 || args.max_runs == 0 || args.connections == 0 {
        bail!("--rounds, --max-runs and --connections must be at least 1");
    }
    if !(1..=100).contains(&args.percent) {
        bail!("--percent must be between 1 and 100");
    }
    let need =
        top.max(args.refusal_limit + PAST_LIMIT) as u64 + args.connections as u64 + SPARE_FILES;
    crate::fdlimit::ensure(need)?;
    let logs = args.engine.logs_dir()?;

    let unloaded = unloaded(&args, &logs).await?;
    let rate = median(&unloaded.max_rps) * f64::from(args.percent) / 100.0;
    eprintln!(
        "offer path: maximum {:.0} rps (runs {:?}); at {rate:.0} rps with no session: p99 {:.3} ms",
        median(&unloaded.max_rps),
        unloaded
            .max_rps
            .iter()
            .map(|r| r.round())
            .collect::<Vec<_>>(),
        unloaded.paced.p99_ms
    );

    let mut rows: Vec<(usize, [Vec<Round>; 2])> = Vec::new();
    for &n in &args.sizes {
        let mut rounds: [Vec<Round>; 2] = [Vec::new(), Vec::new()];
        for round in 1..=args.rounds {
            let [engine, bare] = size_round(&args, &logs, n, round, rate)
                .await
                .with_context(|| format!("{n} sessions, round {round}"))?;
            rounds[0].push(engine);
            rounds[1].push(bare);
        }
        rows.push((n, rounds));
    }

    let refusal = if args.refusal_limit > 0 {
        Some(refusal(&args, &logs).await.context("the refusal check")?)
    } else {
        None
    };

    let mut out = format!(
        "\nCapacity of one engine node: N WebSocket sessions held (hello, ready), a fresh \
         engine (embedded store) and a fresh bare tokio-tungstenite server per round, {} rounds \
         alternating, medians; the kill switch timed from the request to each session's \
         arrival; offers at {}% of the engine's maximum {:.0} rps ({} connections, {:?}) \
         while the sessions are held; logs in {}\n",
        args.rounds,
        args.percent,
        median(&unloaded.max_rps),
        args.connections,
        args.duration,
        logs.display()
    );
    out.push_str(&table(&unloaded, &rows));
    out.push_str(&growth(&rows));
    out.push_str(&cpu_lines(&unloaded, &rows));
    if let Some(refusal) = refusal {
        out.push_str(&refusal);
    }
    print!("{out}");
    Ok(())
}

/// A fresh engine with no WebSocket session: the offer path's maximum rate (closed loop) and
/// its figures at the constant rate.
async fn unloaded(args: &CapacityArgs, logs: &Path) -> Result<Unloaded> {
    let (mut engine, addr, _secret, prepared) = args.engine.start("rest", &[], logs).await?;
    let plan = rest_plan(addr, &prepared.api_key, args.rest_sessions).await?;
    drive::run(&plan, args.connections, WARMUP).await?;
    let mut max_rps = Vec::new();
    let mut cpu = Vec::new();
    for run in 1..=args.max_runs {
        let ticks = cpu_ticks(engine.pid())?;
        let stats = drive::run(&plan, args.connections, args.duration).await?;
        engine.check_alive()?;
        cpu.push(cpu_us_per(engine.pid(), ticks, stats.answered())?);
        eprintln!(
            "maximum rate, run {run}: {:.0} rps, p99 {:.3} ms, {}",
            stats.rps(),
            stats.quantile_ms(0.99),
            stats.status_line()
        );
        max_rps.push(stats.rps());
    }
    let rate = median(&max_rps) * f64::from(args.percent) / 100.0;
    let paced = paced_offers(&plan, &mut engine, args, rate).await?;
    Ok(Unloaded {
        max_rps,
        closed_cpu_us: median(&cpu),
        paced,
    })
}

/// `n` REST sessions opened on the engine at `addr` (players `r0`, `r1`, ...) and the offer
/// driver's plan over them.
async fn rest_plan(addr: SocketAddr, key: &str, n: usize) -> Result<Arc<Plan>> {
    let client = reqwest::Client::new();
    let sessions =
        setup::open_sessions(&client, &format!("http://{addr}"), key, n.max(1), "r").await?;
    Ok(Arc::new(Plan::new(&Target::local(addr), key, &sessions)?))
}

/// Engine CPU per operation in µs since `ticks`, over `ops` operations.
fn cpu_us_per(pid: u32, ticks: u64, ops: u64) -> Result<f64> {
    let used = cpu_ticks(pid)?.saturating_sub(ticks);
    Ok(used as f64 * TICK_US / ops.max(1) as f64)
}

/// Drives the offer path at `rate` for `--duration` after a warm-up; its figures.
async fn paced_offers(
    plan: &Arc<Plan>,
    engine: &mut Server,
    args: &CapacityArgs,
    rate: f64,
) -> Result<Offers> {
    let pace = Pace { rps: rate };
    drive::run_paced(plan, args.connections, WARMUP, pace).await?;
    let ticks = cpu_ticks(engine.pid())?;
    let stats: Stats = drive::run_paced(plan, args.connections, args.duration, pace).await?;
    engine.check_alive()?;
    if stats.errors > 0 || stats.ok == 0 {
        bail!(
            "the offer path failed at {rate:.0} rps: {}; {}",
            stats.status_line(),
            engine.log_tail()
        );
    }
    Ok(Offers {
        p50_ms: stats.quantile_ms(0.5),
        p99_ms: stats.quantile_ms(0.99),
        rps: stats.rps(),
        cpu_us: cpu_us_per(engine.pid(), ticks, stats.answered())?,
    })
}

/// One round at `n` sessions: a fresh engine and a fresh bare server, measured in turn.
async fn size_round(
    args: &CapacityArgs,
    logs: &Path,
    n: usize,
    round: usize,
    rate: f64,
) -> Result<[Round; 2]> {
    let mut engine_args = args.engine.clone();
    // A fresh store per round: the engine's SQLite file is named after it.
    engine_args.logs = Some(logs.join(format!("{n}-{round}")));
    let common = WsCommon {
        sessions: n,
        connect_concurrency: args.connect_concurrency,
        engine: engine_args,
    };
    let mut servers = crate::ws_load::start(&common, None).await?;
    let plan = rest_plan(
        servers.engine_addr,
        &servers.prepared.api_key,
        args.rest_sessions,
    )
    .await?;
    drive::run_paced(&plan, args.connections, WARMUP, Pace { rps: rate }).await?;

    let key = servers.prepared.api_key.clone();
    let mut trigger = Trigger::engine(
        servers.engine_addr,
        servers.prepared.game_id,
        &servers.secret,
    )?;
    let url = format!("ws://{}/v1/sdk/ws", servers.engine_addr);
    let (fleet, mut engine) = hold(&mut servers.engine, &url, &key, n, args, &mut trigger).await?;
    engine.offers = Some(paced_offers(&plan, &mut servers.engine, args, rate).await?);
    engine.alive = fleet.alive();
    fleet.close().await;
    eprintln!(
        "{n} round {round} engine: opened in {:.1} s, {:.2} KiB/session, last arrival {:.1} ms, \
         offers p99 {:.3} ms",
        engine.open.as_secs_f64(),
        engine.kib_per_session(n),
        engine.arrival_ms(1.0),
        engine.offers.as_ref().map_or(f64::NAN, |o| o.p99_ms)
    );

    let bare_url = format!("ws://{}/", servers.baseline_addr);
    let (control, _) = tokio_tungstenite::connect_async(bare_url.as_str())
        .await
        .context("opening the bare server's control socket")?;
    let mut trigger = Trigger::Baseline(Box::new(control));
    let (fleet, bare) = hold(
        &mut servers.baseline,
        &bare_url,
        &key,
        n,
        args,
        &mut trigger,
    )
    .await?;
    fleet.close().await;
    eprintln!(
        "{n} round {round} bare:   opened in {:.1} s, {:.2} KiB/session, last arrival {:.1} ms",
        bare.open.as_secs_f64(),
        bare.kib_per_session(n),
        bare.arrival_ms(1.0)
    );
    Ok([engine, bare])
}

/// Opens `n` sessions to `server` at `url` and times a broadcast to them (warm-up, then
/// measured); returns them still open, with the round's figures.
async fn hold(
    server: &mut Server,
    url: &str,
    key: &str,
    n: usize,
    args: &CapacityArgs,
    trigger: &mut Trigger,
) -> Result<(Fleet, Round)> {
    let pid = server.pid();
    settle(pid, args.settle_limit).await?;
    let rss_before_kib = rss_kib(pid)?;
    let ticks = cpu_ticks(pid)?;
    let started = Instant::now();
    let mut fleet = Fleet::connect(url, key, n, args.connect_concurrency, KILL_MARKER)
        .await
        .with_context(|| format!("opening {n} sessions; {}", server.log_tail()))?;
    let open = started.elapsed();
    let open_cpu_us = cpu_us_per(pid, ticks, n as u64)?;
    settle(pid, args.settle_limit).await?;
    let ticks = cpu_ticks(pid)?;
    tokio::time::sleep(args.hold).await;
    let held_cpu_ms_per_s =
        cpu_ticks(pid)?.saturating_sub(ticks) as f64 * TICK_US / 1e3 / args.hold.as_secs_f64();
    let rss_after_kib = rss_kib(pid)?;

    let start = trigger.fire().await?;
    fleet.until_all(start, ROUND_TIMEOUT).await?;
    settle(pid, args.settle_limit).await?;
    tokio::time::sleep(args.pause).await;
    fleet.drain();
    let start = trigger.fire().await?;
    let arrivals = fleet.arrivals_until_all(start, ROUND_TIMEOUT).await?;
    settle(pid, args.settle_limit).await?;
    server.check_alive()?;
    let alive = fleet.alive();
    Ok((
        fleet,
        Round {
            open,
            rss_before_kib,
            rss_after_kib,
            arrivals,
            alive,
            open_cpu_us,
            held_cpu_ms_per_s,
            offers: None,
        },
    ))
}

/// The median over `rounds` of `f`.
fn med(rounds: &[Round], f: impl Fn(&Round) -> f64) -> f64 {
    median(&rounds.iter().map(f).collect::<Vec<_>>())
}

/// The main table: one row per size and target, the offer path's row without sessions first.
fn table(unloaded: &Unloaded, rows: &[(usize, [Vec<Round>; 2])]) -> String {
    let mut out = format!(
        "{:>8} {:<7} {:>8} {:>8} {:>7} {:>9} {:>9} {:>9} {:>11} {:>9} {:>9} {:>9}\n",
        "sessions",
        "target",
        "RSS MiB",
        "KiB/sess",
        "open s",
        "kill p50",
        "kill p99",
        "kill last",
        "open",
        "offer rps",
        "offer p50",
        "offer p99"
    );
    out.push_str(&format!(
        "{:>8} {:<7} {:>8} {:>8} {:>7} {:>9} {:>9} {:>9} {:>11} {:>9.0} {:>9.3} {:>9.3}\n",
        0,
        "engine",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
        unloaded.paced.rps,
        unloaded.paced.p50_ms,
        unloaded.paced.p99_ms
    ));
    for (n, [engine, bare]) in rows {
        for (name, rounds) in [("engine", engine), ("bare", bare)] {
            let offer =
                |f: fn(&Offers) -> f64| med(rounds, |r| r.offers.as_ref().map_or(f64::NAN, f));
            let (rps, p50, p99) = if name == "engine" {
                (
                    format!("{:.0}", offer(|o| o.rps)),
                    format!("{:.3}", offer(|o| o.p50_ms)),
                    format!("{:.3}", offer(|o| o.p99_ms)),
                )
            } else {
                ("-".into(), "-".into(), "-".into())
            };
            let alive = rounds.iter().map(|r| r.alive).min().unwrap_or(0);
            out.push_str(&format!(
                "{:>8} {:<7} {:>8.1} {:>8.2} {:>7.1} {:>9.1} {:>9.1} {:>9.1} {:>11} {:>9} {:>9} \
                 {:>9}\n",
                n,
                name,
                med(rounds, |r| r.rss_after_kib as f64 / 1024.0),
                med(rounds, |r| r.kib_per_session(*n)),
                med(rounds, |r| r.open.as_secs_f64()),
                med(rounds, |r| r.arrival_ms(0.5)),
                med(rounds, |r| r.arrival_ms(0.99)),
                med(rounds, |r| r.arrival_ms(1.0)),
                format!("{alive}/{n}"),
                rps,
                p50,
                p99
            ));
        }
    }
    out.push_str(
        "(RSS after the sessions opened; KiB/sess = RSS growth / N; kill = kill switch, ms \
         from the request; open = sessions still open after it, fewest over the rounds)\n",
    );
    out
}

/// The growth from the smallest size to the largest, per session added.
fn growth(rows: &[(usize, [Vec<Round>; 2])]) -> String {
    let (Some((small, first)), Some((large, last))) = (rows.first(), rows.last()) else {
        return String::new();
    };
    if small == large {
        return String::new();
    }
    let added = (large - small) as f64;
    let mut out = format!("growth {small} -> {large} sessions, per session added:");
    for (i, name) in ["engine", "bare"].into_iter().enumerate() {
        let slope = |f: &dyn Fn(&Round) -> f64| (med(&last[i], f) - med(&first[i], f)) / added;
        out.push_str(&format!(
            " {name} memory {:.2} KiB, kill last arrival {:.2} µs, kill p50 {:.2} µs, open {:.1} \
             µs;",
            slope(&|r| r.rss_after_kib as f64),
            slope(&|r| r.arrival_ms(1.0) * 1e3),
            slope(&|r| r.arrival_ms(0.5) * 1e3),
            slope(&|r| r.open.as_secs_f64() * 1e6),
        ));
    }
    out.pop();
    out.push('\n');
    out
}

/// The engine's CPU per operation, the inputs of a capacity model.
fn cpu_lines(unloaded: &Unloaded, rows: &[(usize, [Vec<Round>; 2])]) -> String {
    let mut out = format!(
        "engine CPU per offer: {:.0} µs at the maximum rate, {:.0} µs at the constant rate \
         with no session",
        unloaded.closed_cpu_us, unloaded.paced.cpu_us
    );
    for (n, [engine, _]) in rows {
        out.push_str(&format!(
            ", {:.0} µs with {n} held",
            med(engine, |r| r.offers.as_ref().map_or(f64::NAN, |o| o.cpu_us))
        ));
    }
    out.push('\n');
    for (n, [engine, bare]) in rows {
        out.push_str(&format!(
            "{n} sessions: CPU per session opened engine {:.0} µs, bare {:.0} µs; CPU while \
             held idle engine {:.1} ms/s, bare {:.1} ms/s\n",
            med(engine, |r| r.open_cpu_us),
            med(bare, |r| r.open_cpu_us),
            med(engine, |r| r.held_cpu_ms_per_s),
            med(bare, |r| r.held_cpu_ms_per_s),
        ));
    }
    out
}

/// The refusal check: an engine with `server.max_connections = N` and N + 100 connection
/// attempts; how many it held, how it refused the others, and the kill switch to those held.
async fn refusal(args: &CapacityArgs, logs: &Path) -> Result<String> {
    let limit = args.refusal_limit;
    let env = [("OFFER__SERVER__MAX_CONNECTIONS", limit.to_string())];
    let (mut engine, addr, secret, prepared) = args.engine.start("limited", &env, logs).await?;
    // The setup's keep-alive connections are gone once the engine has noticed their end.
    settle(engine.pid(), args.settle_limit).await?;
    let url = format!("ws://{addr}/v1/sdk/ws");
    let key = prepared.api_key.as_str();
    let attempts = limit + PAST_LIMIT;
    let results: Vec<Result<Socket>> = futures::stream::iter(0..attempts)
        .map(|i| {
            let url = url.as_str();
            async move { ws_client::open(url, key, uuid::Uuid::new_v4(), &format!("p{i}")).await }
        })
        .buffer_unordered(args.connect_concurrency.max(1))
        .collect()
        .await;
    let mut held = Vec::new();
    let mut refused: BTreeMap<String, usize> = BTreeMap::new();
    for result in results {
        match result {
            Ok(socket) => held.push(socket),
            Err(e) => *refused.entry(answer_of(&e)).or_default() += 1,
        }
    }
    engine.check_alive()?;
    let held_n = held.len();
    let mut fleet = Fleet::reading(held, KILL_MARKER);
    let mut trigger = Trigger::engine(addr, prepared.game_id, &secret)?;
    let start = trigger.fire().await?;
    let delivered = fleet.arrivals_until_all(start, ROUND_TIMEOUT).await;
    let alive = fleet.alive();
    fleet.close().await;
    engine.check_alive()?;
    let answers: Vec<String> = refused.iter().map(|(a, n)| format!("{n} {a}")).collect();
    let kill = match delivered {
        Ok(times) => format!(
            "the kill switch reached all {held_n} held sessions, the last in {:.1} ms ({alive} \
             still open)",
            times.last().copied().unwrap_or_default().as_secs_f64() * 1e3
        ),
        Err(e) => format!("the kill switch did NOT reach every held session: {e:#}"),
    };
    Ok(format!(
        "refusal check, server.max_connections = {limit}: {attempts} WebSocket attempts, {held_n} \
         held, {} refused ({}); {kill}\n",
        attempts - held_n,
        if answers.is_empty() {
            "none".to_owned()
        } else {
            answers.join(", ")
        }
    ))
}

/// How a refused attempt was answered: the HTTP status and error code of the engine's
/// answer, or what ended it without one.
fn answer_of(e: &anyhow::Error) -> String {
    use tokio_tungstenite::tungstenite::Error;
    match e.downcast_ref::<Error>() {
        Some(Error::Http(response)) => {
            let code = response
                .body()
                .as_deref()
                .and_then(|body| serde_json::from_slice::<serde_json::Value>(body).ok())
                .and_then(|v| v["error"]["code"].as_str().map(str::to_owned))
                .unwrap_or_else(|| "no error code".to_owned());
            format!("{} {code}", response.status().as_u16())
        }
        Some(other) => format!("closed without an answer ({other})"),
        None => format!("{:#}", e.root_cause()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrival_quantiles_are_ranks_of_the_sorted_times() {
        let round = Round {
            open: Duration::ZERO,
            rss_before_kib: 100,
            rss_after_kib: 300,
            arrivals: (1..=100).map(Duration::from_millis).collect(),
            alive: 100,
            open_cpu_us: 0.0,
            held_cpu_ms_per_s: 0.0,
            offers: None,
        };
        assert_eq!(round.arrival_ms(0.5), 50.0);
        assert_eq!(round.arrival_ms(0.99), 99.0);
        assert_eq!(round.arrival_ms(1.0), 100.0);
        assert_eq!(round.kib_per_session(100), 2.0);
    }
}
