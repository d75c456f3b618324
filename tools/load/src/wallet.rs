//! `wallet`: wallet operations per second through the engine against the engine's own wallet
//! script called directly through redis-rs, both at the same concurrency, in one run.
//!
//! Servers are child processes: a private `redis-server` (no persistence, a free port; or
//! `--redis-url` for an existing one) and the engine using it as its store. The engine is
//! driven over WebSocket: `--concurrency` sessions (hello, ready), each sending one
//! `currency_earned` event (`{"type":"event","event":{...}}`, a fresh `tx_id`) and waiting for
//! its `balance` push before the next, so exactly `--concurrency` operations are in flight.
//! The engine combines the events of its one game that arrive while a script call is out
//! into the next call. The baseline is the same atomic Lua script with the same KEYS and ARGV,
//! one call per operation, through the engine's own [`RedisStore::apply_money_alone`] (one
//! multiplexed redis-rs connection, as in the engine), from as many tasks in this process,
//! under another key prefix. Rounds alternate engine and baseline; the table gives the
//! median ops/s of each and the ratio engine/baseline (target at least [`WALLET_TARGET`]),
//! then the script calls each path made per operation (Redis's own count, `INFO
//! commandstats`).
//!
//! `--idle-sessions N` first opens N more sessions of other players over REST and leaves
//! them open through the rounds: a node serving many players, of whom only the measured
//! ones play. A wallet operation pushes the balance to its player's own sessions, so what
//! it costs should not depend on N.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use futures::{SinkExt as _, StreamExt as _};
use offer_domain::environment::Environment;
use offer_domain::fsr::cohort_of;
use offer_engine::store::redis::RedisStore;
use offer_engine::store::{MoneyKind, MoneyOp, MoneyOutcome};
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::Message;
use uuid::Uuid;

use crate::catalogue::CURRENCY_ID;
use crate::figures::{median, ratio};
use crate::parse_duration;
use crate::script_calls::{ScriptCalls, ScriptStats};
use crate::servers::ServerArgs;
use crate::target_line::{Bound, target_line};
use crate::ws_client::{self, Socket};

/// The engine path's goal: at least this share of the direct script's operations a second.
pub const WALLET_TARGET: f64 = 0.85;

/// Key prefix of the baseline's wallets (the engine uses `offer`).
const BASELINE_PREFIX: &str = "offer-load-direct";
/// Longest wait for one operation's answer.
const OP_TIMEOUT: Duration = Duration::from_secs(5);

/// The rounds of a comparison of two wallet paths.
#[derive(Debug, Args)]
pub struct RoundArgs {
    /// Operations in flight on each path (engine: WebSocket sessions; direct: tasks).
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Measured duration of each round.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Unmeasured warm-up of each before the rounds.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Measured rounds; each round is one run of the first path then one of the second.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
}

/// Flags of `wallet`.
#[derive(Debug, Args)]
pub struct WalletArgs {
    /// The rounds of the engine against the direct script.
    #[command(flatten)]
    pub plan: RoundArgs,
    /// Use this Redis instead of starting a private `redis-server`.
    #[arg(long)]
    pub redis_url: Option<String>,
    /// Sessions of other players opened over REST before the rounds and left idle.
    #[arg(long, default_value_t = 0)]
    pub idle_sessions: usize,
    /// The servers started for the measurement.
    #[command(flatten)]
    pub servers: ServerArgs,
}

/// One run's result.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Run {
    /// Operations answered with a balance.
    pub(crate) ok: u64,
    /// Operations answered with an error instead of a balance.
    pub(crate) failed: u64,
    elapsed: Duration,
}

