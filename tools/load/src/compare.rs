//! The end-to-end comparison in one run: the engine and what it is compared with each in a
//! child process, the clients in this process.
//!
//! Steps: start both servers on free loopback ports (the engine with its default store, the
//! embedded SQLite file, in the logs folder, and a fresh 48-character JWT secret), wait until
//! they answer, set the engine up over REST as a studio would ([`crate::setup`]), warm each
//! up, then alternate measured runs engine, other, engine, other, ... so that drift of the
//! shared machine hits both alike. The other server is the trivial baseline (`--against
//! baseline`, the default) or a second engine whose store is SQLite in memory (`--against
//! memory`, set up the same way: the offer path must not touch the disk, so the ratio should
//! be 1). The table printed last gives each target's median rps over the rounds, p50 and p99
//! over all its rounds, its share of 200 and 204 answers, and the ratios, then each server's
//! CPU time per answered request (user and system, every thread, from `/proc/<pid>/stat`
//! around each round; median of the rounds): on a machine whose cores the load generator
//! shares with the servers, the throughput ratio moves with whatever else runs, while the
//! CPU a request costs each server moves much less.
//!
//! The children are killed when the comparison ends, fails or is interrupted (Ctrl-C).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};

use crate::child::{Server, free_port};
use crate::drive::{self, Plan, Stats, Target};
use crate::figures::{median, ratio};
use crate::rate_curve;
use crate::servers::secret;
use crate::settle::{TICK_US, cpu_ticks};
use crate::setup;
use crate::{LoadArgs, SetupArgs, parse_duration};

/// What the engine is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Against {
    /// The trivial axum server (`offer-load baseline`).
    Baseline,
    /// The engine with its store in memory (`store.path = ":memory:"`).
    Memory,
}

/// Flags of `compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// What the engine (on its default store, a SQLite file) is compared with.
    #[arg(long, value_enum, default_value = "baseline")]
    pub against: Against,
    /// The engine binary (built beforehand: `cargo build --release -p offer-engine`).
    #[arg(long, default_value = "target/release/offer-engine")]
    pub engine_bin: PathBuf,
    /// Load settings of every run.
    #[command(flatten)]
    pub load: LoadArgs,
    /// Unmeasured warm-up of each server before the rounds.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Measured rounds; each round is one engine run then one baseline run.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Engine setup.
    #[command(flatten)]
    pub setup: SetupArgs,
    /// Directory for the servers' output (default: a fresh directory under the temp dir).
    #[arg(long)]
    pub logs: Option<PathBuf>,
    /// Longest wait for a server to answer after its start.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub start_timeout: Duration,
    /// After the closed-loop rounds, drive both targets at these percentages of the other
    /// target's median rps at a constant rate (for example `--curve 25,50,75`), with
    /// `--rounds` rounds of `--duration` each per rate.
    #[arg(long, value_delimiter = ',')]
    pub curve: Vec<u32>,
}

/// Runs the comparison; Ctrl-C stops it (and kills the children) cleanly.
pub async fn run(args: CompareArgs) -> Result<()> {
    tokio::select! {
        result = compare(&args) => result,
        _ = tokio::signal::ctrl_c() => bail!("interrupted"),
    }
}

