//! How many events a game refused over a period, by refusal code: what a studio reads to see
//! what its players' clients sent that the engine turned away.

use axum::Json;
use axum::extract::State;
use offer_domain::environment::Environment;
use serde::Deserialize;
use utoipa::IntoParams;

use super::access::{GameAccess, Viewer};
use super::extract::ApiQuery;
use super::openapi::{AuthErrors, Invalid, NotFound, QueryError, Unavailable};
use crate::error::ApiResult;
use crate::service::ServiceError;
use crate::service::play::refused_events::{self, RefusedEvents};
use crate::state::AppState;

/// Most days a report covers.
const MAX_DAYS: i64 = 90;

/// The query of `GET .../economy/refused-events`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RefusedQuery {
    /// Days ending today (UTC), 1 to 90 (default 7); outside that range the answer is 422.
    #[param(minimum = 1, maximum = 90)]
    pub days: Option<i64>,
    /// Production (default) or sandbox: the two never mix.
    pub environment: Option<Environment>,
}

/// The events of the game refused one by one over the last `days` (a spend above the
/// balance, an amount above a currency's `max_per_event`, a receipt that does not verify,
/// a reused `tx_id`, ...), in total and by refusal code, every node's counts added up. A
/// refusal is counted within two seconds. A batch refused whole (a malformed body, a bad
/// player token) is not an event refused.
#[utoipa::path(get, path = "/v1/games/{game_id}/economy/refused-events", tag = "economy",
    operation_id = "get_refused_events",
    params(("game_id" = Uuid, Path), RefusedQuery),
    responses((status = 200, description = "The refused events", body = RefusedEvents),
        AuthErrors, QueryError, Invalid, NotFound, Unavailable))]
pub async fn refused_events(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiQuery(q): ApiQuery<RefusedQuery>,
) -> ApiResult<Json<RefusedEvents>> {
    let days = q.days.unwrap_or(7);
    let days = u32::try_from(days)
        .ok()
        .filter(|d| (1..=MAX_DAYS as u32).contains(d))
        .ok_or_else(|| {
            ServiceError::invalid(
                "days",
                format!("days must be between 1 and {MAX_DAYS}, not {days}"),
            )
        })?;
    let env = q.environment.unwrap_or(Environment::Production);
    Ok(Json(
        refused_events::over(&state.services, access.game_id(), env, days).await?,
    ))
}
