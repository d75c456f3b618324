//! `ws-idle` and `ws-broadcast`: the engine's WebSocket gateway under 10,000 sessions.
//!
//! - `ws-idle` starts the engine (embedded store) and, for reference, the bare
//!   [`ws-baseline`](crate::ws_baseline), each as a child process; it opens N sessions to one
//!   (hello, ready), lets them sit idle, and reports the server's RSS growth per session
//!   (`VmRSS` of `/proc/<pid>/status` before the sockets and after), then does the same for
//!   the other. The engine's target is 7 KiB per session.
//! - `ws-broadcast` alternates rounds on the engine and the baseline; each round opens N
//!   sessions to one of them, broadcasts once to warm up, then once measured: engine (`PUT /v1/games/{id}/kill-switch`, levels 2 and 0 in turn) and baseline
//!   (a text frame `go` on a control socket), timing each from the request being sent until
//!   the last of the N clients has the `kill_switch` message; then it closes the sessions. The target is an
//!   engine/baseline ratio of the medians of at most [`BROADCAST_TARGET`]. Before
//!   each broadcast the tool waits until the target's process has gone quiet (its CPU time
//!   stops growing, [`crate::settle`]), then pauses: both targets alike, so neither is timed
//!   while still working through the sessions' opening. `--callgrind` counts one broadcast's
//!   instructions on each ([`crate::callgrind`]).
//!
//! The clients live in this process ([`crate::ws_client`]); `RLIMIT_NOFILE` is raised first
//! ([`crate::fdlimit`]) and inherited by the children.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use futures::SinkExt as _;
use tokio_tungstenite::tungstenite::Message;

use crate::child::{Server, free_port, wait_tcp};
use crate::figures::{median, ratio};
use crate::servers::EngineArgs;
use crate::target_line::{Bound, target_line};
use crate::ws_client::{self, Fleet};
use crate::{parse_duration, setup};

/// The broadcast's goal: the engine's time to reach every socket at most this multiple of
/// the bare server's.
pub const BROADCAST_TARGET: f64 = 1.1;

/// The marker of the broadcast message.
pub(crate) const KILL_MARKER: &str = "\"type\":\"kill_switch\"";
/// Longest wait for one broadcast to reach every client.
pub(crate) const ROUND_TIMEOUT: Duration = Duration::from_secs(60);