impl Run {
    /// Answered operations per second.
    pub(crate) fn ops_per_s(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    fn add(&mut self, other: Run) {
        self.ok += other.ok;
        self.failed += other.failed;
    }
}

/// Runs `each(input, tag, until)` for every input, each in its own task, until `duration`
/// has passed (`tag` unique to the task, for its `tx_id`s); hands back what the tasks hand
/// back and the sum of their runs.
async fn drive<T, F, Fut>(
    inputs: Vec<T>,
    label: &str,
    duration: Duration,
    each: F,
) -> Result<(Vec<T>, Run)>
where
    T: Send + 'static,
    F: Fn(T, String, Instant) -> Fut,
    Fut: Future<Output = Result<(T, Run)>> + Send + 'static,
{
    let start = Instant::now();
    let until = start + duration;
    let mut tasks = JoinSet::new();
    for (i, input) in inputs.into_iter().enumerate() {
        let tag = format!("{label}-{i}-{}", Uuid::new_v4().simple());
        tasks.spawn(each(input, tag, until));
    }
    let mut back = Vec::new();
    let mut total = Run::default();
    while let Some(joined) = tasks.join_next().await {
        let (input, run) = joined.context("a load task panicked")??;
        back.push(input);
        total.add(run);
    }
    total.elapsed = start.elapsed();
    Ok((back, total))
}

/// One engine session's loop: event, wait for `balance`, until `until`.
async fn engine_loop(mut ws: Socket, tag: String, until: Instant) -> Result<(Socket, Run)> {
    let mut run = Run::default();
    let mut k = 0u64;
    while Instant::now() < until {
        k += 1;
        if wallet_op(&mut ws, &tag, k).await? {
            run.ok += 1;
        } else {
            run.failed += 1;
        }
    }
    Ok((ws, run))
}

/// One wallet operation on an engine session: the `currency_earned` event `<tag>-<k>`, then
/// its answer awaited: `true` for a `balance`, `false` for an `error` (printed).
pub(crate) async fn wallet_op(ws: &mut Socket, tag: &str, k: u64) -> Result<bool> {
    let msg = format!(
        r#"{{"type":"event","event":{{"type":"currency_earned","currency_id":"{CURRENCY_ID}","amount":1,"tx_id":"{tag}-{k}"}}}}"#
    );
    ws.send(Message::text(msg))
        .await
        .context("sending an event")?;
    tokio::time::timeout(OP_TIMEOUT, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(text))) => {
                    if text.contains("\"type\":\"balance\"") {
                        return Ok(true);
                    }
                    if text.contains("\"type\":\"error\"") {
                        eprintln!("engine error: {}", text.as_str());
                        return Ok(false);
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(anyhow::Error::new(e).context("reading")),
                None => bail!("the engine closed the socket"),
            }
        }
    })
    .await
    .context("no balance within 5 s")?
}

/// Drives the engine's sessions for `duration`; hands the sockets back.
pub(crate) async fn engine_run(
    sockets: &mut Vec<Socket>,
    label: &str,
    duration: Duration,
) -> Result<Run> {
    let (back, run) = drive(std::mem::take(sockets), label, duration, engine_loop).await?;
    *sockets = back;
    Ok(run)
}

/// A production money event of `player_id` in `game_id`, happening now, without holdout,
/// import or cohort; in the load game's currency unless it is a purchase.
pub(crate) fn money_op(
    game_id: Uuid,
    player_id: String,
    tx_id: String,
    kind: MoneyKind,
    amount: i64,
) -> MoneyOp {
    MoneyOp {
        game_id,
        env: Environment::Production,
        player_id,
        tx_id,
        kind,
        currency_id: if kind == MoneyKind::Purchase {
            String::new()
        } else {
            CURRENCY_ID.to_owned()
        },
        amount,
        ts: chrono::Utc::now(),
        holdout: false,
        import: false,
        cohort: None,
        proof: None,
        day_cap: None,
    }
}

/// Drives the script directly for `duration` from `concurrency` tasks, one script call per
/// operation ([`RedisStore::apply_money_alone`]).
async fn direct_run(
    store: &Arc<RedisStore>,
    game_id: Uuid,
    concurrency: usize,
    label: &str,
    duration: Duration,
) -> Result<Run> {
    let players: Vec<usize> = (0..concurrency).collect();
    let (_, run) = drive(players, label, duration, |i, tag, until| {
        let store = Arc::clone(store);
        async move {
            let mut run = Run::default();
            let mut k = 0u64;
            let player_id = format!("p{i}");
            while Instant::now() < until {
                k += 1;
                // Built per operation, as the engine builds it per event, with the player's
                // install cohort as the engine's events carry it.
                let op = MoneyOp {
                    cohort: Some(cohort_of(chrono::Utc::now().date_naive())),
                    ..money_op(
                        game_id,
                        player_id.clone(),
                        format!("{tag}-{k}"),
                        MoneyKind::Earned,
                        1,
                    )
                };
                match store.apply_money_alone(&op).await {
                    Ok(MoneyOutcome::Applied { .. }) => run.ok += 1,
                    Ok(other) => {
                        eprintln!("direct: unexpected outcome {other:?}");
                        run.failed += 1;
                    }
                    Err(e) => {
                        eprintln!("direct: {e}");
                        run.failed += 1;
                    }
                }
            }
            Ok((i, run))
        }
    })
    .await?;
    Ok(run)
}

