//! Economy figures of a game: the faucet/sink ratio report, and the quadrant that gates the
//! AI levels.
//!
//! The report is computed from the store's per-day aggregates (one read of at most 96 days,
//! whatever the size of the ledger), the catalogue's currency values and the genre's
//! calibration, which is configuration and never code.
//!
//! The quadrant is recomputed by every node for the games it serves, from the shared store,
//! on a schedule ([`refresh_schedule`]), when the node loads a game and after a production
//! import: nothing travels on the bus, so every node converges on the same quadrant within
//! one interval.

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{NaiveDate, Utc};
use offer_actors::{GameChange, GameHandle};
use offer_domain::catalogue::currency_rates;
use offer_domain::economy::Quadrant;
use offer_domain::environment::Environment;
use offer_domain::fsr::{
    self, Flows, FsrReport, LeftOut, MAX_PERIOD_DAYS, ReportInput, Thresholds,
};
use offer_domain::game::Game;

use crate::service::economy::day_caps;
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::DayAggregate;

/// The FSR report of `period_days` days ending today (UTC) in one environment, of every
/// player or of one install cohort (`YYYY-Www`: the players whose first session was in that
/// ISO week).
///
/// `period_days` outside 1 to 90, or a cohort that names no ISO week, is refused (422 on
/// `days` or `cohort`) before anything is read.
pub async fn fsr_report(
    state: &Services,
    handle: &GameHandle,
    env: Environment,
    period_days: i64,
    cohort: Option<&str>,
) -> ServiceResult<FsrReport> {
    let cohort = cohort
        .map(|text| {
            fsr::parse_cohort(text).ok_or_else(|| {
                ServiceError::invalid(
                    "cohort",
                    format!(
                        "`{text}` is not an ISO week: YYYY-Www, week 01 to 53, for example 2026-W40"
                    ),
                )
            })
        })
        .transpose()?;
    let period = period(period_days)?;
    let view = handle.view();
    let game = &view.game;
    let thresholds = thresholds(state, game)?;
    let dates = fsr::days_needed(Utc::now().date_naive(), period);
    let flows = flows(state, game.game_id, env, &dates, cohort.as_deref()).await?;
    let rates = currency_rates(&view.items, &game.currencies);
    let caps = day_caps::in_force(state, game, env).await?;
    let input = ReportInput {
        game_id: game.game_id,
        genre: &game.genre,
        thresholds,
        usd_per_unit: &rates,
        caps: &caps,
    };
    Ok(fsr::report(&input, &dates, &flows))
}

/// A report's `days`, 1 to [`MAX_PERIOD_DAYS`]; anything else is a 422 naming `days`.
pub fn period(period_days: i64) -> ServiceResult<u32> {
    u32::try_from(period_days)
        .ok()
        .filter(|d| (1..=MAX_PERIOD_DAYS).contains(d))
        .ok_or_else(|| {
            ServiceError::invalid(
                "days",
                format!("days must be between 1 and {MAX_PERIOD_DAYS}, not {period_days}"),
            )
        })
}

/// Most days the unhealthy-day scan reads (about three years): older days count.
const MAX_SCAN_DAYS: u32 = 1_100;

/// The days from `from` to `until` (at most the last 1,100) on which the FSR
/// quadrant of the 7-day window ending that day was DEFLATION, INFLATION or HYPER_INFL:
/// the days whose revenue the revenue-share figures leave out. A window in which nothing
/// moved has no quadrant, and its day counts. Reads the day aggregates only.
pub async fn unhealthy_days(
    state: &Services,
    handle: &GameHandle,
    env: Environment,
    from: NaiveDate,
    until: NaiveDate,
) -> ServiceResult<Vec<NaiveDate>> {
    let span = (until - from).num_days() + 1;
    let Some(period) = u32::try_from(span).ok().filter(|d| *d > 0) else {
        return Ok(Vec::new());
    };
    let period = period.min(MAX_SCAN_DAYS);
    let view = handle.view();
    let thresholds = thresholds(state, &view.game)?;
    let dates = fsr::days_needed(until, period);
    let flows = flows(state, view.game.game_id, env, &dates, None).await?;
    let rates = currency_rates(&view.items, &view.game.currencies);
    let quadrants = fsr::daily_quadrants(thresholds, &rates, &flows);
    let report_days = &dates[dates.len().saturating_sub(quadrants.len())..];
    Ok(report_days
        .iter()
        .zip(quadrants)
        .filter(|(_, q)| q.is_some_and(|q| q != Quadrant::Healthy))
        .map(|(d, _)| *d)
        .collect())
}

