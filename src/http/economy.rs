//! Economy endpoints (dashboard, viewer or above): the faucet/sink ratio report.

use axum::Json;
use axum::extract::State;
use offer_domain::environment::Environment;
use offer_domain::fsr::FsrReport;
use serde::Deserialize;
use utoipa::IntoParams;

use super::access::{GameAccess, Viewer};
use super::extract::ApiQuery;
use super::openapi::{AuthErrors, Invalid, NotFound, QueryError, Unavailable};
use crate::error::ApiResult;
use crate::service::economy;
use crate::state::AppState;

/// Days in the report when `days` is not given: one window.
const DEFAULT_DAYS: i64 = 7;

/// Query of the FSR report.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FsrQuery {
    /// Days of `daily_fsr`, 1 to 90 (default 7); outside that range the answer is 422.
    #[param(minimum = 1, maximum = 90)]
    pub days: Option<i64>,
    /// Production (default) or sandbox: the two never mix.
    pub environment: Option<Environment>,
}

/// The faucet/sink ratio: currency earned over currency spent in the rolling 7-day window
/// ending each UTC day, classified against the genre's healthy range.
///
/// Computed from per-day aggregates, so its cost does not grow with the ledger. The
/// aggregate weighs currencies by their USD value per unit when every currency that moved
/// has one (`weighting: usd`), otherwise by raw units (`weighting: units`). A window with
/// nothing spent has `fsr: null`: its quadrant is `HYPER_INFL` when currency was earned,
/// `null` when nothing moved.
#[utoipa::path(get, path = "/v1/games/{game_id}/economy/fsr", tag = "economy",
    operation_id = "get_fsr",
    params(("game_id" = Uuid, Path), FsrQuery),
    responses((status = 200, description = "The FSR report", body = FsrReport),
        AuthErrors, QueryError, NotFound, Invalid, Unavailable))]
pub async fn fsr(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiQuery(q): ApiQuery<FsrQuery>,
) -> ApiResult<Json<FsrReport>> {
    let report = economy::fsr_report(
        &state.services,
        &access.game,
        q.environment.unwrap_or(Environment::Production),
        q.days.unwrap_or(DEFAULT_DAYS),
    )
    .await?;
    Ok(Json(report))
}