/// Flags shared by the WebSocket measurements.
#[derive(Debug, Clone, Args)]
pub struct WsCommon {
    /// Concurrent WebSocket sessions per server.
    #[arg(long, default_value_t = 10_000)]
    pub sessions: usize,
    /// Handshakes (connect, hello, ready) in flight while opening the sessions.
    #[arg(long, default_value_t = 64)]
    pub connect_concurrency: usize,
    /// The engine, the output folder and the start timeout.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Flags of `ws-idle`.
#[derive(Debug, Args)]
pub struct IdleArgs {
    /// Shared settings.
    #[command(flatten)]
    pub common: WsCommon,
    /// How long the sessions sit idle before the second RSS reading.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub idle: Duration,
    /// The engine's target in KiB per session.
    #[arg(long, default_value_t = 7.0)]
    pub target_kib: f64,
}

/// Flags of `ws-broadcast`.
#[derive(Debug, Args)]
pub struct BroadcastArgs {
    /// Shared settings.
    #[command(flatten)]
    pub common: WsCommon,
    /// Measured rounds; each round is one engine broadcast then one baseline broadcast.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Pause between broadcasts, so each starts from a quiet machine. Before it, the tool
    /// waits (at most `--settle-limit`) until the target's process has gone quiet after the
    /// sessions' opening or the broadcast before, the same way for both targets.
    #[arg(long, default_value = "500ms", value_parser = parse_duration)]
    pub pause: Duration,
    /// Longest wait for a target's process to go quiet before each broadcast.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub settle_limit: Duration,
    /// Runs both servers under `valgrind --tool=callgrind`, zeroes their counters just before
    /// each measured broadcast and dumps them once every client has it (files
    /// `<logs>/<name>.callgrind.<pid>.<n>`). Use fewer sessions and a longer
    /// `--start-timeout`: the servers run tens of times slower.
    #[arg(long)]
    pub callgrind: bool,
    /// With `--callgrind`: simulates the caches too, so each dump also counts the data
    /// accesses that miss the first level and the last (simulated as one core's 2 MiB L2):
    /// the memory traffic per socket, which an instruction count does not show.
    #[arg(long, requires = "callgrind")]
    pub cache_sim: bool,
}

/// The engine and the baseline started, the engine set up with a game and an SDK key.
pub(crate) struct Servers {
    /// The engine child.
    pub engine: Server,
    /// Its address.
    pub engine_addr: SocketAddr,
    /// Its JWT secret.
    pub secret: String,
    /// The game and SDK key.
    pub prepared: setup::Prepared,
    /// The baseline child.
    pub baseline: Server,
    /// Its address.
    pub baseline_addr: SocketAddr,
    /// Where the logs go.
    pub logs: PathBuf,
}

/// Starts both servers, under callgrind when `callgrind` is `Some` (with the cache
/// simulation when it holds `true`).
pub(crate) async fn start(common: &WsCommon, callgrind: Option<bool>) -> Result<Servers> {
    let logs = common.engine.logs_dir()?;
    let mut engine_args = common.engine.clone();
    if let Some(cache_sim) = callgrind {
        engine_args.engine_bin =
            crate::callgrind::engine_wrapper(&engine_args.engine_bin, &logs, cache_sim)?;
    }
    let (engine, engine_addr, secret, prepared) = engine_args.start("engine", &[], &logs).await?;
    let baseline_addr = free_port()?;
    let me = std::env::current_exe().context("locating offer-load itself")?;
    let mut cmd = if let Some(cache_sim) = callgrind {
        let mut cmd = Command::new("valgrind");
        cmd.args(crate::callgrind::valgrind_args(
            "baseline", &logs, cache_sim,
        ))
        .arg(me);
        cmd
    } else {
        Command::new(me)
    };
    cmd.arg("ws-baseline")
        .arg("--bind")
        .arg(baseline_addr.to_string());
    let mut baseline = Server::spawn("ws-baseline", cmd, &logs)?;
    wait_tcp(&mut baseline, baseline_addr, common.engine.start_timeout).await?;
    eprintln!(
        "engine on {engine_addr} (pid {}), ws-baseline on {baseline_addr} (pid {}); logs in {}",
        engine.pid(),
        baseline.pid(),
        logs.display()
    );
    Ok(Servers {
        engine,
        engine_addr,
        secret,
        prepared,
        baseline,
        baseline_addr,
        logs,
    })
}

/// `VmRSS` of a process in KiB.
pub(crate) fn rss_kib(pid: u32) -> Result<u64> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .with_context(|| format!("no VmRSS in {path}"))
}

/// One server's idle-memory reading.
struct IdleReading {
    name: &'static str,
    before_kib: u64,
    after_kib: u64,
    sessions: usize,
    open_after: usize,
    connect: Duration,
}

impl IdleReading {
    fn per_session_kib(&self) -> f64 {
        (self.after_kib as f64 - self.before_kib as f64) / self.sessions as f64
    }
}

/// Opens the sessions to one server, waits, and reads its RSS around it.
async fn idle_on(
    name: &'static str,
    server: &mut Server,
    url: &str,
    key: &str,
    args: &IdleArgs,
) -> Result<IdleReading> {
    let n = args.common.sessions;
    // Let the start and the setup settle.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before_kib = rss_kib(server.pid())?;
    let started = Instant::now();
    let fleet = Fleet::connect(url, key, n, args.common.connect_concurrency, KILL_MARKER)
        .await
        .with_context(|| format!("opening {n} sessions to the {name}; {}", server.log_tail()))?;
    let connect = started.elapsed();
    tokio::time::sleep(args.idle).await;
    let after_kib = rss_kib(server.pid())?;
    server.check_alive()?;
    let open_after = fleet.alive();
    eprintln!(
        "{name}: {n} sessions opened in {:.1} s; RSS {before_kib} -> {after_kib} KiB, \
         {open_after} still open after {:?}",
        connect.as_secs_f64(),
        args.idle
    );
    fleet.close().await;
    Ok(IdleReading {
        name,
        before_kib,
        after_kib,
        sessions: n,
        open_after,
        connect,
    })
}

