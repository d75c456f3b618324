//! Studio members (admin): `POST` and `GET /v1/studio/members`, and
//! `DELETE /v1/studio/members/{member_id}/sessions`, which signs a member out of every
//! dashboard session at once. The members sign in to the dashboard at `/dashboard`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use offer_domain::audit::Via;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::callers::Dashboard;
use super::extract::{ApiJson, ApiPath};
use super::openapi::{AuthErrors, BodyErrors, Conflict, NotFound, Unavailable};
use crate::auth::Role;
use crate::error::ApiResult;
use crate::service::studio::members::{self, Member, NewMember};
use crate::state::AppState;

/// Body of `POST /v1/studio/members`.
///
/// Refused with 409 when a member (of any studio) already signs in with this email.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMember {
    /// Email address, the member's sign-in name (compared without regard to case).
    #[schema(
        max_length = 254,
        pattern = r"^[^@\s\x00-\x1f\x7f-\x9f]+@[^@\s\x00-\x1f\x7f-\x9f]+\.[^@\s\x00-\x1f\x7f-\x9f]+$"
    )]
    pub email: String,
    /// Password, 10 to 256 characters; only its Argon2id hash is kept.
    #[schema(min_length = 10, max_length = 256)]
    pub password: String,
    /// viewer reads, developer writes configuration, admin also manages keys, members, the
    /// kill switch and the mode.
    #[schema(value_type = String, pattern = "^(viewer|developer|admin)$")]
    pub role: Role,
}

/// A member as listed (never the password hash).
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberInfo {
    /// Public id.
    pub member_id: Uuid,
    /// Email address (lower-cased).
    pub email: String,
    /// viewer, developer or admin.
    #[schema(value_type = String)]
    pub role: Role,
    /// When the member was added.
    pub created_at: DateTime<Utc>,
    /// Who added the member.
    pub created_by: String,
    /// When the member's sessions were last revoked.
    pub sessions_revoked_at: Option<DateTime<Utc>>,
}

impl From<Member> for MemberInfo {
    fn from(m: Member) -> Self {
        Self {
            member_id: m.member_id,
            email: m.email,
            role: m.role,
            created_at: m.created_at,
            created_by: m.created_by,
            sessions_revoked_at: m.sessions_revoked_at,
        }
    }
}

/// Every member of the caller's studio.
#[derive(Debug, Serialize, ToSchema)]
pub struct MemberList {
    /// Ordered by email.
    pub members: Vec<MemberInfo>,
}

/// Adds a member to the caller's studio (admin).
#[utoipa::path(post, path = "/v1/studio/members", tag = "members", request_body = CreateMember,
    responses(
        (status = 201, description = "The member, who can now sign in at /dashboard", body = MemberInfo),
        AuthErrors, BodyErrors, Conflict, Unavailable))]
pub async fn create_member(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiJson(body): ApiJson<CreateMember>,
) -> ApiResult<(StatusCode, Json<MemberInfo>)> {
    caller.require(Role::Admin)?;
    let member = members::add(
        state.services.store.as_ref(),
        &caller.studio_id,
        NewMember {
            email: body.email,
            password: body.password,
            role: body.role,
        },
        &caller.changed_by(Via::Rest),
    )
    .await?;
    Ok((StatusCode::CREATED, Json(member.into())))
}

/// Lists the members of the caller's studio (admin).
#[utoipa::path(get, path = "/v1/studio/members", tag = "members",
    responses((status = 200, description = "The studio's members", body = MemberList),
        AuthErrors, Unavailable))]
pub async fn list_members(
    State(state): State<AppState>,
    caller: Dashboard,
) -> ApiResult<Json<MemberList>> {
    caller.require(Role::Admin)?;
    let list = members::list(state.services.store.as_ref(), &caller.studio_id).await?;
    Ok(Json(MemberList {
        members: list.into_iter().map(MemberInfo::from).collect(),
    }))
}

/// Signs a member of the caller's studio out of every dashboard session (admin).
#[utoipa::path(delete, path = "/v1/studio/members/{member_id}/sessions", tag = "members",
    params(("member_id" = Uuid, Path)),
    responses((status = 204, description = "Every session the member had is refused from now on"),
        AuthErrors, NotFound, Unavailable))]
pub async fn revoke_member_sessions(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath(member_id): ApiPath<Uuid>,
) -> ApiResult<StatusCode> {
    caller.require(Role::Admin)?;
    members::revoke_sessions(
        state.services.store.as_ref(),
        &caller.changed_by(Via::Rest),
        &caller.studio_id,
        member_id,
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
