//! Economy figures of a game: the faucet/sink ratio report.
//!
//! Read-only: the report is computed from the store's per-day aggregates (one read of at
//! most 96 days, whatever the size of the ledger), the catalogue's currency values and the
//! genre's calibration, which is configuration and never code.

use chrono::Utc;
use offer_actors::GameHandle;
use offer_domain::catalogue::currency_rates;
use offer_domain::environment::Environment;
use offer_domain::fsr::{self, Flows, FsrReport, MAX_PERIOD_DAYS, ReportInput, Thresholds};

use super::{ServiceError, ServiceResult, Services};

/// The FSR report of `period_days` days ending today (UTC) in one environment.
///
/// `period_days` outside 1 to 90 is refused (422 on `days`) before anything is read.
pub async fn fsr_report(
    state: &Services,
    handle: &GameHandle,
    env: Environment,
    period_days: i64,
) -> ServiceResult<FsrReport> {
    let period = u32::try_from(period_days)
        .ok()
        .filter(|d| (1..=MAX_PERIOD_DAYS).contains(d))
        .ok_or_else(|| {
            ServiceError::invalid(
                "days",
                format!("days must be between 1 and {MAX_PERIOD_DAYS}, not {period_days}"),
            )
        })?;
    let view = handle.view();
    let game = &view.game;
    // The genre was checked against the table when it was set; a table edited since then
    // without it is a deployment mistake, not the caller's.
    let calibration = state.genres.get(&game.genre).ok_or_else(|| {
        ServiceError::Internal(format!(
            "genre `{}` is not in the calibration table",
            game.genre
        ))
    })?;
    let dates = fsr::days_needed(Utc::now().date_naive(), period);
    let flows: Vec<Flows> = state
        .store
        .day_aggregates(game.game_id, env, &dates)
        .await?
        .into_iter()
        .map(|a| Flows {
            earned: a.earned,
            spent: a.spent,
        })
        .collect();
    if flows.len() != dates.len() {
        return Err(ServiceError::Internal(format!(
            "the store answered {} day aggregates for {} days",
            flows.len(),
            dates.len()
        )));
    }
    let rates = currency_rates(&view.items, &game.currencies);
    let input = ReportInput {
        game_id: game.game_id,
        genre: &game.genre,
        thresholds: Thresholds {
            min: calibration.healthy_fsr_min,
            max: calibration.healthy_fsr_max,
        },
        usd_per_unit: &rates,
    };
    Ok(fsr::report(&input, &dates, &flows))
}