/// Runs `ws-idle`.
pub async fn idle(args: IdleArgs) -> Result<()> {
    let n = args.common.sessions;
    if n == 0 {
        bail!("--sessions must be at least 1");
    }
    crate::fdlimit::ensure(n as u64 + 1024)?;
    let mut servers = start(&args.common, None).await?;
    let key = servers.prepared.api_key.clone();
    let engine_url = format!("ws://{}/v1/sdk/ws", servers.engine_addr);
    let baseline_url = format!("ws://{}/", servers.baseline_addr);
    let engine = idle_on("engine", &mut servers.engine, &engine_url, &key, &args).await?;
    let baseline = idle_on(
        "baseline",
        &mut servers.baseline,
        &baseline_url,
        &key,
        &args,
    )
    .await?;

    let mut out = format!(
        "\nWebSocket idle memory: {n} sessions (hello, ready, {:?} idle), RSS of the server \
         process before and after; logs in {}\n",
        args.idle,
        servers.logs.display()
    );
    out.push_str(&format!(
        "{:<9} {:>12} {:>12} {:>12} {:>10} {:>10}\n",
        "server", "RSS before", "RSS after", "KiB/session", "open", "connect s"
    ));
    for r in [&engine, &baseline] {
        out.push_str(&format!(
            "{:<9} {:>9} KiB {:>8} KiB {:>12.2} {:>10} {:>10.1}\n",
            r.name,
            r.before_kib,
            r.after_kib,
            r.per_session_kib(),
            r.open_after,
            r.connect.as_secs_f64()
        ));
    }
    let per = engine.per_session_kib();
    out.push_str(&format!(
        "engine: {per:.2} KiB/session against a target of {:.0} KiB: {:.2} of the target ({}); \
         engine/baseline x{:.2}\n",
        args.target_kib,
        ratio(per, args.target_kib),
        if per <= args.target_kib {
            "met"
        } else {
            "MISSED"
        },
        ratio(per, baseline.per_session_kib())
    ));
    print!("{out}");
    Ok(())
}

/// The trigger of one target's broadcast.
pub(crate) enum Trigger {
    /// `PUT /v1/games/{id}/kill-switch` with an admin token, the level flipping 2/0.
    Engine {
        http: reqwest::Client,
        url: String,
        token: String,
        level: u8,
    },
    /// A text frame `go` on a control socket.
    Baseline(Box<ws_client::Socket>),
}

impl Trigger {
    /// The engine's trigger: the kill switch of `game_id` on the engine at `addr`, with an
    /// admin token signed with `secret`; its first level is 2.
    pub(crate) fn engine(addr: SocketAddr, game_id: uuid::Uuid, secret: &str) -> Result<Self> {
        Ok(Self::Engine {
            http: reqwest::Client::builder()
                .build()
                .context("building the HTTP client")?,
            url: format!("http://{addr}/v1/games/{game_id}/kill-switch"),
            token: setup::admin_token(secret, "load-studio")?,
            level: 0,
        })
    }

    /// Sends the trigger and returns the instant just before it was sent.
    pub(crate) async fn fire(&mut self) -> Result<Instant> {
        match self {
            Self::Engine {
                http,
                url,
                token,
                level,
            } => {
                *level = if *level == 2 { 0 } else { 2 };
                let request = http
                    .put(url.as_str())
                    .bearer_auth(token.as_str())
                    .json(&serde_json::json!({"level": *level, "reason": "load test"}));
                let start = Instant::now();
                let response = request.send().await.context("PUT kill-switch")?;
                let status = response.status();
                if !status.is_success() {
                    let body = response.text().await.unwrap_or_default();
                    bail!("PUT kill-switch answered {status}: {body}");
                }
                Ok(start)
            }
            Self::Baseline(control) => {
                let start = Instant::now();
                control
                    .send(Message::text(crate::ws_baseline::GO))
                    .await
                    .context("sending go to the baseline")?;
                Ok(start)
            }
        }
    }
}

