//! How many events each game refused, by day and refusal code: the figure behind "events
//! refused" on the economy page (a spend above the balance, an amount above a currency's
//! per-event bound, a receipt that does not verify, ...).
//!
//! Counting must not slow the event path, so each node tallies its refusals in memory
//! ([`RefusalTally::add`], one short lock) and a background task
//! (`service/workers/refused_events.rs`) adds the tallies to store counters every few
//! seconds, where every node's add up. A failed flush keeps the tally for the next one, so a
//! refusal is counted once; a node that stops abruptly loses at most its last few seconds.
//! Counters are named `<environment tag>/<YYYY-MM-DD>/<code>` (`prod` or `sandbox`) in the game's `refused_events`
//! collection and kept for [`KEEP_DAYS`] days.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use chrono::{NaiveDate, Utc};
use offer_domain::environment::Environment;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use crate::service::{ServiceResult, Services};
use crate::store::Collection;

/// Days of counters kept: the longest report period and a little more.
pub const KEEP_DAYS: i64 = 96;

/// The counters of one game.
pub fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "refused_events")
}

/// This node's refusals not yet added to the store, by game and counter name.
#[derive(Default)]
pub struct RefusalTally {
    pending: Mutex<HashMap<Uuid, HashMap<String, i64>>>,
}

impl RefusalTally {
    /// Counts one refused event of `game_id` in `env` today.
    pub fn add(&self, game_id: Uuid, env: Environment, code: &str) {
        let name = counter_name(env, Utc::now().date_naive(), code);
        if let Ok(mut pending) = self.pending.lock() {
            *pending.entry(game_id).or_default().entry(name).or_default() += 1;
        }
    }

    /// Everything counted since the last take, leaving nothing.
    pub fn take(&self) -> HashMap<Uuid, HashMap<String, i64>> {
        self.pending
            .lock()
            .map(|mut p| std::mem::take(&mut *p))
            .unwrap_or_default()
    }

    /// Gives back a game's counts a flush could not store, for the next flush.
    pub fn restore(&self, game_id: Uuid, counts: HashMap<String, i64>) {
        if let Ok(mut pending) = self.pending.lock() {
            let game = pending.entry(game_id).or_default();
            for (name, n) in counts {
                *game.entry(name).or_default() += n;
            }
        }
    }
}

/// The counter of `code` on `day` in `env`.
fn counter_name(env: Environment, day: NaiveDate, code: &str) -> String {
    format!("{}/{}/{code}", env.tag(), day.format("%Y-%m-%d"))
}

/// The environment, day and code a counter name holds.
pub fn parse_name(name: &str) -> Option<(&str, NaiveDate, &str)> {
    let mut parts = name.splitn(3, '/');
    let env = parts.next()?;
    let day = NaiveDate::parse_from_str(parts.next()?, "%Y-%m-%d").ok()?;
    Some((env, day, parts.next()?))
}

/// A game's refused events over a period.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, ToSchema)]
pub struct RefusedEvents {
    /// Days counted, ending today (UTC).
    pub days: u32,
    /// Every refused event of the period.
    pub total: i64,
    /// The refused events by refusal code (`insufficient_funds`, `amount_out_of_bounds`,
    /// `receipt_invalid`, ...), as the events' answers name them.
    pub by_code: BTreeMap<String, i64>,
}

/// The events of `game_id` in `env` refused over the `days` days ending today, every node's
/// flushed tallies added up (a refusal reaches these figures within a flush interval).
pub async fn over(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    days: u32,
) -> ServiceResult<RefusedEvents> {
    let today = Utc::now().date_naive();
    let first = today - chrono::Duration::days(i64::from(days) - 1);
    let counters = state
        .store
        .add_counters(collection(game_id), Vec::new())
        .await?;
    let mut out = RefusedEvents {
        days,
        ..RefusedEvents::default()
    };
    for (name, n) in counters {
        let Some((e, day, code)) = parse_name(&name) else {
            continue;
        };
        if e == env.tag() && (first..=today).contains(&day) {
            out.total += n;
            *out.by_code.entry(code.to_owned()).or_default() += n;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_tallies_add_up_across_takes_and_restores() {
        let name = counter_name(
            Environment::Sandbox,
            NaiveDate::from_ymd_opt(2026, 11, 28).expect("day"),
            "insufficient_funds",
        );
        assert_eq!(name, "sandbox/2026-11-28/insufficient_funds");
        let (env, day, code) = parse_name(&name).expect("reads");
        assert_eq!((env, code), ("sandbox", "insufficient_funds"));
        assert_eq!(day.to_string(), "2026-11-28");
        assert_eq!(parse_name("sandbox/not-a-day/x"), None);

        let tally = RefusalTally::default();
        let game = Uuid::new_v4();
        tally.add(game, Environment::Production, "amount_out_of_bounds");
        tally.add(game, Environment::Production, "amount_out_of_bounds");
        let taken = tally.take();
        assert!(tally.take().is_empty(), "a take leaves nothing");
        let counts = taken.get(&game).cloned().expect("the game's counts");
        assert_eq!(counts.values().sum::<i64>(), 2);
        tally.restore(game, counts);
        tally.add(game, Environment::Production, "amount_out_of_bounds");
        assert_eq!(tally.take()[&game].values().sum::<i64>(), 3);
    }
}
