//! The player population of each game and environment: every player once, with its group
//! (holdout or treatment), install day, last session day and platform.
//!
//! A player joins once it has played: a live session with at least one accepted event beyond
//! `session_start` ([`count_played`]), or imported history (`insert_new`, so two nodes
//! agree). A session opened and left without playing counts nowhere, so ids a script makes
//! up move neither the plan nor the holdout groups. A later sighting moves `last_seen`
//! forward and an earlier one `install_day` back, each a compare-and-swap. The holdout
//! comparison counts every player here, payers or not; the revenue-share plan counts the
//! players seen in the last 30 days; the approval simulation takes the players seen in the
//! last 7.
//!
//! A production player known from imported history only is marked `imported` until it plays
//! live: it stays in the economy's health figures (its install cohort, the approval
//! simulation) but counts in none of production's billing figures (the holdout comparison,
//! the plan's monthly players), which rest on live play alone, so that no import of history
//! moves a bill. An imported sighting of a player seen live moves its install day back (its
//! cohort), never its `last_seen`. In the sandbox imported history counts like live play.

use chrono::NaiveDate;
use dashmap::DashMap;
use offer_domain::environment::Environment;
use offer_domain::holdout::is_holdout;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// The population of one environment of a game.
pub fn collection(game_id: Uuid, env: Environment) -> Collection {
    let name = match env {
        Environment::Production => "players_production",
        Environment::Sandbox => "players_sandbox",
    };
    Collection::game(game_id, name)
}

/// One player of the population, stored once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlayerEntry {
    /// In the permanent holdout (never served AI offers).
    pub holdout: bool,
    /// The UTC day the player first played.
    pub install_day: NaiveDate,
    /// The UTC day it last played (monthly players count by it).
    #[serde(default)]
    pub last_seen: Option<NaiveDate>,
    /// The `platform` attribute of its latest session that had one: its L1 segment's
    /// platform bucket in the approval simulation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// Known from imported history only, never seen in a live session (see the module
    /// documentation): left out of production's billing figures.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub imported: bool,
}

impl PlayerEntry {
    /// Whether the player counts in the billing figures of `env`: every player of the
    /// sandbox, production's players seen live.
    pub fn billed_in(&self, env: Environment) -> bool {
        env == Environment::Sandbox || !self.imported
    }
}

/// How a player was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sighting {
    /// In a live session.
    Live,
    /// In imported history.
    Imported,
}

/// A player's population entry, if it ever had a session in this environment.
pub async fn entry(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
) -> ServiceResult<Option<PlayerEntry>> {
    match state.store.get(collection(game_id, env), player_id).await? {
        Some(bytes) => Ok(Some(decode(&bytes)?)),
        None => Ok(None),
    }
}

/// Moves a player's population entry to the id `to` (its erasure: the entry keeps counting
/// among its group's players under the tombstone). The entry is written under `to` before
/// it is deleted under `from`, so a crash in between leaves it under both and a retry
/// finishes the move. `false` when there was no entry.
pub async fn rename(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    from: &str,
    to: &str,
) -> ServiceResult<bool> {
    let coll = collection(game_id, env);
    let Some(stored) = state.store.get(coll, from).await? else {
        return Ok(false);
    };
    state
        .store
        .put_all(coll, vec![(to.to_owned(), stored)])
        .await?;
    state.store.delete(coll, from).await?;
    Ok(true)
}

/// Adds a player to its game's population, seen on `day` (its first day of play, or an
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
    sighting: Sighting,
) -> ServiceResult<()> {
    let coll = collection(game_id, env);
    for _ in 0..5 {
        let Some(stored) = state.store.get(coll, player_id).await? else {
            let entry = PlayerEntry {
                holdout: is_holdout(player_id, game_id),
                install_day: day,
                last_seen: Some(day),
                platform: platform.map(str::to_owned),
                imported: sighting == Sighting::Imported,
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
        if !entry.sighted(day, platform, sighting) {
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
    /// Takes in a sighting on `day`; `false` when it changes nothing. A live sighting ends
    /// `imported`; an imported one moves `last_seen` only of a player never seen live.
    fn sighted(&mut self, day: NaiveDate, platform: Option<&str>, sighting: Sighting) -> bool {
        let mut changed = false;
        if day < self.install_day {
            self.install_day = day;
            changed = true;
        }
        if sighting == Sighting::Live && self.imported {
            self.imported = false;
            changed = true;
        }
        let moves_last_seen = sighting == Sighting::Live || self.imported;
        if moves_last_seen && self.last_seen.is_none_or(|seen| seen < day) {
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

/// Most players [`Sightings`] remembers; past it, the ones of earlier days are forgotten
/// first, then all (which only costs a registration more per player).
const MAX_SIGHTINGS: usize = 500_000;

/// The players this node has counted today, so that only a player's first accepted event of
/// the day reads the store: every later batch of the day finds it here.
#[derive(Default)]
pub struct Sightings {
    counted: DashMap<(Uuid, Environment, String), NaiveDate>,
}

impl Sightings {
    fn counted_on(&self, key: &(Uuid, Environment, String), day: NaiveDate) -> bool {
        self.counted.get(key).is_some_and(|d| *d == day)
    }

    fn remember(&self, key: (Uuid, Environment, String), day: NaiveDate) {
        if self.counted.len() >= MAX_SIGHTINGS {
            self.counted.retain(|_, d| *d == day);
            if self.counted.len() >= MAX_SIGHTINGS {
                self.counted.clear();
            }
        }
        self.counted.insert(key, day);
    }

    /// Forgets that this node counted `player_id` of `game_id` today (its erasure): the
    /// same id coming back is a new player and joins the population again.
    pub fn forget(&self, game_id: Uuid, player_id: &str) {
        for env in [Environment::Production, Environment::Sandbox] {
            self.counted.remove(&(game_id, env, player_id.to_owned()));
        }
    }
}

/// Counts a player that played on `day` (a live session's accepted event beyond
/// `session_start`): it joins the population, or its `last_seen` moves to `day`. Only its
/// first event of the day on this node reaches the store.
pub async fn count_played(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
    day: NaiveDate,
    platform: Option<&str>,
) -> ServiceResult<()> {
    let key = (game_id, env, player_id.to_owned());
    if state.sightings.counted_on(&key, day) {
        return Ok(());
    }
    register(
        state,
        game_id,
        env,
        player_id,
        day,
        platform,
        Sighting::Live,
    )
    .await?;
    state.sightings.remember(key, day);
    Ok(())
}

/// The players of a game and environment whose latest session is on `since` or later.
pub async fn population_since(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    since: NaiveDate,
) -> ServiceResult<Vec<(String, PlayerEntry)>> {
    let mut out = Vec::new();
    for (player_id, bytes) in state.store.list(collection(game_id, env)).await? {
        let entry: PlayerEntry = decode(&bytes)?;
        if entry.last_seen.is_some_and(|day| day >= since) {
            out.push((player_id, entry));
        }
    }
    Ok(out)
}
