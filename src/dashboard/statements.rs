//! The monthly statement's download: a closed month's statement as CSV, as the REST
//! statement gives it (admin), linked from the economy page's revenue-share section.

use axum::extract::State;
use axum::response::Response;
use serde::Deserialize;

use super::access::{Admin, DashGame};
use super::extract::PageQuery;
use super::failure::PageError;
use crate::http::statements;
use crate::service::economy::billing;
use crate::state::AppState;

/// The download's query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatementQuery {
    month: String,
}

/// `GET /dashboard/games/{game_id}/economy/statement.csv?month=YYYY-MM`.
pub async fn csv(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    PageQuery(q): PageQuery<StatementQuery>,
) -> Result<Response, PageError> {
    let decision = billing::statement(
        &state.services,
        &at.game,
        &at.user.caller.studio_id,
        &q.month,
    )
    .await?;
    Ok(statements::csv_download(at.game_id(), &decision))
}
