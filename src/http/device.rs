//! Device sign-in of the authoring tool (the shape of RFC 8628): start, approve or deny in
//! the dashboard, poll for the key. Starting and polling take no credential (the tool has
//! none yet) and are limited per client IP; approving and denying take a dashboard token
//! (developer or above) and every attempt counts against the user's and the node's limits
//! ([`crate::throttle::device`]), so that user codes cannot be guessed.

use offer_domain::audit::Via;

use axum::Json;
use axum::extract::{ConnectInfo, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::callers::Dashboard;
use super::extract::ApiJson;
use super::keys::AuthoringKeyIssued;
use super::openapi::{
    AuthErrors, BodyErrors, Conflict, NotFound, RateLimited, SignInPollErrors, Unavailable,
};
use crate::auth::Role;
use crate::error::ApiResult;
use crate::server::Peer;
use crate::service::access;
use crate::service::authoring::device::{self, Decider};
use crate::state::AppState;

/// A started sign-in (RFC 8628 section 3.2).
#[derive(Debug, Serialize, ToSchema)]
pub struct DeviceAuthorization {
    /// The secret the tool polls `POST /v1/auth/device/token` with; never shown to people.
    pub device_code: String,
    /// The code a person enters in the dashboard: 8 letters as `XXXX-XXXX`.
    #[schema(example = "BDFH-JKLM")]
    pub user_code: String,
    /// The dashboard page where the person enters it.
    pub verification_uri: String,
    /// The least seconds between two polls.
    pub interval: u32,
    /// Seconds the user code can be approved, and the tool can poll.
    pub expires_in: u32,
}

/// Body of `POST /v1/auth/device/token`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenRequest {
    /// The `device_code` of the sign-in.
    pub device_code: String,
}

/// Body of `POST /v1/auth/device/approve`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApproveBody {
    /// The code the tool shows, in either case, with or without the dash.
    #[schema(
        pattern = "^[BCDFGHJKLMNPQRSTVWXZbcdfghjklmnpqrstvwxz]{4}-?[BCDFGHJKLMNPQRSTVWXZbcdfghjklmnpqrstvwxz]{4}$"
    )]
    pub user_code: String,
    /// The game of the caller's studio the authoring key will work for.
    pub game_id: Uuid,
}

/// Body of `POST /v1/auth/device/deny`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DenyBody {
    /// The code the tool shows, in either case, with or without the dash.
    #[schema(
        pattern = "^[BCDFGHJKLMNPQRSTVWXZbcdfghjklmnpqrstvwxz]{4}-?[BCDFGHJKLMNPQRSTVWXZbcdfghjklmnpqrstvwxz]{4}$"
    )]
    pub user_code: String,
}

/// Starts a device sign-in. Open: the tool has no credential yet. Limited per client IP.
#[utoipa::path(post, path = "/v1/auth/device", tag = "credentials", security(()),
    operation_id = "start_device_sign_in",
    responses(
        (status = 200, description = "The sign-in: show `user_code` and `verification_uri`, then poll with `device_code`", body = DeviceAuthorization, links(
            ("PollDeviceSignIn" = (operation_id = "poll_device_sign_in",
                request_body = json!({"device_code": "$response.body#/device_code"}),
                description = "Poll for the authoring key")),
            ("ApproveDeviceSignIn" = (operation_id = "approve_device_sign_in",
                request_body = json!({"user_code": "$response.body#/user_code"}),
                description = "Approve the sign-in in the dashboard")),
            ("DenyDeviceSignIn" = (operation_id = "deny_device_sign_in",
                request_body = json!({"user_code": "$response.body#/user_code"}),
                description = "Deny the sign-in in the dashboard")),
        )),
        RateLimited, Unavailable))]
pub async fn start(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<Peer>,
) -> ApiResult<Json<DeviceAuthorization>> {
    state.throttle.start(peer.remote.ip())?;
    let started = device::start(&state.services).await?;
    Ok(Json(DeviceAuthorization {
        device_code: started.device_code,
        user_code: started.user_code,
        verification_uri: started.verification_uri,
        interval: started.interval,
        expires_in: started.expires_in,
    }))
}

/// Polls a device sign-in for its authoring key. Open: the device code is the credential.
/// Once approved, the first poll gets a new authoring key of the approved game (valid for
/// `auth.authoring_key_ttl_days`, recording who approved it) and every later poll
/// `expired_token`: the key is handed out once. Limited per client IP.
#[utoipa::path(post, path = "/v1/auth/device/token", tag = "credentials", security(()),
    operation_id = "poll_device_sign_in",
    request_body = TokenRequest,
    responses(
        (status = 200, description = "The authoring key, handed out this once", body = AuthoringKeyIssued),
        SignInPollErrors, RateLimited, Unavailable))]
pub async fn token(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<Peer>,
    ApiJson(body): ApiJson<TokenRequest>,
) -> ApiResult<Json<AuthoringKeyIssued>> {
    state.throttle.poll(peer.remote.ip())?;
    let key = device::redeem(&state.services, &state.auth, &body.device_code)
        .await?
        .map_err(crate::service::ServiceError::SignIn)?;
    Ok(Json(AuthoringKeyIssued {
        key_id: key.record.key_id,
        authoring_key: key.token,
        expires_at: key.expires_at,
    }))
}

/// Approves a device sign-in for a game of the caller's studio (developer): the tool's next
/// poll gets an authoring key of that game. A user code is decided once (409 after); an
/// unknown or expired one is a 404. Every attempt counts against the rate limits.
#[utoipa::path(post, path = "/v1/auth/device/approve", tag = "credentials",
    operation_id = "approve_device_sign_in",
    request_body = ApproveBody,
    responses(
        (status = 204, description = "Approved"),
        AuthErrors, BodyErrors, NotFound, Conflict, RateLimited, Unavailable))]
pub async fn approve(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiJson(body): ApiJson<ApproveBody>,
) -> ApiResult<StatusCode> {
    state.throttle.attempt(&caller.studio_id, &caller.sub)?;
    let game = access::for_studio(&state.services, &caller.studio_id, body.game_id).await?;
    caller.require(Role::Developer)?;
    device::approve(&state.services, decider(&caller), &body.user_code, &game).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Denies a device sign-in (developer): the tool's polls get `access_denied`. A user code is
/// decided once (409 after); an unknown or expired one is a 404. Every attempt counts
/// against the rate limits.
#[utoipa::path(post, path = "/v1/auth/device/deny", tag = "credentials",
    operation_id = "deny_device_sign_in",
    request_body = DenyBody,
    responses(
        (status = 204, description = "Denied"),
        AuthErrors, BodyErrors, NotFound, Conflict, RateLimited, Unavailable))]
pub async fn deny(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiJson(body): ApiJson<DenyBody>,
) -> ApiResult<StatusCode> {
    state.throttle.attempt(&caller.studio_id, &caller.sub)?;
    caller.require(Role::Developer)?;
    device::deny(&state.services, decider(&caller), &body.user_code).await?;
    Ok(StatusCode::NO_CONTENT)
}

fn decider(caller: &Dashboard) -> Decider<'_> {
    Decider {
        studio_id: &caller.studio_id,
        sub: &caller.sub,
        via: Via::Rest,
    }
}
