//! Economy endpoints (dashboard): the faucet/sink ratio report, the revenue by proof, the
//! holdout comparison with its samples and the results of price experiments (viewer or
//! above), and the history import (admin).

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use offer_domain::environment::Environment;
use offer_domain::experiment_results::ExperimentResults;
use offer_domain::fsr::FsrReport;
use offer_domain::holdout_arpu::HoldoutArpu;
use offer_domain::revenue_share::RevenueShare;
use serde::Deserialize;
use utoipa::IntoParams;

use offer_wire::event::SdkEvent;
use utoipa::ToSchema;

use super::access::{Admin, GameAccess, Viewer};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::openapi::{AuthErrors, BatchBodyErrors, Invalid, NotFound, QueryError, Unavailable};
use crate::error::ApiResult;
use crate::service::economy::revenue::{self, RevenueByProof};
use crate::service::play::import::{self, ImportOutcome};
use crate::service::{economy::billing, economy::experiments, economy::health, economy::holdout};
use crate::state::AppState;

/// Days in the report when `days` is not given: one window.
const DEFAULT_DAYS: i64 = 7;
/// Days of the revenue by proof when `days` is not given: the dashboard's period.
const REVENUE_DAYS: i64 = 30;

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
    /// Only the players who installed in this ISO week, `YYYY-Www` with a week from 01 to 53
    /// (for example `2026-W40`); anything else is a 422. Covers the currency they moved since
    /// the engine kept cohorts.
    #[param(pattern = r"^[0-9]{4}-W(0[1-9]|[1-4][0-9]|5[0-3])$")]
    pub cohort: Option<String>,
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
    let report = health::fsr_report(
        &state.services,
        &access.game,
        q.environment.unwrap_or(Environment::Production),
        q.days.unwrap_or(DEFAULT_DAYS),
        q.cohort.as_deref(),
    )
    .await?;
    Ok(Json(report))
}

/// Query of the revenue by proof.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RevenueQuery {
    /// Days ending today (UTC), 1 to 90; 30 when not given.
    #[param(minimum = 1, maximum = 90)]
    pub days: Option<i64>,
    /// Production (default) or sandbox.
    pub environment: Option<Environment>,
}

/// The revenue of the last days by how it was proven: what counts in the holdout comparison
/// and the bill (verified while the game checks store receipts, from the day the checks
/// began; as reported otherwise), what the stores' refunds took back, and what was kept
/// without a store's proof. Read from the day aggregates.
#[utoipa::path(get, path = "/v1/games/{game_id}/economy/revenue", tag = "economy",
    operation_id = "get_revenue_by_proof",
    params(("game_id" = Uuid, Path), RevenueQuery),
    responses((status = 200, description = "The revenue by proof", body = RevenueByProof),
        AuthErrors, QueryError, NotFound, Invalid, Unavailable))]
pub async fn revenue(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiQuery(q): ApiQuery<RevenueQuery>,
) -> ApiResult<Json<RevenueByProof>> {
    let report = revenue::over(
        &state.services,
        &access.game,
        q.environment.unwrap_or(Environment::Production),
        q.days.unwrap_or(REVENUE_DAYS),
    )
    .await?;
    Ok(Json(report))
}

/// One past event: the SDK event's fields (its `type` one of `currency_earned`,
/// `currency_spent`, `purchase`, and its `ts` required) and the player it belongs to.
#[derive(Debug, Deserialize, ToSchema)]
pub struct ImportedEvent {
    /// The player, 1 to 128 characters.
    #[schema(min_length = 1, max_length = 128)]
    pub player_id: String,
    /// The event.
    #[serde(flatten)]
    pub event: SdkEvent,
}

/// `POST /v1/games/{game_id}/events/import` body.
///
/// Refused with 422 naming the event's index, and nothing written, when any event breaks a
/// rule: `ts` missing or more than 24 hours in the future, a type other than the three money
/// events, a currency the game does not have, an amount or `tx_id` out of bounds. More than
/// 10,000 events is a 413.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ImportBody {
    /// Production (default) or sandbox.
    #[serde(default)]
    pub environment: Option<Environment>,
    /// At most 10,000 events, in the order they are appended.
    #[schema(max_items = 10000)]
    pub events: Vec<ImportedEvent>,
}

/// Imports a game's history (admin): money events appended to the ledger and the day
/// aggregates as they happened, past timestamps included. There is no balance check
/// (history has no opening balance and may arrive out of order); `tx_id` still
/// deduplicates, so re-running an import changes nothing.
#[utoipa::path(post, path = "/v1/games/{game_id}/events/import", tag = "economy",
    operation_id = "import_events",
    params(("game_id" = Uuid, Path)), request_body = ImportBody,
    responses((status = 200, description = "What was appended, what was already there, what was refused", body = ImportOutcome),
        AuthErrors, BatchBodyErrors, NotFound, Unavailable))]
pub async fn import_events(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiJson(body): ApiJson<ImportBody>,
) -> ApiResult<Json<ImportOutcome>> {
    let events = body
        .events
        .into_iter()
        .map(|e| import::ImportedEvent {
            player_id: e.player_id,
            event: e.event,
        })
        .collect();
    let outcome = import::import(
        &state.services,
        &access.game,
        body.environment.unwrap_or(Environment::Production),
        events,
    )
    .await?;
    Ok(Json(outcome))
}

