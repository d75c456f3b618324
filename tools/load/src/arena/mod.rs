//! `offer-load arena`: a simulated game played against a running engine through its public
//! SDK surfaces, measuring how much of the achievable revenue its AI level earns.
//!
//! For each scenario and seed a fresh engine is started as a child process on its embedded
//! store, a game is set up over REST as a studio would ([`studio`]), and a population of
//! players plays it ([`play`]): each offer the engine serves is bought with the probability
//! the scenario's ground truth gives ([`scenario`]). Every offer is scored by its expected
//! revenue (true probability x price) against the oracle's (the best arm for that very
//! player and moment), the best single offer for everyone and uniform random ([`score`]).
//! The report gives, per scenario, the engine's share of the oracle over the scored window
//! for every seed with its mean and minimum, the benchmarks' shares, and per scenario a CSV
//! and an SVG chart of the running shares over windows of 500 offers ([`chart`]).
//!
//! With `--in-process` the same scenarios, timelines and scoring are played against the
//! contextual learner alone, in this process, with its tunables as flags ([`in_process`]).

mod chart;
mod engine;
mod in_process;
mod play;
mod scenario;
mod score;
mod studio;
#[cfg(test)]
mod tests;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;
use offer_domain::learner::LearnerSettings;

use crate::parse_duration;
use chart::Series;
use engine::Engine;
use play::Played;
use scenario::{Scenario, Timeline};
use score::Shares;

/// Offers per window of the running shares.
const WINDOW: usize = 500;
/// Points of the running shares per run.
const POINTS: usize = 160;

/// Flags of `arena`.
#[derive(Debug, Args)]
pub struct ArenaArgs {
    /// A scenario (category, price, both, shift, noise, shadow) or `all`.
    #[arg(long, default_value = "all", value_parser = parse_scenarios)]
    pub scenario: ScenarioList,
    /// Seeds: a range `1-5`, a list `1,4,9` or one seed.
    #[arg(long, default_value = "1-5", value_parser = parse_seeds)]
    pub seeds: SeedList,
    /// Offers to scored players per run (the shadow scenario plays half of them in Shadow
    /// mode and an eighth after the promotion).
    #[arg(long, default_value_t = 16_000)]
    pub offers: usize,
    /// Players in the population (one session each).
    #[arg(long, default_value_t = 5_000)]
    pub players: usize,
    /// The engine binary (default: `offer-engine` next to this tool, the release build).
    #[arg(long, conflicts_with = "in_process")]
    pub engine_bin: Option<PathBuf>,
    /// Plays against the contextual learner in this process instead of an engine (no
    /// holdout; the shadow scenario is skipped).
    #[arg(long)]
    pub in_process: bool,
    /// In process: the learner's half-life in shown offers (default: the learner's).
    #[arg(long, requires = "in_process")]
    pub half_life: Option<f64>,
    /// In process: the prior precision of each weight (default: the learner's).
    #[arg(long, requires = "in_process")]
    pub prior_precision: Option<f64>,
    /// In process: the scale of the Thompson draws' spread (default: the learner's).
    #[arg(long, requires = "in_process")]
    pub exploration: Option<f64>,
    /// A name for this run in the file names and the summary, e.g. `main-b45ed5f`
    /// (default: `engine`, or `in-process` with `--in-process`).
    #[arg(long)]
    pub label: Option<String>,
    /// Where the CSVs, charts, summary and engine logs go.
    #[arg(long, default_value = "arena")]
    pub out: PathBuf,
    /// Longest wait for the engine to answer after its start.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub start_timeout: Duration,
}

/// The scenarios of `--scenario`.
#[derive(Debug, Clone)]
pub struct ScenarioList(Vec<Scenario>);

/// The seeds of `--seeds`.
#[derive(Debug, Clone)]
pub struct SeedList(Vec<u64>);