/// The genre's healthy range. The genre was checked against the table when it was set; a
/// table edited since then without it is a deployment mistake, not the caller's.
fn thresholds(state: &Services, game: &Game) -> ServiceResult<Thresholds> {
    let calibration = state.genres.get(&game.genre).ok_or_else(|| {
        ServiceError::Internal(format!(
            "genre `{}` is not in the calibration table",
            game.genre
        ))
    })?;
    Ok(Thresholds {
        min: calibration.healthy_fsr_min,
        max: calibration.healthy_fsr_max,
    })
}

/// The flows of the given days, in their order: every player's, or one install cohort's.
async fn flows(
    state: &Services,
    game_id: uuid::Uuid,
    env: Environment,
    dates: &[NaiveDate],
    cohort: Option<&str>,
) -> ServiceResult<Vec<Flows>> {
    let flows: Vec<Flows> = state
        .store
        .day_aggregates(game_id, env, dates)
        .await?
        .into_iter()
        .map(|mut a| {
            let left_out = left_out(&a);
            match cohort {
                None => Flows {
                    earned: a.earned,
                    spent: a.spent,
                    left_out,
                },
                Some(cohort) => {
                    let of_cohort = a.cohorts.remove(cohort).unwrap_or_default();
                    Flows {
                        earned: of_cohort.earned,
                        spent: of_cohort.spent,
                        left_out,
                    }
                }
            }
        })
        .collect();
    if flows.len() != dates.len() {
        return Err(ServiceError::Internal(format!(
            "the store answered {} day aggregates for {} days",
            flows.len(),
            dates.len()
        )));
    }
    Ok(flows)
}

/// What the players' day caps left out of one day, per currency.
fn left_out(day: &DayAggregate) -> BTreeMap<String, LeftOut> {
    let mut out: BTreeMap<String, LeftOut> = BTreeMap::new();
    for (currency, n) in &day.left_out_earned {
        out.entry(currency.clone()).or_default().earned = *n;
    }
    for (currency, n) in &day.left_out_spent {
        out.entry(currency.clone()).or_default().spent = *n;
    }
    for (currency, n) in &day.capped_earned {
        out.entry(currency.clone()).or_default().earned_players = *n;
    }
    for (currency, n) in &day.capped_spent {
        out.entry(currency.clone()).or_default().spent_players = *n;
    }
    out
}

/// Recomputes the quadrant of a game this node serves from the production 7-day window
/// ending today and hands it to the game's actor when it changed. A window in which nothing
/// moved has no quadrant, so the game keeps its last one. Answers the quadrant now in force.
///
/// Production only: the actor holds one quadrant per game, and the sandbox's test traffic
/// must not switch the live game's AI levels off.
pub async fn refresh_quadrant(state: &Services, handle: &GameHandle) -> ServiceResult<Quadrant> {
    let game_id = handle.view().game.game_id;
    // Under the write lock, so a reload (which carries the actor's quadrant over) never
    // lands between this read of the quadrant and its change.
    let lock = state.write_lock(game_id);
    let _guard = lock.lock().await;
    let report = fsr_report(state, handle, Environment::Production, 1, None).await?;
    let current = handle.view().snapshot.quadrant();
    match report.quadrant {
        Some(next) if next != current => {
            handle.change(GameChange::Quadrant(next)).await?;
            tracing::info!(%game_id, from = ?current, to = ?next, "FSR quadrant changed");
            Ok(next)
        }
        _ => Ok(current),
    }
}

/// Refreshes the quadrant of every game this node serves, one after the other (a failure
/// is logged and the next game still refreshes).
async fn refresh_all(state: &Services) {
    for handle in state.actors.games() {
        if let Err(e) = refresh_quadrant(state, &handle).await {
            let game_id = handle.view().game.game_id;
            tracing::warn!(%game_id, error = %e, "refreshing the FSR quadrant failed");
        }
    }
}

/// Refreshes every served game's quadrant each `economy.quadrant_interval_ms`, for as long
/// as the process runs. Started with the server, off the request path.
pub async fn refresh_schedule(state: Services) {
    let period = Duration::from_millis(state.settings.economy.quadrant_interval_ms);
    let mut ticks = tokio::time::interval(period);
    // A slow store delays the next round rather than bunching rounds up behind it.
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        refresh_all(&state).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::test_support::{new_game, with_services};

    #[test]
    fn a_window_where_nothing_moved_keeps_the_last_quadrant() {
        with_services(async |services| {
            let game = new_game(&services, "Quiet").await;
            game.change(GameChange::Quadrant(Quadrant::HyperInfl))
                .await
                .expect("actor");
            let version = game.view().version;
            let quadrant = refresh_quadrant(&services, &game).await.expect("refresh");
            assert_eq!(quadrant, Quadrant::HyperInfl);
            assert_eq!(game.view().snapshot.quadrant(), Quadrant::HyperInfl);
            assert_eq!(game.view().version, version, "nothing was published");
        });
    }
}