/// Runs `wallet`.
pub async fn run(args: WalletArgs) -> Result<()> {
    if args.plan.concurrency == 0 || args.plan.rounds == 0 {
        bail!("--concurrency and --rounds must be at least 1");
    }
    let logs = args.servers.engine.logs_dir()?;
    let mut redis = None;
    let redis_url = match &args.redis_url {
        Some(url) => url.clone(),
        None => {
            let (server, url) = args.servers.redis(&[], &logs).await?;
            redis = Some(server);
            url
        }
    };
    let (mut engine, engine_addr, _secret, prepared) = args
        .servers
        .engine
        .start(
            "engine",
            &[("OFFER__STORE__REDIS_URL", redis_url.clone())],
            &logs,
        )
        .await?;
    eprintln!(
        "engine on {engine_addr} (pid {}) with Redis {redis_url}; logs in {}",
        engine.pid(),
        logs.display()
    );
    if args.idle_sessions > 0 {
        let client = reqwest::Client::new();
        crate::setup::open_sessions(
            &client,
            &format!("http://{engine_addr}"),
            &prepared.api_key,
            args.idle_sessions,
            "idle-",
        )
        .await
        .with_context(|| format!("opening the idle sessions; {}", engine.log_tail()))?;
        eprintln!("{} idle sessions of other players open", args.idle_sessions);
    }
    let url = format!("ws://{engine_addr}/v1/sdk/ws");
    let mut sockets = ws_client::open_many(&url, &prepared.api_key, args.plan.concurrency, 64)
        .await
        .with_context(|| format!("opening the engine's sessions; {}", engine.log_tail()))?;
    let store = Arc::new(
        RedisStore::connect(&redis_url, BASELINE_PREFIX, Duration::from_secs(1))
            .await
            .context("connecting the direct redis-rs baseline")?,
    );
    let game_id = prepared.game_id;

    if !args.plan.warmup.is_zero() {
        let e = engine_run(&mut sockets, "warm", args.plan.warmup).await?;
        let d = direct_run(
            &store,
            game_id,
            args.plan.concurrency,
            "warm",
            args.plan.warmup,
        )
        .await?;
        eprintln!(
            "warm-up  engine {:>9.0} ops/s  direct {:>9.0} ops/s",
            e.ops_per_s(),
            d.ops_per_s()
        );
    }
    let mut counter = ScriptCalls::connect(&redis_url).await?;
    let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    let mut scripts = [ScriptStats::default(); 2];
    let mut engine_cpu = 0.0;
    // This process's own CPU on each path: the WebSocket clients, or the redis-rs calls.
    let mut own_cpu = [0.0; 2];
    let me = std::process::id();
    for round in 1..=args.plan.rounds {
        let label = format!("r{round}");
        let before = counter.total().await?;
        let cpu_before = cpu_seconds(engine.pid())?;
        let own_before = cpu_seconds(me)?;
        let e = engine_run(&mut sockets, &label, args.plan.duration).await?;
        engine_cpu += cpu_seconds(engine.pid())? - cpu_before;
        let own_between = cpu_seconds(me)?;
        own_cpu[0] += own_between - own_before;
        let between = counter.total().await?;
        engine.check_alive()?;
        let d = direct_run(
            &store,
            game_id,
            args.plan.concurrency,
            &label,
            args.plan.duration,
        )
        .await?;
        own_cpu[1] += cpu_seconds(me)? - own_between;
        let after = counter.total().await?;
        for (slot, (name, run, made)) in [
            ("engine", e, between - before),
            ("direct", d, after - between),
        ]
        .into_iter()
        .enumerate()
        {
            eprintln!(
                "round {round} {name}   {:>9.0} ops/s ({} failed, {} script calls)",
                run.ops_per_s(),
                run.failed,
                made.calls
            );
            runs[slot].push(run);
            scripts[slot].calls += made.calls;
            scripts[slot].usec += made.usec;
            scripts[slot].cpu_usec += made.cpu_usec;
        }
    }
    drop(sockets);
    drop(redis);

    let [engine_runs, direct_runs] = runs;
    let mut out = format!(
        "\nWallet operations (currency_earned, one atomic Lua script call each on the direct \
         path) at {} in flight, {} idle sessions of other players, {} rounds of {:?} \
         alternating; Redis {}\n",
        args.plan.concurrency, args.idle_sessions, args.plan.rounds, args.plan.duration, redis_url
    );
    out.push_str(&runs_report(
        "path",
        [
            ("engine (WebSocket)", &engine_runs),
            ("direct (redis-rs)", &direct_runs),
        ],
        "engine/direct",
        WALLET_TARGET,
    ));
    let ops = |runs: &[Run]| runs.iter().map(|r| r.ok + r.failed).sum::<u64>().max(1) as f64;
    let per_op = |runs: &[Run], made: ScriptStats| {
        format!(
            "{:.3} calls, {:.2} µs in the script and {:.2} µs of Redis CPU per operation ({} calls)",
            made.calls as f64 / ops(runs),
            made.usec as f64 / ops(runs),
            made.cpu_usec as f64 / ops(runs),
            made.calls
        )
    };
    out.push_str(&format!(
        "script: engine {}; direct {}\nengine process CPU per operation: {:.1} µs\n",
        per_op(&engine_runs, scripts[0]),
        per_op(&direct_runs, scripts[1]),
        engine_cpu * 1e6 / ops(&engine_runs)
    ));
    let redis_cpu = scripts.map(|s| s.cpu_usec as f64 / 1e6);
    out.push_str(&cpu_budget(
        "engine",
        &engine_runs,
        &[
            ("load tool", own_cpu[0]),
            ("engine", engine_cpu),
            ("Redis", redis_cpu[0]),
        ],
    ));
    out.push_str(&cpu_budget(
        "direct",
        &direct_runs,
        &[("load tool", own_cpu[1]), ("Redis", redis_cpu[1])],
    ));
    print!("{out}");
    Ok(())
}