async fn compare(args: &CompareArgs) -> Result<()> {
    if args.rounds == 0 {
        bail!("--rounds must be at least 1");
    }
    if !args.engine_bin.is_file() {
        bail!(
            "no engine binary at {} (build it: cargo build --release -p offer-engine, \
             or pass --engine-bin)",
            args.engine_bin.display()
        );
    }
    let logs = match &args.logs {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("offer-load-{}", std::process::id())),
    };
    std::fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;

    let secret = secret();
    let (mut engine, engine_target) =
        start_engine_child("engine", args, &secret, &logs.join("engine.db"), &logs).await?;
    let other_name = match args.against {
        Against::Baseline => "baseline",
        Against::Memory => "memory",
    };
    let (mut baseline, baseline_target) = match args.against {
        Against::Baseline => {
            let baseline_addr = free_port()?;
            let me = std::env::current_exe().context("locating offer-load itself")?;
            let mut baseline_cmd = Command::new(me);
            baseline_cmd
                .arg("baseline")
                .arg("--bind")
                .arg(baseline_addr.to_string());
            let mut baseline = Server::spawn("baseline", baseline_cmd, &logs)?;
            let target = Target::local(baseline_addr);
            baseline
                .wait_ready(&format!("{target}/"), false, args.start_timeout)
                .await?;
            (baseline, target)
        }
        Against::Memory => {
            start_engine_child("memory", args, &secret, Path::new(":memory:"), &logs).await?
        }
    };
    eprintln!(
        "engine on {engine_target}, {other_name} on {baseline_target}; logs in {}",
        logs.display()
    );

    let prepared = set_up("engine", &engine, &engine_target, &secret, args).await?;
    let other_prepared = match args.against {
        // The baseline answers any session with the same key.
        Against::Baseline => prepared.clone(),
        Against::Memory => set_up("memory", &baseline, &baseline_target, &secret, args).await?,
    };

    let engine_plan = Arc::new(Plan::new(
        &engine_target,
        &prepared.api_key,
        &prepared.sessions,
    )?);
    let baseline_plan = Arc::new(Plan::new(
        &baseline_target,
        &other_prepared.api_key,
        &other_prepared.sessions,
    )?);
    let connections = args.load.connections;

    if !args.warmup.is_zero() {
        for (name, plan) in [("engine", &engine_plan), (other_name, &baseline_plan)] {
            let stats = drive::run(plan, connections, args.warmup).await?;
            eprintln!("warm-up {name:<8} {:>9.0} rps", stats.rps());
        }
    }

    let mut runs: [Vec<Stats>; 2] = [Vec::new(), Vec::new()];
    let mut cpu_us: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    for round in 1..=args.rounds {
        for (i, (name, plan, server)) in [
            ("engine", &engine_plan, &mut engine),
            (other_name, &baseline_plan, &mut baseline),
        ]
        .into_iter()
        .enumerate()
        {
            let ticks = cpu_ticks(server.pid())?;
            let stats = drive::run(plan, connections, args.load.duration).await?;
            let used = cpu_ticks(server.pid())?.saturating_sub(ticks);
            server.check_alive()?;
            cpu_us[i].push(used as f64 * TICK_US / stats.answered().max(1) as f64);
            eprintln!(
                "round {round} {name:<8} {:>9.0} rps  p50 {:.3} ms  p99 {:.3} ms  {}",
                stats.rps(),
                stats.quantile_ms(0.5),
                stats.quantile_ms(0.99),
                stats.status_line()
            );
            runs[i].push(stats);
        }
    }

    let [engine_runs, baseline_runs] = runs;
    let engine_summary = Summary::new("engine", &engine_runs)?;
    let baseline_summary = Summary::new(other_name, &baseline_runs)?;
    let mut report = table(args, &engine_summary, &baseline_summary, &logs);
    report.push_str(&cpu_line(other_name, &cpu_us));
    if !args.curve.is_empty() {
        let curve = rate_curve::Curve {
            names: ["engine", other_name],
            plans: [&engine_plan, &baseline_plan],
            servers: [&mut engine, &mut baseline],
            connections,
            duration: args.load.duration,
            rounds: args.rounds,
        };
        report.push_str(&rate_curve::run(curve, baseline_summary.median_rps(), &args.curve).await?);
    }
    print!("{report}");
    Ok(())
}

/// Starts an engine child as `name` with its embedded store at `store` (a file, or
/// `:memory:`), and waits until it answers.
async fn start_engine_child(
    name: &'static str,
    args: &CompareArgs,
    secret: &str,
    store: &Path,
    logs: &Path,
) -> Result<(Server, Target)> {
    let addr = free_port()?;
    let mut cmd = Command::new(&args.engine_bin);
    cmd.arg("serve")
        .envs(crate::servers::ENGINE_ENV)
        .env("OFFER__SERVER__BIND", addr.to_string())
        .env("OFFER__AUTH__JWT_SECRET", secret)
        .env("OFFER__STORE__REDIS_URL", "")
        .env("OFFER__STORE__PATH", store);
    let mut engine = Server::spawn(name, cmd, logs)?;
    let target = Target::local(addr);
    engine
        .wait_ready(&format!("{target}/healthz"), true, args.start_timeout)
        .await?;
    Ok((engine, target))
}

