//! Dashboard views of the engine's decisions: one decision with its trace, and the shadow
//! decisions of a game.

use axum::Json;
use axum::extract::State;
use uuid::Uuid;

use super::extract::ApiPath;
use crate::auth::Dashboard;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::offers::DecisionRecord;
use crate::offers::log::ShadowReport;
use crate::repo::games;
use crate::state::AppState;

/// Most recent shadow decisions returned.
const SHADOW_RECENT: usize = 50;

/// A decision (an offer or a no-offer answer) with the trace of why each higher level
/// passed. Decisions are kept on the node that made them, for a bounded time.
#[utoipa::path(get, path = "/v1/games/{game_id}/offers/{offer_id}", tag = "offers",
    params(("game_id" = Uuid, Path), ("offer_id" = Uuid, Path)),
    responses((status = 200, body = DecisionRecord), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_decision(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath((game_id, offer_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<DecisionRecord>> {
    games::for_studio(&state, &caller.studio_id, game_id).await?;
    state
        .decisions
        .get(&offer_id)
        .filter(|r| r.game_id == game_id)
        .map(|r| Json(DecisionRecord::clone(&r)))
        .ok_or(ApiError::NotFound("offer"))
}

/// Shadow decisions: L1/L2 picks computed but kept silent, counted and listed.
#[utoipa::path(get, path = "/v1/games/{game_id}/shadow-decisions", tag = "offers",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = ShadowReport), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn shadow(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
) -> ApiResult<Json<ShadowReport>> {
    games::for_studio(&state, &caller.studio_id, game_id).await?;
    Ok(Json(state.decisions.shadow_report(game_id, SHADOW_RECENT)))
}
