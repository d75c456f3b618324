//! Approval endpoints: list, read, approve, reject (a decided approval is a 409).

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::extract::{ApiJson, ApiPath, ApiQuery};
use crate::auth::{Dashboard, Role};
use crate::error::{ApiResult, ErrorBody};
use crate::repo::approvals::{self, Approval, ApprovalStatus};
use crate::repo::games;
use crate::state::AppState;

/// Query of the approval list.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
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
    /// Why.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Lists a game's approvals.
#[utoipa::path(get, path = "/v1/games/{game_id}/approvals", tag = "approvals",
    params(("game_id" = Uuid, Path), ApprovalQuery),
    responses((status = 200, body = ApprovalList), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn list(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(game_id): ApiPath<Uuid>,
    ApiQuery(q): ApiQuery<ApprovalQuery>,
) -> ApiResult<Json<ApprovalList>> {
    games::for_studio(&state, &caller.studio_id, game_id).await?;
    Ok(Json(ApprovalList {
        approvals: approvals::list(&state, game_id, q.status).await?,
    }))
}

/// One approval of the caller's studio (another studio's is a 404).
async fn owned(
    state: &AppState,
    caller: &Dashboard,
    approval_id: Uuid,
) -> ApiResult<(Approval, Vec<u8>, offer_actors::GameHandle)> {
    let (approval, bytes) = approvals::get(state, approval_id).await?;
    let handle = games::for_studio(state, &caller.studio_id, approval.game_id)
        .await
        .map_err(|e| match e {
            crate::error::ApiError::NotFound(_) => crate::error::ApiError::NotFound("approval"),
            other => other,
        })?;
    Ok((approval, bytes, handle))
}

/// Reads an approval.
#[utoipa::path(get, path = "/v1/approvals/{approval_id}", tag = "approvals",
    params(("approval_id" = Uuid, Path)),
    responses((status = 200, body = Approval), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn get(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(approval_id): ApiPath<Uuid>,
) -> ApiResult<Json<Approval>> {
    Ok(Json(owned(&state, &caller, approval_id).await?.0))
}

/// Approves: the definition serves at once on every node.
#[utoipa::path(post, path = "/v1/approvals/{approval_id}/approve", tag = "approvals",
    params(("approval_id" = Uuid, Path)),
    responses((status = 200, body = Approval), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn approve(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(approval_id): ApiPath<Uuid>,
) -> ApiResult<Json<Approval>> {
    let (approval, bytes, handle) = owned(&state, &caller, approval_id).await?;
    caller.require(Role::Developer)?;
    Ok(Json(
        approvals::decide(&state, &handle, approval, bytes, true, &caller.sub, None).await?,
    ))
}

/// Rejects: the definition never serves.
#[utoipa::path(post, path = "/v1/approvals/{approval_id}/reject", tag = "approvals",
    params(("approval_id" = Uuid, Path)), request_body = RejectBody,
    responses((status = 200, body = Approval), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn reject(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(approval_id): ApiPath<Uuid>,
    ApiJson(body): ApiJson<RejectBody>,
) -> ApiResult<Json<Approval>> {
    let (approval, bytes, handle) = owned(&state, &caller, approval_id).await?;
    caller.require(Role::Developer)?;
    if body
        .reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > 1000)
    {
        return Err(crate::error::ApiError::invalid(
            "reason",
            "at most 1000 characters",
        ));
    }
    Ok(Json(
        approvals::decide(
            &state,
            &handle,
            approval,
            bytes,
            false,
            &caller.sub,
            body.reason,
        )
        .await?,
    ))
}