/// Sets the engine `name` up (game, catalogue, key, sessions) and says how long it took.
async fn set_up(
    name: &str,
    engine: &Server,
    target: &Target,
    secret: &str,
    args: &CompareArgs,
) -> Result<setup::Prepared> {
    let started = Instant::now();
    let prepared = setup::prepare(&target.to_string(), secret, &args.setup)
        .await
        .with_context(|| format!("setting the {name} up; {}", engine.log_tail()))?;
    eprintln!(
        "{name} set up in {:.1} s: game {}, {} items, {} sessions",
        started.elapsed().as_secs_f64(),
        prepared.game_id,
        args.setup.items,
        prepared.sessions.len()
    );
    Ok(prepared)
}

/// One target's rounds, summarised.
struct Summary {
    name: &'static str,
    rps: Vec<f64>,
    merged: Stats,
}

impl Summary {
    fn new(name: &'static str, runs: &[Stats]) -> Result<Self> {
        let mut merged = Stats::new()?;
        for run in runs {
            merged.merge(run)?;
        }
        Ok(Self {
            name,
            rps: runs.iter().map(Stats::rps).collect(),
            merged,
        })
    }

    fn median_rps(&self) -> f64 {
        median(&self.rps)
    }

    fn other(&self) -> u64 {
        self.merged.other.values().sum::<u64>() + self.merged.errors + self.merged.invalid
    }
}

/// Each server's CPU per answered request, median of its rounds, and their ratio.
fn cpu_line(other: &str, cpu_us: &[Vec<f64>; 2]) -> String {
    let rounds = |v: &[f64]| {
        v.iter()
            .map(|c| format!("{c:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (engine, baseline) = (median(&cpu_us[0]), median(&cpu_us[1]));
    format!(
        "CPU per request (user + system): engine {engine:.1} µs ({}), {other} {baseline:.1} µs \
         ({}); engine/{other} x{:.2}\n",
        rounds(&cpu_us[0]),
        rounds(&cpu_us[1]),
        ratio(engine, baseline)
    )
}

/// The final table.
fn table(args: &CompareArgs, engine: &Summary, baseline: &Summary, logs: &Path) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "\nPOST /v1/sdk/offers/next, {} connections, {} sessions, {} rounds of {:?} \
         (A B alternating, {:?} warm-up each); servers' logs in {}\n",
        args.load.connections,
        args.setup.sessions,
        args.rounds,
        args.load.duration,
        args.warmup,
        logs.display()
    ));
    out.push_str(&format!(
        "{:<9} {:>10} {:>9} {:>9} {:>7} {:>7} {:>8}  {}\n",
        "target", "rps(med)", "p50 ms", "p99 ms", "200", "204", "other", "rps per round"
    ));
    for s in [engine, baseline] {
        let rounds: Vec<String> = s.rps.iter().map(|r| format!("{r:.0}")).collect();
        out.push_str(&format!(
            "{:<9} {:>10.0} {:>9.3} {:>9.3} {:>6.1}% {:>6.1}% {:>8}  {}\n",
            s.name,
            s.median_rps(),
            s.merged.quantile_ms(0.5),
            s.merged.quantile_ms(0.99),
            s.merged.share(s.merged.ok),
            s.merged.share(s.merged.no_offer),
            s.other(),
            rounds.join(" ")
        ));
    }
    out.push_str(&format!(
        "engine/{}: rps {:.2}, p50 x{:.2}, p99 x{:.2}\n",
        baseline.name,
        ratio(engine.median_rps(), baseline.median_rps()),
        ratio(
            engine.merged.quantile_ms(0.5),
            baseline.merged.quantile_ms(0.5)
        ),
        ratio(
            engine.merged.quantile_ms(0.99),
            baseline.merged.quantile_ms(0.99)
        ),
    ));
    if !engine.merged.outcomes.is_empty() {
        let outcomes: Vec<String> = engine
            .merged
            .outcomes
            .iter()
            .map(|(k, v)| format!("{k} {:.1}%", engine.merged.share(*v)))
            .collect();
        out.push_str(&format!("engine 204 outcomes: {}\n", outcomes.join(", ")));
    }
    out
}