/// Query of the holdout comparison, its samples and an experiment's results.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EnvironmentQuery {
    /// Production (default) or sandbox: the two never mix.
    pub environment: Option<Environment>,
}

/// Average revenue per player of the treated players against the permanent holdout, since
/// launch, with the one-sided Mann-Whitney U p-value of treatment over control (tie and
/// continuity corrections) and the revenue-share eligibility conditions.
///
/// Every player of each group counts, non-payers as 0; ARPU is in USD. `uplift_pct` is
/// `null` when the holdout's ARPU is 0. An empty group gives `p_value` 1.
#[utoipa::path(get, path = "/v1/games/{game_id}/holdout-arpu", tag = "economy",
    operation_id = "get_holdout_arpu",
    params(("game_id" = Uuid, Path), EnvironmentQuery),
    responses((status = 200, description = "The holdout comparison", body = HoldoutArpu),
        AuthErrors, QueryError, NotFound, Unavailable))]
pub async fn holdout_arpu(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiQuery(q): ApiQuery<EnvironmentQuery>,
) -> ApiResult<Json<HoldoutArpu>> {
    let env = q.environment.unwrap_or(Environment::Production);
    Ok(Json(
        holdout::arpu(&state.services, &access.game, env).await?,
    ))
}

/// The exact samples behind the holdout comparison, as CSV `group,player_hash,revenue_cents`:
/// every player of both groups (`treatment` or `control`), non-payers with 0. `player_hash`
/// is an HMAC-SHA-256 of the player id under a secret of the game, so the samples identify
/// no one. Recomputing the p-value from them with
/// `scipy.stats.mannwhitneyu(treatment, control, alternative="greater", method="asymptotic")`
/// gives the report's `p_value`.
#[utoipa::path(get, path = "/v1/games/{game_id}/holdout-arpu/samples", tag = "economy",
    operation_id = "get_holdout_samples",
    params(("game_id" = Uuid, Path), EnvironmentQuery),
    responses((status = 200, description = "The samples", content_type = "text/csv", body = String),
        AuthErrors, QueryError, NotFound, Unavailable))]
pub async fn holdout_samples(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiQuery(q): ApiQuery<EnvironmentQuery>,
) -> ApiResult<Response> {
    let env = q.environment.unwrap_or(Environment::Production);
    let csv = holdout::samples_csv(&state.services, &access.game, env).await?;
    Ok((
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/csv; charset=utf-8")],
        csv,
    )
        .into_response())
}

/// The revenue-share standing of the game's production players: the five eligibility
/// conditions (`{value, pass}` each: at least 10,000 treated and 1,000 holdout players, 30
/// days live, a one-sided Mann-Whitney p below 0.05, a positive ARPU uplift in USD), the plan
/// its monthly players (distinct production players with a session in the last 30 days) put
/// it on, the studio's agreed `rate_pct` (set by the operator, read-only here) and
/// `next_bill`, the first day of the next UTC month, and the current month so far: its uplift
/// revenue, `base_fee_usd`, `revenue_share_usd` and `amount_due_usd`, their sum, and its
/// `adjustments` (the store refunds, and reversals, that arrived this month for purchases of
/// an earlier month) with `adjustments_usd` their signed sum: the lines the month's statement
/// will list, already counted in the month's figures, so not added to `amount_due_usd`. The
/// reading is live and therefore `standing: provisional`.
#[utoipa::path(get, path = "/v1/games/{game_id}/revenue-share", tag = "economy",
    operation_id = "get_revenue_share",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The revenue-share standing", body = RevenueShare),
        AuthErrors, NotFound, Unavailable))]
pub async fn revenue_share(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
) -> ApiResult<Json<RevenueShare>> {
    Ok(Json(
        billing::revenue_share(&state.services, &access.game, &access.caller.studio_id).await?,
    ))
}

/// The results of a price experiment in one environment: per variant, the players exposed
/// (shown at least one offer the experiment priced), the exposed players who bought one,
/// conversion, offers shown, purchases and revenue per exposed player.
///
/// Each variant is compared with the first (the control): the conversion difference with a
/// pooled two-sided two-proportion z-test and its 95% Wald interval; the difference in
/// revenue per exposed player with a two-sided Mann-Whitney U test (tie and continuity
/// corrections) and, for description only, a Welch 95% interval. `sample_ratio` tests the
/// exposed players of the variants with a weight against the weights (chi-square goodness of
/// fit); `mismatch` is `true` below p = 0.001, and the comparison is then not to be trusted.
/// `provisional` stays `true` until every variant with a weight has the experiment's
/// `min_sample` exposed players. Computed from per-player totals kept as the events arrive.
/// An experiment the game does not have is a 404.
#[utoipa::path(get, path = "/v1/games/{game_id}/experiments/{experiment_id}/results",
    tag = "economy", operation_id = "get_experiment_results",
    params(("game_id" = Uuid, Path), ("experiment_id" = Uuid, Path), EnvironmentQuery),
    responses((status = 200, description = "The experiment's results", body = ExperimentResults),
        AuthErrors, QueryError, NotFound, Unavailable))]
pub async fn experiment_results(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiPath((_, experiment_id)): ApiPath<(uuid::Uuid, uuid::Uuid)>,
    ApiQuery(q): ApiQuery<EnvironmentQuery>,
) -> ApiResult<Json<ExperimentResults>> {
    let env = q.environment.unwrap_or(Environment::Production);
    Ok(Json(
        experiments::results(&state.services, &access.game, env, experiment_id).await?,
    ))
}
