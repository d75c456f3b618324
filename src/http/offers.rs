//! Dashboard views of the engine's decisions: one decision with its trace, the shadow
//! decisions of a game, and what its L1 learner has learned.

use axum::Json;
use axum::extract::State;
use uuid::Uuid;

use super::access::{GameAccess, Viewer};
use super::extract::ApiPath;
use super::openapi::{AuthErrors, NotFound, Unavailable};
use crate::error::ApiResult;
use crate::service::play::decision_log::{DecisionRecord, ShadowReport};
use crate::service::play::model::{self, ModelReport};
use crate::service::workers::decisions;
use crate::state::AppState;

/// Most recent shadow decisions returned.
const SHADOW_RECENT: usize = 50;

/// A decision (an offer or a no-offer answer) with the trace of why each higher level
/// passed. Any node shows any decision for `offers.decision_ttl_s` (the deciding node at
/// once, the others a moment later, once it reached the store).
#[utoipa::path(get, path = "/v1/games/{game_id}/offers/{offer_id}", tag = "offers",
    params(("game_id" = Uuid, Path), ("offer_id" = Uuid, Path)),
    responses((status = 200, description = "The decision and its trace", body = DecisionRecord),
        AuthErrors, NotFound, Unavailable))]
pub async fn get_decision(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiPath((_, offer_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(
        decisions::find(&state.services, access.game_id(), offer_id).await?,
    ))
}

/// Shadow decisions: L1/L2 picks computed but kept silent, counted and listed.
#[utoipa::path(get, path = "/v1/games/{game_id}/shadow-decisions", tag = "offers",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "Shadow counts and the most recent decisions", body = ShadowReport),
        AuthErrors, NotFound, Unavailable))]
pub async fn shadow(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
) -> ApiResult<Json<ShadowReport>> {
    let game_id = access.game_id();
    Ok(Json(
        state
            .services
            .decisions
            .shadow_report(game_id, SHADOW_RECENT),
    ))
}

/// What the AI level's learner has learned, in words a studio can read: for each trigger
/// (judged over this node's latest decisions there) the arm it would pick now, its estimated
/// conversion with a 95% interval and the evidence behind it, the features that weigh most,
/// and how much it remembers. Every node serves the learner of every node's offers, at most
/// one `offers.model_sync_ms` behind.
#[utoipa::path(get, path = "/v1/games/{game_id}/model", tag = "offers",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "What the learner has learned", body = ModelReport),
        AuthErrors, NotFound, Unavailable))]
pub async fn model(State(state): State<AppState>, access: GameAccess<Viewer>) -> Json<ModelReport> {
    Json(model::report(&state.services, &access.game))
}
