//! What the day receipt checks began had already counted. Revenue is kept per payer and
//! UTC day, and verified figures count the days from the one the checks began on; that
//! first day also holds what was reported before the switch. So when a stretch of
//! verification begins, each payer's revenue of that day so far is written down, and the
//! verified figures subtract it: a purchase reported an hour before the switch never counts
//! as verified. (A purchase in flight at the very moment of the switch may land on either
//! side.)

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use offer_domain::environment::Environment;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::service::{ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// The document's id in the game's configuration collection.
const DOCUMENT: &str = "verification_baseline";

/// Each payer's revenue in cents on the day a stretch of verification began, before it
/// began, per environment.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Baseline {
    /// The UTC day the stretch began.
    day: Option<NaiveDate>,
    /// Production payers.
    production: HashMap<String, i64>,
    /// Sandbox payers.
    sandbox: HashMap<String, i64>,
}

fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "config")
}

/// Writes down each payer's revenue so far on the day of `since`, when a stretch of
/// verification begins.
pub async fn record(state: &Services, game_id: Uuid, since: DateTime<Utc>) -> ServiceResult<()> {
    let day = since.date_naive();
    let mut baseline = Baseline {
        day: Some(day),
        ..Baseline::default()
    };
    for env in [Environment::Production, Environment::Sandbox] {
        let payers: HashMap<String, i64> = state
            .store
            .day_revenues(game_id, env, &[day])
            .await?
            .into_iter()
            .flatten()
            .collect();
        match env {
            Environment::Production => baseline.production = payers,
            Environment::Sandbox => baseline.sandbox = payers,
        }
    }
    write(state, game_id, &baseline).await
}

/// Moves the player `from`'s written-down revenue to the id `to` (its erasure: the
/// tombstone keeps what the verified figures subtract).
pub async fn rename(state: &Services, game_id: Uuid, from: &str, to: &str) -> ServiceResult<()> {
    let Some(bytes) = state.store.get(collection(game_id), DOCUMENT).await? else {
        return Ok(());
    };
    let mut baseline: Baseline = decode(&bytes)?;
    let mut moved = false;
    for payers in [&mut baseline.production, &mut baseline.sandbox] {
        if let Some(cents) = payers.remove(from) {
            payers.insert(to.to_owned(), cents);
            moved = true;
        }
    }
    if moved {
        write(state, game_id, &baseline).await?;
    }
    Ok(())
}

/// Stores the game's baseline.
async fn write(state: &Services, game_id: Uuid, baseline: &Baseline) -> ServiceResult<()> {
    state
        .store
        .put_all(
            collection(game_id),
            vec![(DOCUMENT.to_owned(), encode(baseline)?)],
        )
        .await?;
    Ok(())
}

/// The revenue to leave out of the verified figures of `env` whose window starts on `start`:
/// each payer's revenue written down when verification began that day (none for another
/// day).
pub async fn before_the_switch(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    start: NaiveDate,
) -> ServiceResult<HashMap<String, i64>> {
    let Some(bytes) = state.store.get(collection(game_id), DOCUMENT).await? else {
        return Ok(HashMap::new());
    };
    let baseline: Baseline = decode(&bytes)?;
    if baseline.day != Some(start) {
        return Ok(HashMap::new());
    }
    Ok(match env {
        Environment::Production => baseline.production,
        Environment::Sandbox => baseline.sandbox,
    })
}
