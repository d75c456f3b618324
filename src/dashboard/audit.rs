//! The audit trail of one game (admin): who changed what and when, newest first, filtered by
//! the action and the time, a page at a time, as `GET /v1/studio/audit` gives it; the page
//! is drawn by [`views::audit`](super::views::audit).

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use chrono::{NaiveDate, TimeZone, Utc};
use serde::Deserialize;

use super::access::{Admin, DashGame};
use super::extract::PageQuery;
use super::failure::PageError;
use super::layout::Tab;
use super::views::audit as views;
use crate::service::audit::trail::{self, Filter};
use crate::state::AppState;

/// The page's filters.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// Only records made on or after this day (UTC).
    #[serde(default, deserialize_with = "empty_is_none")]
    since: Option<NaiveDate>,
    /// Only actions starting with this (`kill_switch`, `item`, `key.revoke`, ...).
    #[serde(default)]
    action: Option<String>,
    /// The next page's cursor.
    #[serde(default)]
    cursor: Option<String>,
}

/// An empty form field is no filter.
fn empty_is_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<NaiveDate>, D::Error> {
    let text: Option<String> = Option::deserialize(d)?;
    match text.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(day) => day.parse().map(Some).map_err(serde::de::Error::custom),
    }
}

/// `GET /dashboard/games/{game_id}/audit`.
pub async fn page(
    at: DashGame<Admin>,
    State(state): State<AppState>,
    PageQuery(q): PageQuery<AuditQuery>,
) -> Result<Response, PageError> {
    let game_id = at.game_id();
    let filter = Filter {
        game_id: Some(game_id),
        since: q
            .since
            .and_then(|day| day.and_hms_opt(0, 0, 0))
            .map(|t| Utc.from_utc_datetime(&t)),
        cursor: q.cursor.clone(),
    };
    let page = trail::read(
        &state.services,
        &at.user.caller.studio_id,
        &[game_id],
        &filter,
    )
    .await?;
    let action = q.action.as_deref().map(str::trim).unwrap_or_default();
    let shown: Vec<_> = page
        .entries
        .into_iter()
        .filter(|e| e.action.starts_with(action))
        .collect();
    let filters = views::Filters {
        since: q.since,
        action,
    };
    let body = views::page(game_id, &filters, &shown, page.next_cursor.as_deref());
    Ok(at.page(StatusCode::OK, "Audit trail", Tab::Audit, body))
}