/// Parses `--scenario`.
fn parse_scenarios(s: &str) -> Result<ScenarioList, String> {
    if s == "all" {
        return Ok(ScenarioList(Scenario::ALL.to_vec()));
    }
    s.split(',')
        .map(|name| {
            Scenario::from_name(name.trim()).ok_or_else(|| {
                format!(
                    "unknown scenario `{name}` (category, price, both, shift, noise, shadow or all)"
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(ScenarioList)
}

/// Parses `--seeds`.
fn parse_seeds(s: &str) -> Result<SeedList, String> {
    let number = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("bad seed `{t}` (try 1-5, 1,4,9 or 7)"))
    };
    let seeds: Vec<u64> = if let Some((a, b)) = s.split_once('-') {
        (number(a)?..=number(b)?).collect()
    } else {
        s.split(',').map(number).collect::<Result<_, _>>()?
    };
    if seeds.is_empty() {
        return Err(format!("no seeds in `{s}`"));
    }
    Ok(SeedList(seeds))
}

/// What the arena plays against.
enum Opponent {
    /// A fresh engine per run, started from this binary.
    Engine(PathBuf),
    /// A fresh learner per run, in this process, with these settings.
    InProcess(LearnerSettings),
}

impl Opponent {
    /// The opponent `args` ask for.
    fn of(args: &ArenaArgs) -> Result<Self> {
        if args.in_process {
            let mut settings = LearnerSettings::default();
            if let Some(h) = args.half_life {
                settings.half_life_offers = h;
            }
            if let Some(q) = args.prior_precision {
                settings.prior_precision = q;
            }
            if let Some(x) = args.exploration {
                settings.exploration = x;
            }
            return Ok(Self::InProcess(settings));
        }
        Ok(Self::Engine(match &args.engine_bin {
            Some(bin) => bin.clone(),
            None => std::env::current_exe()
                .context("locating offer-load itself")?
                .with_file_name("offer-engine"),
        }))
    }

    /// Whether `scenario` can be played against this opponent.
    fn plays(&self, scenario: Scenario) -> bool {
        matches!(self, Self::Engine(_)) || scenario != Scenario::Shadow
    }

    /// The opponent's kind in the summary's columns.
    fn kind(&self) -> &'static str {
        match self {
            Self::Engine(_) => "engine",
            Self::InProcess(_) => "learner",
        }
    }

    /// Who is scored.
    fn scored(&self) -> &'static str {
        match self {
            Self::Engine(_) => "holdout players play but are not scored",
            Self::InProcess(_) => "no holdout: every offer is scored",
        }
    }

    /// The opponent in the summary's header.
    fn describe(&self) -> String {
        match self {
            Self::Engine(bin) => format!("engine {}", bin.display()),
            Self::InProcess(s) => format!(
                "learner in process (half-life {} offers, prior precision {}, exploration {})",
                s.half_life_offers, s.prior_precision, s.exploration
            ),
        }
    }
}

/// The label of the run: `--label`, else the opponent's kind.
fn label(args: &ArenaArgs) -> &str {
    match &args.label {
        Some(label) => label,
        None if args.in_process => "in-process",
        None => "engine",
    }
}

/// Why the shadow scenario is not played in process.
const NO_SHADOW: &str = "skipped in process: needs the engine's Shadow mode and fallback levels";

/// One seed's result in one scenario.
struct SeedResult {
    seed: u64,
    shares: Shares,
    /// The shadow scenario's comparison: `both` over as many offers from the start.
    without_shadow: Option<Shares>,
    played: Played,
    seeded: bool,
}

/// Runs the arena: every scenario, every seed, then the summary.
pub async fn run(args: ArenaArgs) -> Result<()> {
    if args.offers < 16 {
        bail!("--offers must be at least 16");
    }
    let opponent = Opponent::of(&args)?;
    let label = label(&args);
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut summary = header(&args, label, &opponent);
    let mut rows = String::from("scenario,seed,engine,best_single,uniform,without_shadow\n");
    for scenario in &args.scenario.0 {
        if !opponent.plays(*scenario) {
            eprintln!("{:<8} {NO_SHADOW}", scenario.name());
            let _ = writeln!(summary, "{:<9} {NO_SHADOW}", scenario.name());
            continue;
        }
        let timeline = Timeline::of(*scenario, args.offers);
        let mut results = Vec::new();
        let mut series = Vec::new();
        for seed in &args.seeds.0 {
            let (result, points) = run_seed(&args, &opponent, *scenario, timeline, *seed).await?;
            eprintln!("{}", seed_line(*scenario, opponent.kind(), &result));
            let _ = writeln!(
                rows,
                "{},{},{:.4},{:.4},{:.4},{}",
                scenario.name(),
                result.seed,
                result.shares.engine,
                result.shares.single,
                result.shares.uniform,
                result
                    .without_shadow
                    .map_or(String::new(), |s| format!("{:.4}", s.engine))
            );
            series.push(points);
            results.push(result);
        }
        let stem = args.out.join(format!("{label}-{}", scenario.name()));
        write(&stem.with_extension("csv"), &chart::csv(&series))?;
        let title = format!(
            "{label}: {} ({} offers, seeds {})",
            scenario.name(),
            timeline.offers,
            seed_text(&args.seeds.0)
        );
        write(
            &stem.with_extension("svg"),
            &chart::svg(&title, &series, &timeline),
        )?;
        summary.push_str(&scenario_rows(*scenario, &timeline, &results));
    }
    write(&args.out.join(format!("{label}-summary.csv")), &rows)?;
    write(&args.out.join(format!("{label}-summary.txt")), &summary)?;
    print!("{summary}");
    Ok(())
}

/// Plays one scenario and seed on a fresh opponent (and, for the shadow scenario, the
/// comparison on another): the result and the running shares.
async fn run_seed(
    args: &ArenaArgs,
    opponent: &Opponent,
    scenario: Scenario,
    timeline: Timeline,
    seed: u64,
) -> Result<(SeedResult, Series)> {
    let (played, seeded) = play_fresh(args, opponent, scenario, timeline, seed).await?;
    let (from, to) = timeline.scored;
    let window = &played.scores[from..to.min(played.scores.len())];
    let single = score::best_single_arm(window);
    let shares = score::shares(window, single);
    let step = (timeline.offers / POINTS).max(1);
    let points = score::running(&played.scores, WINDOW, step, single);
    let without_shadow = if scenario == Scenario::Shadow {
        let plain = timeline.without_shadow();
        let (other, _) = play_fresh(args, opponent, Scenario::Both, plain, seed).await?;
        let single = score::best_single_arm(&other.scores);
        Some(score::shares(&other.scores, single))
    } else {
        None
    };
    Ok((
        SeedResult {
            seed,
            shares,
            without_shadow,
            played,
            seeded,
        },
        Series { seed, points },
    ))
}

/// Plays on a fresh opponent: what was played and whether its sampler was seeded.
async fn play_fresh(
    args: &ArenaArgs,
    opponent: &Opponent,
    scenario: Scenario,
    timeline: Timeline,
    seed: u64,
) -> Result<(Played, bool)> {
    match opponent {
        Opponent::Engine(bin) => play_on_fresh_engine(args, bin, scenario, timeline, seed).await,
        Opponent::InProcess(settings) => {
            let (settings, players) = (settings.clone(), args.players);
            let played = tokio::task::spawn_blocking(move || {
                in_process::play(&settings, scenario, timeline, players, seed)
            })
            .await
            .context("the in-process run stopped")?;
            Ok((played, true))
        }
    }
}

/// Starts an engine, plays, stops it: what was played and whether the sampler was seeded.
async fn play_on_fresh_engine(
    args: &ArenaArgs,
    bin: &PathBuf,
    scenario: Scenario,
    timeline: Timeline,
    seed: u64,
) -> Result<(Played, bool)> {
    let folder = args.out.join("logs").join(format!(
        "{}-{}-{}-seed{seed}",
        label(args),
        scenario.name(),
        timeline.offers
    ));
    let engine = Engine::start(bin, &folder, seed, args.start_timeout).await?;
    let played = play::play(
        &engine.base(),
        &engine.secret,
        scenario,
        timeline,
        args.players,
        seed,
    )
    .await
    .with_context(|| {
        format!(
            "playing {} seed {seed}; {}",
            scenario.name(),
            engine.log_tail()
        )
    })?;
    let seeded = engine.seeded;
    engine.stop();
    Ok((played, seeded))
}

/// Writes `text` to `path`.
fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// `1-5` for a run of consecutive seeds, else the list.
fn seed_text(seeds: &[u64]) -> String {
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if seeds.len() > 1 && b - a + 1 == seeds.len() as u64 => {
            format!("{a}-{b}")
        }
        _ => seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// The progress line of one seed.
fn seed_line(scenario: Scenario, kind: &str, r: &SeedResult) -> String {
    let offers = r.played.scores.len() + r.played.holdout_requests;
    let mut line = format!(
        "{:<8} seed {:<3} {kind} {:.3}  single {:.3}  uniform {:.3}  ({} requests in {:.1} s, \
         {} purchases, {} holdout requests; served by L1-L4 {:?}, none {}{}{})",
        scenario.name(),
        r.seed,
        r.shares.engine,
        r.shares.single,
        r.shares.uniform,
        offers,
        r.played.elapsed.as_secs_f64(),
        r.played.purchases,
        r.played.holdout_requests,
        &r.played.levels[1..],
        r.played.levels[0],
        if r.played.holdout_offers > 0 {
            format!(", {} OFFERS TO HOLDOUT PLAYERS", r.played.holdout_offers)
        } else {
            String::new()
        },
        if r.seeded { "" } else { ", sampler unseeded" },
    );
    if let Some((restarts, since)) = r.played.restarts.filter(|(n, _)| *n > 0) {
        let _ = write!(
            line,
            "; the learner started again {restarts} time(s), last at its offer {since}"
        );
    }
    if let Some(w) = r.without_shadow {
        let _ = write!(line, "; without the Shadow phase engine {:.3}", w.engine);
    }
    line
}

/// The summary's header.
fn header(args: &ArenaArgs, label: &str, opponent: &Opponent) -> String {
    format!(
        "\narena `{label}`: {}; {} offers per run, {} players, seeds {}\n\
         shares of the oracle's expected revenue over each scenario's scored window \
         ({})\n\
         {:<9} {:>13}  {:>6} {:>6}  {:<34} {:>6} {:>7}\n",
        opponent.describe(),
        args.offers,
        args.players,
        seed_text(&args.seeds.0),
        opponent.scored(),
        "scenario",
        "scored",
        "mean",
        "min",
        format!("{} per seed", opponent.kind()),
        "single",
        "uniform"
    )
}

/// Mean and minimum of `values`.
fn mean_min(values: &[f64]) -> (f64, f64) {
    let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    (mean, min)
}

/// The summary rows of one scenario.
fn scenario_rows(scenario: Scenario, timeline: &Timeline, results: &[SeedResult]) -> String {
    let engine: Vec<f64> = results.iter().map(|r| r.shares.engine).collect();
    let (mean, min) = mean_min(&engine);
    let single = mean_min(&results.iter().map(|r| r.shares.single).collect::<Vec<_>>()).0;
    let uniform = mean_min(&results.iter().map(|r| r.shares.uniform).collect::<Vec<_>>()).0;
    let per_seed: Vec<String> = engine.iter().map(|e| format!("{e:.3}")).collect();
    let mut out = format!(
        "{:<9} {:>13}  {mean:>6.3} {min:>6.3}  {:<34} {single:>6.3} {uniform:>7.3}\n",
        scenario.name(),
        format!("{}..{}", timeline.scored.0, timeline.scored.1),
        per_seed.join(" "),
    );
    let without: Vec<f64> = results
        .iter()
        .filter_map(|r| r.without_shadow.map(|s| s.engine))
        .collect();
    if !without.is_empty() {
        let (mean, min) = mean_min(&without);
        let per_seed: Vec<String> = without.iter().map(|e| format!("{e:.3}")).collect();
        let _ = writeln!(
            out,
            "{:<9} {:>13}  {mean:>6.3} {min:>6.3}  {:<34} (both from the start, no Shadow phase)",
            "",
            format!("0..{}", timeline.scored.1 - timeline.scored.0),
            per_seed.join(" "),
        );
    }
    let held: usize = results.iter().map(|r| r.played.holdout_offers).sum();
    if held > 0 {
        let _ = writeln!(out, "          {held} offers were made to holdout players");
    }
    if results.iter().any(|r| !r.seeded) {
        out.push_str("          the engine did not take the sampler seed\n");
    }
    out
}
