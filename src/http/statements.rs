//! The monthly statement of a game: what a closed month bills (the plan's base fee, the
//! revenue share on measured uplift, their sum) and the refunds of earlier months' purchases
//! it already counts, as JSON or as CSV for a studio's accounts.

use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use offer_domain::revenue_share::MonthDecision;
use offer_domain::statement;
use serde::Deserialize;
use utoipa::IntoParams;

use super::access::{Admin, GameAccess};
use super::extract::ApiQuery;
use super::openapi::{AuthErrors, Invalid, NotFound, QueryError, Unavailable};
use crate::error::ApiResult;
use crate::service::economy::billing;
use crate::state::AppState;

/// The query of `GET .../statements`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct StatementQuery {
    /// The closed UTC month, `YYYY-MM`.
    #[param(pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])$", example = "2026-10")]
    pub month: String,
    /// `json` (the default) or `csv`.
    pub format: Option<StatementFormat>,
}

/// How a statement is written.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StatementFormat {
    /// The month's decision as JSON.
    Json,
    /// One `field,value` line per figure, then `adjustments_usd` and one line per
    /// adjustment.
    Csv,
}

/// A closed month's statement (admin): the plan the month's monthly players put the game on,
/// its `base_fee_usd`, whether the month was eligible, the uplift revenue, the studio's rate,
/// `revenue_share_usd` (0 when not eligible) and `amount_due_usd`, their sum. `adjustments`
/// lists the store refunds (and reversals) that arrived in the month for purchases of an
/// earlier month, with `adjustments_usd` their signed sum: already counted in the month's
/// figures, so not added to `amount_due_usd`. A month that is not `YYYY-MM` is a 422; a month
/// not closed yet, or before the game launched, a 404.
#[utoipa::path(get, path = "/v1/games/{game_id}/statements", tag = "economy",
    operation_id = "get_statement",
    params(("game_id" = uuid::Uuid, Path), StatementQuery),
    responses(
        (status = 200, description = "The month's statement", content(
            (MonthDecision = "application/json"),
            (String = "text/csv"))),
        AuthErrors, QueryError, Invalid, NotFound, Unavailable))]
pub async fn get_statement(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiQuery(q): ApiQuery<StatementQuery>,
) -> ApiResult<Response> {
    let decision = billing::statement(
        &state.services,
        &access.game,
        &access.caller.studio_id,
        &q.month,
    )
    .await?;
    Ok(match q.format.unwrap_or(StatementFormat::Json) {
        StatementFormat::Json => Json(decision).into_response(),
        StatementFormat::Csv => csv_download(access.game_id(), &decision),
    })
}

/// The statement as a CSV download named after the game and the month.
pub fn csv_download(game_id: uuid::Uuid, decision: &MonthDecision) -> Response {
    let game_id = game_id.to_string();
    let disposition = format!(
        "attachment; filename=\"statement-{game_id}-{}.csv\"",
        decision.month
    );
    (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_owned()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        statement::csv(&game_id, decision),
    )
        .into_response()
}
