//! The holdout comparison: every player of each group (holdout or treatment) of a game and
//! environment, their revenue, the ARPU comparison with its Mann-Whitney p-value, and the
//! exact samples behind it.
//!
//! A player joins the population at its first session (each player stored once, with its
//! group and install day, `insert_new` so two nodes agree). Revenue is the lifetime
//! real-money spend the money step keeps per player, so the comparison reads two collections
//! of the game and never the ledger. A payer known only from imported history (no session)
//! counts too, in the group the holdout hash gives it. Non-payers count as revenue 0: they
//! enter the test as a count of tied zeros, so its cost grows with the payers.
//!
//! The samples export names players by an HMAC-SHA-256 of the player id under a secret of
//! the game (made once, kept in the store): a studio can recompute the p-value, but cannot
//! recover ids by hashing guesses without the secret.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use chrono::{NaiveDate, Utc};
use hmac::{Hmac, KeyInit, Mac};
use offer_actors::GameHandle;
use offer_domain::environment::Environment;
use offer_domain::holdout::is_holdout;
use offer_domain::holdout_arpu::{self, HoldoutArpu};
use offer_domain::mann_whitney::Group;
use offer_domain::revenue_share::{self, RevenueShare};
use rand::RngExt;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use uuid::Uuid;

use super::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// The population of one environment of a game.
fn population(game_id: Uuid, env: Environment) -> Collection {
    let name = match env {
        Environment::Production => "players_production",
        Environment::Sandbox => "players_sandbox",
    };
    Collection::game(game_id, name)
}

/// Where the secret of the samples' player hashes is kept.
fn secrets(game_id: Uuid) -> Collection {
    Collection::game(game_id, "secrets")
}

/// One player of the population, stored once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlayerEntry {
    /// In the permanent holdout (never served AI offers).
    pub holdout: bool,
    /// The UTC day of the player's first session.
    pub install_day: NaiveDate,
    /// The UTC day of its latest session (monthly players count by it).
    #[serde(default)]
    pub last_seen: Option<NaiveDate>,
    /// The `platform` attribute of its latest session that had one: its L1 segment's
    /// platform bucket in the approval simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
}

/// A player's population entry, if it ever had a session in this environment.
pub async fn entry(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
) -> ServiceResult<Option<PlayerEntry>> {
    match state.store.get(population(game_id, env), player_id).await? {
        Some(bytes) => Ok(Some(decode(&bytes)?)),
        None => Ok(None),
    }
}

/// Adds a player to its game's population, seen on `day` (its first session, or an
/// imported `session_start` of the past). A later sighting moves `last_seen` forward, an
/// earlier one (history imported after live play) moves `install_day` back; each change is a
/// compare-and-swap, retried against another node's write.
pub async fn register(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
    day: NaiveDate,
    platform: Option<&str>,
) -> ServiceResult<()> {
    let coll = population(game_id, env);
    for _ in 0..5 {
        let Some(stored) = state.store.get(coll, player_id).await? else {
            let entry = PlayerEntry {
                holdout: is_holdout(player_id, game_id),
                install_day: day,
                last_seen: Some(day),
                platform: platform.map(str::to_owned),
            };
            if state
                .store
                .insert_new(coll, player_id, encode(&entry)?)
                .await?
            {
                return Ok(());
            }
            continue;
        };
        let mut entry: PlayerEntry = decode(&stored)?;
        if !entry.sighted(day, platform) {
            return Ok(());
        }
        if state
            .store
            .compare_and_swap(coll, player_id, Some(&stored), encode(&entry)?)
            .await?
        {
            return Ok(());
        }
    }
    Err(ServiceError::Conflict(
        "the player's population entry kept changing; retry".into(),
    ))
}

impl PlayerEntry {
    /// Takes in a sighting on `day`; `false` when it changes nothing.
    fn sighted(&mut self, day: NaiveDate, platform: Option<&str>) -> bool {
        let mut changed = false;
        if day < self.install_day {
            self.install_day = day;
            changed = true;
        }
        if self.last_seen.is_none_or(|seen| seen < day) {
            self.last_seen = Some(day);
            changed = true;
        }
        if let Some(p) = platform
            && self.platform.as_deref() != Some(p)
        {
            self.platform = Some(p.to_owned());
            changed = true;
        }
        changed
    }
}

/// The players of a game and environment whose latest session is on `since` or later.
pub async fn population_since(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    since: NaiveDate,
) -> ServiceResult<Vec<(String, PlayerEntry)>> {
    let mut out = Vec::new();
    for (player_id, bytes) in state.store.list(population(game_id, env)).await? {
        let entry: PlayerEntry = decode(&bytes)?;
        if entry.last_seen.is_some_and(|day| day >= since) {
            out.push((player_id, entry));
        }
    }
    Ok(out)
}

/// Every player of a game and environment with its group and revenue in cents.
struct Population {
    /// `(player id, holdout, revenue cents)`, non-payers with 0.
    players: Vec<(String, bool, u64)>,
    /// Players with a session in the last 30 days (today included).
    monthly: u64,
}

