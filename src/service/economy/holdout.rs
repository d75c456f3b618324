//! The holdout comparison: every player of each group (holdout or treatment) of a game and
//! environment, their revenue, the ARPU comparison with its Mann-Whitney p-value, and the
//! exact samples behind it.
//!
//! Revenue is the lifetime real-money spend the money step keeps per player (while the game
//! checks store receipts: only the verified revenue of the days from the one the checks
//! began on, `verified_since`, the rest shown apart), less the revenue of the days left out: revenue-share figures are measured in a healthy economy, so
//! the revenue of each day whose FSR quadrant was DEFLATION, INFLATION or HYPER_INFL is
//! subtracted (the store keeps each payer's revenue by day; a day with no movement to judge
//! counts). A comparison taken at a past day (a month's close) also subtracts the revenue of
//! the days after it and counts only the players installed by then. A payer known only from
//! imported history (no session) counts too, in the group the holdout hash gives it.
//! Non-payers count as revenue 0: they enter the test as a count of tied zeros, so its cost
//! grows with the payers.
//!
//! The samples export names players by an HMAC-SHA-256 of the player id under a secret of
//! the game (made once, kept in the store): a studio can recompute the p-value, but cannot
//! recover ids by hashing guesses without the secret.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::sync::Arc;

use chrono::{DateTime, Datelike, Days, NaiveDate, Utc};
use hmac::{Hmac, KeyInit, Mac};
use offer_actors::GameHandle;
use offer_domain::environment::Environment;
use offer_domain::holdout::is_holdout;
use offer_domain::holdout_arpu::{self, HoldoutArpu, RevenueBasis};
use offer_domain::mann_whitney::Group;
use offer_domain::revenue_share::uplift_revenue_usd;
use sha2::Sha256;
use uuid::Uuid;

use crate::service::economy::population::{self, PlayerEntry};
use crate::service::economy::verified_baseline;
use crate::service::{ServiceError, ServiceResult, Services, economy::health};
use crate::store::Collection;
use crate::store::codec::decode;

/// One player of the comparison.
struct Counted {
    id: String,
    holdout: bool,
    /// Revenue in cents on the counted days from launch to the comparison's day.
    revenue: u64,
    /// Revenue in cents on the counted days of the comparison day's month.
    month: u64,
}

/// Every player of a game and environment as of one day, with the revenue that counts.
struct Population {
    players: Vec<Counted>,
    /// Verified figures: when receipt checks began, and the revenue of the players counted
    /// outside the window from then on, in cents. `None` on the reported basis.
    verified: Option<(DateTime<Utc>, i64)>,
    /// Players with a session in the 30 days ending today.
    monthly: u64,
    /// Days from launch to the comparison's day left out as unhealthy.
    days_excluded: u32,
    /// Of those, the days of the comparison day's month.
    month_days_excluded: u32,
}

/// The UTC day of an environment's launch, if it launched.
fn launch_day(game: &GameHandle, env: Environment) -> Option<NaiveDate> {
    let view = game.view();
    match env {
        Environment::Production => view.game.launched_at,
        Environment::Sandbox => view.game.sandbox_launched_at,
    }
    .map(|at| at.date_naive())
}

/// The days from `from` to `to`, both included (none when `from` is later).
fn days_between(from: NaiveDate, to: NaiveDate) -> Vec<NaiveDate> {
    from.iter_days().take_while(|d| *d <= to).collect()
}

/// Each player's revenue in cents over `days`.
async fn revenue_over(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    days: &[NaiveDate],
) -> ServiceResult<HashMap<String, i64>> {
    let mut out: HashMap<String, i64> = HashMap::new();
    for day in state.store.day_revenues(game_id, env, days).await? {
        for (player, cents) in day {
            let total = out.entry(player).or_default();
            *total = total.saturating_add(cents);
        }
    }
    Ok(out)
}

