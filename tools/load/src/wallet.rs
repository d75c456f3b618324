//! `wallet`: wallet operations per second through the engine against the engine's own wallet
//! script called directly through redis-rs, both at the same concurrency, in one run.
//!
//! Servers are child processes: a private `redis-server` (no persistence, a free port; or
//! `--redis-url` for an existing one) and the engine using it as its store. The engine is
//! driven over WebSocket: `--concurrency` sessions (hello, ready), each sending one
//! `currency_earned` event (`{"type":"event","event":{...}}`, a fresh `tx_id`) and waiting for
//! its `balance` push before the next, so exactly `--concurrency` operations are in flight.
//! The baseline is the same atomic Lua script with the same KEYS and ARGV, through the
//! engine's own [`RedisStore::apply_money`] (one multiplexed redis-rs connection, as in the
//! engine), from as many tasks in this process, under another key prefix. Rounds alternate
//! engine and baseline; the table gives the median ops/s of each and the ratio
//! engine/baseline (target at least 0.8).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use futures::{SinkExt as _, StreamExt as _};
use offer_domain::environment::Environment;
use offer_domain::fsr::cohort_of;
use offer_engine::store::redis::RedisStore;
use offer_engine::store::{MoneyKind, MoneyOp, MoneyOutcome, Store as _};
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::Message;
use uuid::Uuid;

use crate::catalogue::CURRENCY_ID;
use crate::compare::{median, ratio};
use crate::parse_duration;
use crate::servers::ServerArgs;
use crate::target_line::{Bound, target_line};
use crate::ws_client::{self, Socket};

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

/// One engine session's loop: event, wait for `balance`, until `until`.
async fn engine_loop(mut ws: Socket, tag: String, until: Instant) -> Result<(Socket, Run)> {
    let mut run = Run::default();
    let mut k = 0u64;
    while Instant::now() < until {
        k += 1;
        let msg = format!(
            r#"{{"type":"event","event":{{"type":"currency_earned","currency_id":"{CURRENCY_ID}","amount":1,"tx_id":"{tag}-{k}"}}}}"#
        );
        ws.send(Message::text(msg))
            .await
            .context("sending an event")?;
        let answered = tokio::time::timeout(OP_TIMEOUT, async {
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
        .context("no balance within 5 s")??;
        if answered {
            run.ok += 1;
        } else {
            run.failed += 1;
        }
    }
    Ok((ws, run))
}

/// Drives the engine's sessions for `duration`; hands the sockets back.
pub(crate) async fn engine_run(
    sockets: &mut Vec<Socket>,
    label: &str,
    duration: Duration,
) -> Result<Run> {
    let start = Instant::now();
    let until = start + duration;
    let mut tasks = JoinSet::new();
    for (i, ws) in sockets.drain(..).enumerate() {
        let tag = format!("{label}-{i}-{}", Uuid::new_v4().simple());
        tasks.spawn(engine_loop(ws, tag, until));
    }
    let mut total = Run::default();
    while let Some(joined) = tasks.join_next().await {
        let (ws, run) = joined.context("an engine task panicked")??;
        sockets.push(ws);
        total.add(run);
    }
    total.elapsed = start.elapsed();
    Ok(total)
}

/// Drives the script directly for `duration` from `concurrency` tasks.
async fn direct_run(
    store: &Arc<RedisStore>,
    game_id: Uuid,
    concurrency: usize,
    label: &str,
    duration: Duration,
) -> Result<Run> {
    let start = Instant::now();
    let until = start + duration;
    let mut tasks = JoinSet::new();
    for i in 0..concurrency {
        let store = Arc::clone(store);
        let tag = format!("{label}-{i}-{}", Uuid::new_v4().simple());
        tasks.spawn(async move {
            let mut run = Run::default();
            let mut k = 0u64;
            let player_id = format!("p{i}");
            while Instant::now() < until {
                k += 1;
                // Built per operation, as the engine builds it per event.
                let op = MoneyOp {
                    game_id,
                    env: Environment::Production,
                    player_id: player_id.clone(),
                    tx_id: format!("{tag}-{k}"),
                    kind: MoneyKind::Earned,
                    currency_id: CURRENCY_ID.to_owned(),
                    amount: 1,
                    ts: chrono::Utc::now(),
                    holdout: false,
                    import: false,
                    // The engine's events carry the player's install cohort: so does this.
                    cohort: Some(cohort_of(chrono::Utc::now().date_naive())),
                };
                match store.apply_money(&op).await {
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
            run
        });
    }
    let mut total = Run::default();
    while let Some(joined) = tasks.join_next().await {
        total.add(joined.context("a direct task panicked")?);
    }
    total.elapsed = start.elapsed();
    Ok(total)
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
    let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    for round in 1..=args.plan.rounds {
        let label = format!("r{round}");
        let e = engine_run(&mut sockets, &label, args.plan.duration).await?;
        engine.check_alive()?;
        eprintln!(
            "round {round} engine   {:>9.0} ops/s ({} failed)",
            e.ops_per_s(),
            e.failed
        );
        runs[0].push(e);
        let d = direct_run(
            &store,
            game_id,
            args.plan.concurrency,
            &label,
            args.plan.duration,
        )
        .await?;
        eprintln!(
            "round {round} direct   {:>9.0} ops/s ({} failed)",
            d.ops_per_s(),
            d.failed
        );
        runs[1].push(d);
    }
    drop(sockets);
    drop(redis);

    let [engine_runs, direct_runs] = runs;
    let mut out = format!(
        "\nWallet operations (currency_earned, one atomic Lua script each) at {} in flight, \
         {} rounds of {:?} alternating; Redis {}\n",
        args.plan.concurrency, args.plan.rounds, args.plan.duration, redis_url
    );
    out.push_str(&runs_report(
        "path",
        [
            ("engine (WebSocket)", &engine_runs),
            ("direct (redis-rs)", &direct_runs),
        ],
        "engine/direct",
        0.8,
    ));
    print!("{out}");
    Ok(())
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
