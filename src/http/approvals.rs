//! Approval endpoints: list, read, simulate, approve, reject (a decided approval is a 409;
//! approving a custom page that no longer validates is a 422 and decides nothing).

use axum::Json;
use axum::extract::State;
use offer_domain::audit::Via;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::access::{GameAccess, Viewer};
use super::callers::Dashboard;
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::openapi::{
    AuthErrors, BodyErrors, Conflict, NotFound, PageRefused, QueryError, Unavailable,
};
use crate::auth::Role;
use crate::error::ApiResult;
use offer_domain::approval::{Approval, ApprovalStatus, Verdict};
use offer_domain::simulation::SimulationResult;

use crate::service::ServiceError;
use crate::service::approval::approvals;
use crate::service::approval::simulation;
use crate::state::AppState;

/// Query of the approval list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ApprovalQuery {
    /// Only this status.
    pub status: Option<ApprovalStatus>,
}

/// A list of approvals.
#[derive(Debug, Serialize, ToSchema)]
pub struct ApprovalList {
    /// Newest first.
    pub approvals: Vec<Approval>,
}

/// Body of a rejection.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RejectBody {
    /// Why, at most 1000 characters.
    #[serde(default)]
    #[schema(max_length = 1000)]
    pub reason: Option<String>,
}

/// Lists a game's approvals.
#[utoipa::path(get, path = "/v1/games/{game_id}/approvals", tag = "approvals",
    operation_id = "list_approvals",
    params(("game_id" = Uuid, Path), ApprovalQuery),
    responses((status = 200, description = "The approvals, newest first", body = ApprovalList),
        AuthErrors, QueryError, NotFound, Unavailable))]
pub async fn list(
    State(state): State<AppState>,
    access: GameAccess<Viewer>,
    ApiQuery(q): ApiQuery<ApprovalQuery>,
) -> ApiResult<Json<ApprovalList>> {
    let game_id = access.game_id();
    Ok(Json(ApprovalList {
        approvals: approvals::list(&state.services, game_id, q.status).await?,
    }))
}

/// Reads an approval.
#[utoipa::path(get, path = "/v1/approvals/{approval_id}", tag = "approvals",
    operation_id = "get_approval",
    params(("approval_id" = Uuid, Path)),
    responses(
        (status = 200, description = "The approval", body = Approval, links(
            ("Approve" = (operation_id = "approve",
                parameters(("approval_id" = "$response.body#/approval_id")),
                description = "Approve it")),
            ("Reject" = (operation_id = "reject",
                parameters(("approval_id" = "$response.body#/approval_id")),
                description = "Reject it")),
        )),
        AuthErrors, NotFound, Unavailable))]
pub async fn get(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(approval_id): ApiPath<Uuid>,
) -> ApiResult<Json<Approval>> {
    Ok(Json(
        approvals::get_for_studio(&state.services, &caller.studio_id, approval_id)
            .await?
            .0,
    ))
}

/// Approves (developer): the definition serves at once on every node, or the custom page's
/// version is published. A custom page is validated again first, against the catalogue of
/// now: a version that no longer passes (an item it binds deleted since the request, say) is
/// a 422 `page_invalid` with the validator's answer, and the approval stays pending. An
/// approval is decided once: a decided one is a 409.
#[utoipa::path(post, path = "/v1/approvals/{approval_id}/approve", tag = "approvals",
    params(("approval_id" = Uuid, Path)),
    responses((status = 200, description = "The approved record", body = Approval),
        AuthErrors, NotFound, Conflict, PageRefused, Unavailable))]
pub async fn approve(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(approval_id): ApiPath<Uuid>,
) -> ApiResult<Json<Approval>> {
    decide(&state, &caller, approval_id, Verdict::Approve).await
}

/// Rejects (developer): the definition never serves. An approval is decided once: a decided
/// one is a 409.
#[utoipa::path(post, path = "/v1/approvals/{approval_id}/reject", tag = "approvals",
    params(("approval_id" = Uuid, Path)), request_body = RejectBody,
    responses((status = 200, description = "The rejected record", body = Approval),
        AuthErrors, BodyErrors, NotFound, Conflict, Unavailable))]
pub async fn reject(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(approval_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<RejectBody>,
) -> ApiResult<Json<Approval>> {
    let verdict = Verdict::Reject {
        reason: body.reason,
    };
    decide(&state, &caller, approval_id, verdict).await
}

/// Query of a simulation.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SimulateQuery {
    /// Seed of the trials' random numbers, to reproduce an earlier result (its `seed`);
    /// a fresh one when absent.
    pub seed: Option<u64>,
}

/// Simulates a pending offer approval (developer): 10,000 Monte Carlo trials of the offer
/// against the production players active in the last 7 days. The result is stored on the
/// approval (`simulation`) and returned. Only a pending offer approval is simulated (409
/// otherwise); simulating never blocks a decision.
#[utoipa::path(post, path = "/v1/approvals/{approval_id}/simulate", tag = "approvals",
    params(("approval_id" = Uuid, Path), SimulateQuery),
    responses((status = 200, description = "The simulation result", body = SimulationResult),
        AuthErrors, QueryError, NotFound, Conflict, Unavailable))]
pub async fn simulate(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(approval_id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<SimulateQuery>,
) -> ApiResult<Json<SimulationResult>> {
    let (approval, _, handle) =
        approvals::get_for_studio(&state.services, &caller.studio_id, approval_id).await?;
    caller.require(Role::Developer)?;
    let simulated = simulation::simulate(&state.services, &handle, &approval, q.seed).await?;
    simulated
        .simulation
        .map(Json)
        .ok_or_else(|| ServiceError::Internal("the stored simulation vanished".into()).into())
}

/// Decides an approval of the caller's studio (developer or above).
async fn decide(
    state: &AppState,
    caller: &Dashboard,
    approval_id: Uuid,
    verdict: Verdict,
) -> ApiResult<Json<Approval>> {
    let (approval, bytes, handle) =
        approvals::get_for_studio(&state.services, &caller.studio_id, approval_id).await?;
    caller.require(Role::Developer)?;
    let decided = approvals::decide(
        &state.services,
        &handle,
        approval,
        bytes,
        verdict,
        &caller.changed_by(Via::Rest),
    )
    .await?;
    Ok(Json(decided))
}
