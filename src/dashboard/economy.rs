//! Economy: the daily faucet/sink ratio of the production economy as a line chart with the
//! genre's healthy band shaded, the quadrant, each currency's earned and spent units, what
//! the per-player day caps left out of them and the events refused by code; the revenue
//! counted, refunded and kept unverified over the same days; the holdout comparison (ARPU of both groups, uplift, p-value), the five revenue-share
//! conditions with pass or fail, the plan and the next bill, and the link to the samples
//! export. The figures are the economy, holdout and billing services' (viewer); the page is
//! drawn by [`views::economy`](super::views::economy).

use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use offer_domain::environment::Environment;
use serde::Deserialize;

use super::access::{DashGame, Viewer};
use super::extract::PageQuery;
use super::failure::PageError;
use super::layout::Tab;
use super::views::economy as views;
use crate::service::economy::{billing, health, holdout, revenue};
use crate::service::play::refused_events;
use crate::state::AppState;

/// Days the chart shows unless the query asks for another number (1 to 90).
const DEFAULT_DAYS: i64 = 30;

/// The page's query.
#[derive(Debug, Deserialize)]
pub struct EconomyQuery {
    #[serde(default)]
    days: Option<i64>,
}

/// `GET /dashboard/games/{game_id}/economy`.
pub async fn page(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
    PageQuery(q): PageQuery<EconomyQuery>,
) -> Result<Response, PageError> {
    let handle = &at.game;
    let days = q.days.unwrap_or(DEFAULT_DAYS).clamp(1, 90);
    let report =
        health::fsr_report(&state.services, handle, Environment::Production, days, None).await?;
    let arpu = holdout::arpu(&state.services, handle, Environment::Production).await?;
    let revenue = revenue::over(&state.services, handle, Environment::Production, days).await?;
    let share = billing::revenue_share(&state.services, handle, &at.user.caller.studio_id).await?;
    let refused = refused_events::over(
        &state.services,
        at.game_id(),
        Environment::Production,
        u32::try_from(days).unwrap_or(1),
    )
    .await?;
    let body = views::page(
        at.game_id(),
        days,
        &views::Figures {
            report: &report,
            arpu: &arpu,
            revenue: &revenue,
            share: &share,
            refused: &refused,
        },
    );
    Ok(at.page(StatusCode::OK, "Economy", Tab::Economy, body))
}

/// `GET /dashboard/games/{game_id}/economy/samples.csv`: the samples behind the holdout
/// comparison, as the REST export gives them.
pub async fn samples(
    at: DashGame<Viewer>,
    State(state): State<AppState>,
) -> Result<Response, PageError> {
    let csv = holdout::samples_csv(&state.services, &at.game, Environment::Production).await?;
    Ok((
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8"),
            (
                header::CONTENT_DISPOSITION,
                "attachment; filename=\"holdout-samples.csv\"",
            ),
        ],
        csv,
    )
        .into_response())
}