impl Population {
    async fn read(state: &Services, game_id: Uuid, env: Environment) -> ServiceResult<Self> {
        let mut spend: HashMap<String, i64> = state
            .store
            .spends(game_id, env)
            .await?
            .into_iter()
            .collect();
        let mut players = Vec::new();
        let month_start = Utc::now().date_naive() - chrono::Duration::days(29);
        let mut monthly = 0;
        for (player_id, bytes) in state.store.list(population(game_id, env)).await? {
            let entry: PlayerEntry = decode(&bytes)?;
            if entry.last_seen.is_some_and(|day| day >= month_start) {
                monthly += 1;
            }
            let revenue = spend.remove(&player_id).unwrap_or(0);
            players.push((player_id, entry.holdout, cents(revenue)));
        }
        // Payers known only from imported history.
        for (player_id, revenue) in spend {
            let holdout = is_holdout(&player_id, game_id);
            players.push((player_id, holdout, cents(revenue)));
        }
        Ok(Self { players, monthly })
    }

    /// The comparison of treatment over control.
    fn compare(&self, days_live: i64) -> HoldoutArpu {
        let (mut t_zeros, mut c_zeros) = (0u64, 0u64);
        let (mut t_paid, mut c_paid) = (Vec::new(), Vec::new());
        for (_, holdout, revenue) in &self.players {
            match (holdout, *revenue) {
                (true, 0) => c_zeros += 1,
                (false, 0) => t_zeros += 1,
                (true, r) => c_paid.push(r),
                (false, r) => t_paid.push(r),
            }
        }
        holdout_arpu::compare(
            Group {
                zeros: t_zeros,
                paid: &t_paid,
            },
            Group {
                zeros: c_zeros,
                paid: &c_paid,
            },
            days_live,
        )
    }
}

/// Revenue never goes below 0; a negative stored sum would be a store fault, read as 0.
fn cents(revenue: i64) -> u64 {
    u64::try_from(revenue).unwrap_or(0)
}

/// Whole days since the environment's launch (0 before it).
fn days_live(game: &GameHandle, env: Environment) -> i64 {
    let view = game.view();
    let launched = match env {
        Environment::Production => view.game.launched_at,
        Environment::Sandbox => view.game.sandbox_launched_at,
    };
    launched.map_or(0, |at| (Utc::now() - at).num_days().max(0))
}

/// The holdout comparison of a game's environment and its monthly players: what the ARPU
/// and revenue-share endpoints show, cached per game and environment for
/// `economy.figures_cache_ms`.
pub struct Comparison {
    /// Treatment against the holdout.
    pub arpu: HoldoutArpu,
    /// Players with a session in the last 30 days.
    pub monthly: u64,
}

/// The comparison of a game's environment, from the cache when it is fresh. The test runs
/// on a blocking thread: it sorts the payers, which must not hold up the request threads
/// for a large game.
async fn comparison(
    state: &Services,
    game: &GameHandle,
    env: Environment,
) -> ServiceResult<Arc<Comparison>> {
    let game_id = game.view().game.game_id;
    state
        .figures
        .get_or_compute(game_id, env, async || {
            let population = Population::read(state, game_id, env).await?;
            let days = days_live(game, env);
            let monthly = population.monthly;
            let arpu = tokio::task::spawn_blocking(move || population.compare(days))
                .await
                .map_err(|e| ServiceError::Internal(format!("holdout comparison: {e}")))?;
            Ok(Comparison { arpu, monthly })
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

/// The live, provisional revenue-share standing of a game's production players: the
/// comparison's five conditions, the plan its monthly players put it on, the studio's
/// contracted rate (operator configuration) and the next billing day.
pub async fn revenue_share(
    state: &Services,
    game: &GameHandle,
    studio_id: &str,
) -> ServiceResult<RevenueShare> {
    let figures = comparison(state, game, Environment::Production).await?;
    Ok(revenue_share::standing(
        &figures.arpu,
        &state.plans,
        figures.monthly,
        state.settings.billing.rate_pct(studio_id),
        Utc::now().date_naive(),
    ))
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
    let population = Population::read(state, game_id, env).await?;
    let secret = secret(state, game_id).await?;
    let mut rows = Vec::with_capacity(population.players.len());
    for (player_id, holdout, revenue) in &population.players {
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

/// The game's secret for player hashes: made at the first export, then always the same
/// (`insert_new`: two nodes making one at once keep the first).
async fn secret(state: &Services, game_id: Uuid) -> ServiceResult<Vec<u8>> {
    let fresh: [u8; 32] = rand::rng().random();
    state
        .store
        .insert_new(secrets(game_id), "samples_hmac", fresh.to_vec())
        .await?;
    state
        .store
        .get(secrets(game_id), "samples_hmac")
        .await?
        .ok_or_else(|| ServiceError::Internal("the samples secret vanished".into()))
}