impl Population {
    /// The population as of `until` (today for the live figures, a month's last day for its
    /// decision).
    async fn read(
        state: &Services,
        game: &GameHandle,
        env: Environment,
        until: NaiveDate,
    ) -> ServiceResult<Self> {
        let view = game.view();
        let game_id = view.game.game_id;
        let today = Utc::now().date_naive();
        let month_first = until.with_day(1).unwrap_or(until);
        // While receipts are checked, only the days from the one the checks began on count.
        let verified_since = view
            .stores
            .verification
            .is_on()
            .then_some(view.stores.verified_since)
            .flatten();
        let window_start = verified_since.map(|at| at.date_naive());
        let in_window = |d: &NaiveDate| window_start.is_none_or(|start| *d >= start);
        let excluded: Vec<NaiveDate> = match launch_day(game, env) {
            Some(launch) if launch <= until => {
                health::unhealthy_days(state, game, env, launch, until).await?
            }
            _ => Vec::new(),
        };
        let skipped: HashSet<NaiveDate> = excluded.iter().copied().collect();
        let after_until = until
            .checked_add_days(Days::new(1))
            .map_or_else(Vec::new, |next| days_between(next, today));
        let left_out: Vec<NaiveDate> = excluded
            .iter()
            .copied()
            .chain(after_until)
            .filter(in_window)
            .collect();
        let subtract = revenue_over(state, game_id, env, &left_out).await?;
        let month_days: Vec<NaiveDate> = days_between(month_first, until)
            .into_iter()
            .filter(|d| !skipped.contains(d) && in_window(d))
            .collect();
        let mut month = revenue_over(state, game_id, env, &month_days).await?;
        let lifetime_spends: HashMap<String, i64> = state
            .store
            .spends(game_id, env)
            .await?
            .into_iter()
            .collect();
        let (mut lifetime, verified) = match (verified_since, window_start) {
            (Some(since), Some(start)) => {
                let mut window =
                    revenue_over(state, game_id, env, &days_between(start, today)).await?;
                // What the first day had counted before the checks began counts in neither
                // the window nor, when that day is in it, the month.
                let before =
                    verified_baseline::before_the_switch(state, game_id, env, start).await?;
                let month_has_start = month_days.contains(&start);
                for (player, cents) in before {
                    if let Some(total) = window.get_mut(&player) {
                        *total = total.saturating_sub(cents);
                    }
                    if month_has_start && let Some(total) = month.get_mut(&player) {
                        *total = total.saturating_sub(cents);
                    }
                }
                let all: i64 = lifetime_spends.values().sum();
                let counted: i64 = window.values().sum();
                (window, Some((since, all.saturating_sub(counted).max(0))))
            }
            _ => (lifetime_spends, None),
        };

        let mut counted = |id: String, holdout: bool, lifetime: &mut HashMap<String, i64>| {
            let paid = lifetime.remove(&id).unwrap_or(0);
            let left = subtract.get(&id).copied().unwrap_or(0);
            Counted {
                revenue: cents(paid.saturating_sub(left)),
                month: cents(month.remove(&id).unwrap_or(0)),
                id,
                holdout,
            }
        };
        let month_start = today - chrono::Duration::days(29);
        let mut players = Vec::new();
        let mut monthly = 0;
        for (player_id, bytes) in state
            .store
            .list(population::collection(game_id, env))
            .await?
        {
            let entry: PlayerEntry = decode(&bytes)?;
            if !entry.billed_in(env) {
                // Known from imported history only: never in production's billing figures.
                continue;
            }
            if entry.last_seen.is_some_and(|day| day >= month_start) {
                monthly += 1;
            }
            if entry.install_day <= until {
                players.push(counted(player_id, entry.holdout, &mut lifetime));
            } else {
                // Installed after the comparison's day: not a player then, nor a payer.
                lifetime.remove(&player_id);
            }
        }
        // Payers known only from imported history (the sandbox's: production keeps none).
        let history_only: Vec<String> = lifetime.keys().cloned().collect();
        for player_id in history_only {
            let holdout = is_holdout(&player_id, game_id);
            players.push(counted(player_id, holdout, &mut lifetime));
        }
        let in_month = |d: &&NaiveDate| **d >= month_first;
        Ok(Self {
            players,
            verified,
            monthly,
            days_excluded: u32::try_from(excluded.len()).unwrap_or(u32::MAX),
            month_days_excluded: u32::try_from(excluded.iter().filter(in_month).count())
                .unwrap_or(u32::MAX),
        })
    }

    /// The comparison of treatment over control, and the month's uplift.
    fn compare(&self, days_live: i64) -> Comparison {
        let (mut t_zeros, mut c_zeros) = (0u64, 0u64);
        let (mut t_paid, mut c_paid) = (Vec::new(), Vec::new());
        let (mut t_month, mut c_month) = (0u128, 0u128);
        for p in &self.players {
            match (p.holdout, p.revenue) {
                (true, 0) => c_zeros += 1,
                (false, 0) => t_zeros += 1,
                (true, r) => c_paid.push(r),
                (false, r) => t_paid.push(r),
            }
            if p.holdout {
                c_month += u128::from(p.month);
            } else {
                t_month += u128::from(p.month);
            }
        }
        let mut arpu = holdout_arpu::compare(
            Group {
                zeros: t_zeros,
                paid: &t_paid,
            },
            Group {
                zeros: c_zeros,
                paid: &c_paid,
            },
            days_live,
        );
        arpu.days_excluded = self.days_excluded;
        if let Some((since, before_cents)) = self.verified {
            arpu.revenue_basis = RevenueBasis::Verified;
            arpu.verified_since = Some(since);
            arpu.revenue_before_verified_usd = before_cents as f64 / 100.0;
        }
        let per_player = |cents: u128, n: u64| {
            if n == 0 {
                0.0
            } else {
                cents as f64 / n as f64 / 100.0
            }
        };
        let month = MonthFigures {
            treatment_arpu_usd: per_player(t_month, arpu.n_treatment),
            control_arpu_usd: per_player(c_month, arpu.n_control),
            treated_players: arpu.n_treatment,
            days_excluded: self.month_days_excluded,
        };
        Comparison {
            arpu,
            monthly: self.monthly,
            month,
        }
    }
}