/// Where each path's CPU went, per operation, and the cores it kept busy: `parts` names each
/// process's CPU seconds over the path's rounds (on the engine path this process's clients,
/// the engine and Redis; on the direct path this process's redis-rs calls and Redis). When
/// every process shares one machine, the direct path is bound by Redis's one thread and the
/// engine path by the machine's cores, which this shows run by run.
fn cpu_budget(name: &str, runs: &[Run], parts: &[(&str, f64)]) -> String {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let ops = runs.iter().map(|r| r.ok + r.failed).sum::<u64>().max(1) as f64;
    let secs = runs
        .iter()
        .map(|r| r.elapsed.as_secs_f64())
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    let each: Vec<String> = parts
        .iter()
        .map(|(part, cpu)| format!("{part} {:.1}", cpu * 1e6 / ops))
        .collect();
    let total: f64 = parts.iter().map(|(_, cpu)| cpu).sum();
    format!(
        "CPU per operation, {name} path: {} = {:.1} µs; {:.2} of {cores} cores busy\n",
        each.join(" + "),
        total * 1e6 / ops,
        total / secs,
    )
}

/// CPU time (user and system, every thread) a process has used, in seconds (clock ticks of
/// 1/100 s, Linux's `USER_HZ`).
fn cpu_seconds(pid: u32) -> Result<f64> {
    Ok(crate::settle::cpu_ticks(pid)? as f64 / 100.0)
}

/// The table of two paths' rounds (median operations per second, failures, each round's
/// rate) under the heading `column`, then the ratio of the first median to the second,
/// called `name`, against its target `at_least`.
pub(crate) fn runs_report(
    column: &str,
    rows: [(&str, &[Run]); 2],
    name: &str,
    at_least: f64,
) -> String {
    let mut out = format!(
        "{:<22} {:>11} {:>8}  {}\n",
        column, "ops/s(med)", "failed", "ops/s per round"
    );
    let mut medians = [0.0; 2];
    for (slot, (name, runs)) in medians.iter_mut().zip(rows) {
        let rates: Vec<f64> = runs.iter().map(Run::ops_per_s).collect();
        let per: Vec<String> = rates.iter().map(|r| format!("{r:.0}")).collect();
        *slot = median(&rates);
        out.push_str(&format!(
            "{:<22} {:>11.0} {:>8}  {}\n",
            name,
            *slot,
            runs.iter().map(|r| r.failed).sum::<u64>(),
            per.join(" ")
        ));
    }
    let r = ratio(medians[0], medians[1]);
    out.push_str(&target_line(
        name,
        &format!("{r:.2}"),
        r,
        Bound::AtLeast(at_least),
    ));
    out
}