/// One round on one target: opens the sessions, broadcasts once unmeasured and once
/// measured, closes the sessions. Returns the measured time in ms and the sessions open at
/// the end.
async fn broadcast_round(
    url: &str,
    key: &str,
    args: &BroadcastArgs,
    trigger: &mut Trigger,
    pid: u32,
) -> Result<(f64, usize)> {
    let n = args.common.sessions;
    let mut fleet =
        Fleet::connect(url, key, n, args.common.connect_concurrency, KILL_MARKER).await?;
    crate::settle::settle(pid, args.settle_limit).await?;
    tokio::time::sleep(args.pause).await;
    let start = trigger.fire().await?;
    fleet.until_all(start, ROUND_TIMEOUT).await?;
    crate::settle::settle(pid, args.settle_limit).await?;
    tokio::time::sleep(args.pause).await;
    fleet.drain();
    if args.callgrind {
        crate::callgrind::control("-z", pid)?;
    }
    let start = trigger.fire().await?;
    let took = fleet.until_all(start, ROUND_TIMEOUT).await?;
    if args.callgrind {
        // The trigger's answer may still be on its way out: let the server finish it.
        crate::settle::settle(pid, args.settle_limit).await?;
        crate::callgrind::control("-d", pid)?;
    }
    let open = fleet.alive();
    fleet.close().await;
    Ok((took.as_secs_f64() * 1e3, open))
}

/// Runs `ws-broadcast`.
///
/// One process may not hold 2 x 10,000 sockets here (the hard `RLIMIT_NOFILE` is 20,000 in
/// these containers), so each round opens the N sessions to one target, broadcasts once to
/// warm up and once measured, and closes them; rounds alternate engine and baseline.
pub async fn broadcast(args: BroadcastArgs) -> Result<()> {
    let n = args.common.sessions;
    if n == 0 || args.rounds == 0 {
        bail!("--sessions and --rounds must be at least 1");
    }
    crate::fdlimit::ensure(n as u64 + 1024)?;
    let mut servers = start(&args.common, args.callgrind.then_some(args.cache_sim)).await?;
    let key = servers.prepared.api_key.clone();
    let game_id = servers.prepared.game_id;
    let engine_url = format!("ws://{}/v1/sdk/ws", servers.engine_addr);
    let baseline_url = format!("ws://{}/", servers.baseline_addr);

    let mut engine_trigger = Trigger::engine(servers.engine_addr, game_id, &servers.secret)?;
    let (control, _) = tokio_tungstenite::connect_async(baseline_url.as_str())
        .await
        .context("opening the baseline's control socket")?;
    let mut baseline_trigger = Trigger::Baseline(Box::new(control));

    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut open = [usize::MAX; 2];
    for round in 1..=args.rounds {
        for (i, (name, url, trigger, pid)) in [
            (
                "engine",
                &engine_url,
                &mut engine_trigger,
                servers.engine.pid(),
            ),
            (
                "baseline",
                &baseline_url,
                &mut baseline_trigger,
                servers.baseline.pid(),
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let started = Instant::now();
            let (ms, alive) = broadcast_round(url, &key, &args, trigger, pid)
                .await
                .with_context(|| format!("round {round}, {name}"))?;
            eprintln!(
                "round {round} {name:<8} {ms:>8.1} ms  ({alive}/{n} open; round took {:.1} s)",
                started.elapsed().as_secs_f64()
            );
            times[i].push(ms);
            open[i] = open[i].min(alive);
        }
        servers.engine.check_alive()?;
        servers.baseline.check_alive()?;
    }
    let alive = (open[0], open[1]);
    let sizes = (n, n);

    let [engine, baseline] = times;
    let mut out = format!(
        "\nKill-switch broadcast to {n} WebSocket sessions: time from the trigger being sent \
         until the last client has the message; {} rounds, engine and baseline alternating; \
         logs in {}\n",
        args.rounds,
        servers.logs.display()
    );
    out.push_str(&format!(
        "{:<9} {:>10} {:>9} {:>9} {:>11}  {}\n",
        "target", "median ms", "min ms", "max ms", "open", "ms per round"
    ));
    for (name, t, (open, size)) in [
        ("engine", &engine, (alive.0, sizes.0)),
        ("baseline", &baseline, (alive.1, sizes.1)),
    ] {
        let rounds: Vec<String> = t.iter().map(|ms| format!("{ms:.1}")).collect();
        out.push_str(&format!(
            "{:<9} {:>10.1} {:>9.1} {:>9.1} {:>11}  {}\n",
            name,
            median(t),
            t.iter().copied().fold(f64::INFINITY, f64::min),
            t.iter().copied().fold(0.0, f64::max),
            format!("{open}/{size}"),
            rounds.join(" ")
        ));
    }
    let r = ratio(median(&engine), median(&baseline));
    out.push_str(&target_line(
        "engine/baseline",
        &format!("x{r:.2}"),
        r,
        Bound::AtMost(BROADCAST_TARGET),
    ));
    print!("{out}");
    Ok(())
}