/// Revenue never goes below 0; a negative stored sum would be a store fault, read as 0.
fn cents(revenue: i64) -> u64 {
    u64::try_from(revenue).unwrap_or(0)
}

/// Whole days from an environment's launch to the end of `until` (0 before it).
fn days_live(game: &GameHandle, env: Environment, until: NaiveDate) -> i64 {
    let view = game.view();
    let launched = match env {
        Environment::Production => view.game.launched_at,
        Environment::Sandbox => view.game.sandbox_launched_at,
    };
    let end = until
        .checked_add_days(Days::new(1))
        .map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc())
        .unwrap_or_else(Utc::now)
        .min(Utc::now());
    launched.map_or(0, |at| (end - at).num_days().max(0))
}

/// The counted revenue of one month.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MonthFigures {
    /// Treated players' ARPU over the month's counted days, in USD.
    pub treatment_arpu_usd: f64,
    /// Holdout players' ARPU over the month's counted days, in USD.
    pub control_arpu_usd: f64,
    /// Treated players at the comparison's day.
    pub treated_players: u64,
    /// Days of the month left out as unhealthy.
    pub days_excluded: u32,
}

impl MonthFigures {
    /// `max(0, treatment ARPU - holdout ARPU) x treated players`, in USD.
    pub fn uplift_revenue_usd(&self) -> f64 {
        uplift_revenue_usd(
            self.treatment_arpu_usd,
            self.control_arpu_usd,
            self.treated_players,
        )
    }
}

/// The holdout comparison of a game's environment as of one day, its monthly players and
/// the counted revenue of that day's month.
pub struct Comparison {
    /// Treatment against the holdout.
    pub arpu: HoldoutArpu,
    /// Players with a session in the last 30 days.
    pub monthly: u64,
    /// The month of the comparison's day, up to that day.
    pub month: MonthFigures,
}

/// The comparison as of `until`. The test runs on a blocking thread: it sorts the payers,
/// which must not hold up the request threads for a large game.
pub async fn compare_at(
    state: &Services,
    game: &GameHandle,
    env: Environment,
    until: NaiveDate,
) -> ServiceResult<Comparison> {
    let population = Population::read(state, game, env, until).await?;
    let days = days_live(game, env, until);
    tokio::task::spawn_blocking(move || population.compare(days))
        .await
        .map_err(|e| ServiceError::Internal(format!("holdout comparison: {e}")))
}

/// Today's comparison of a game's environment, from the cache when it is fresh
/// (`economy.figures_cache_ms`).
pub async fn comparison(
    state: &Services,
    game: &GameHandle,
    env: Environment,
) -> ServiceResult<Arc<Comparison>> {
    let game_id = game.view().game.game_id;
    state
        .figures
        .get_or_compute(game_id, env, async || {
            compare_at(state, game, env, Utc::now().date_naive()).await
        })
        .await
}

/// The holdout ARPU comparison of a game's environment.
pub async fn arpu(
    state: &Services,
    game: &GameHandle,
    env: Environment,
) -> ServiceResult<HoldoutArpu> {
    Ok(comparison(state, game, env).await?.arpu.clone())
}

/// The samples behind [`arpu`] as CSV `group,player_hash,revenue_cents` (`group` is
/// `treatment` or `control`), every player of both groups, non-payers with 0, ordered by
/// `player_hash`: the same export twice is the same file, and the order reveals nothing.
pub async fn samples_csv(
    state: &Services,
    game: &GameHandle,
    env: Environment,
) -> ServiceResult<String> {
    let game_id = game.view().game.game_id;
    let population = Population::read(state, game, env, Utc::now().date_naive()).await?;
    let secret = secret(state, game_id).await?;
    let mut rows = Vec::with_capacity(population.players.len());
    for player in &population.players {
        let (player_id, holdout, revenue) = (&player.id, &player.holdout, &player.revenue);
        let group = if *holdout { "control" } else { "treatment" };
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&secret)
            .map_err(|e| ServiceError::Internal(format!("player hash key: {e}")))?;
        mac.update(player_id.as_bytes());
        let mut hash = String::with_capacity(64);
        for byte in mac.finalize().into_bytes() {
            let _ = write!(hash, "{byte:02x}");
        }
        rows.push((hash, group, *revenue));
    }
    rows.sort_unstable();
    let mut out = String::with_capacity(32 + rows.len() * 80);
    out.push_str("group,player_hash,revenue_cents\n");
    for (hash, group, revenue) in rows {
        let _ = writeln!(out, "{group},{hash},{revenue}");
    }
    Ok(out)
}

/// The game's secret for player hashes: made at the first export, then always the same.
async fn secret(state: &Services, game_id: Uuid) -> ServiceResult<Vec<u8>> {
    crate::service::studio::secrets::get_or_make(state, secrets(game_id), "samples_hmac").await
}

/// Where the secret of the samples' player hashes is kept.
fn secrets(game_id: Uuid) -> Collection {
    Collection::game(game_id, "secrets")
}
