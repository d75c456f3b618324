//! Credential issuance and revocation: SDK keys and authoring keys of a game (admin).

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use offer_domain::audit::Via;
use offer_domain::environment::Environment;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::access::{Admin, GameAccess};
use super::callers::Dashboard;
use super::extract::{ApiJson, ApiPath};
use super::openapi::{AuthErrors, BodyErrors, NotFound, Unavailable};
use crate::auth::Role;
use crate::error::ApiResult;
use crate::service::access;
use crate::service::studio::keys::{IssuedKey, KeyKind, KeyRecord};
use crate::state::AppState;

/// Body of `POST .../sdk-keys`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewSdkKey {
    /// `production` (a live key) or `sandbox` (a test key).
    pub environment: Environment,
}

/// A new SDK key; `api_key` is shown once and never again.
#[derive(Debug, Serialize, ToSchema)]
pub struct SdkKeyIssued {
    /// Id used to revoke it.
    pub key_id: Uuid,
    /// The key itself.
    pub api_key: String,
    /// Its environment.
    pub environment: Environment,
    /// Issue time.
    pub created_at: DateTime<Utc>,
}

/// A new authoring key; shown once.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuthoringKeyIssued {
    /// Id used to revoke it.
    pub key_id: Uuid,
    /// The key itself.
    pub authoring_key: String,
    /// End of its 90 days.
    pub expires_at: DateTime<Utc>,
}

/// A key as listed (never the key itself).
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyInfo {
    /// Id.
    pub key_id: Uuid,
    /// `sdk` or `authoring`.
    pub kind: String,
    /// SDK key environment.
    pub environment: Option<String>,
    /// Issue time.
    pub created_at: DateTime<Utc>,
    /// Expiry.
    pub expires_at: Option<DateTime<Utc>>,
    /// Revocation time.
    pub revoked_at: Option<DateTime<Utc>>,
    /// The dashboard user who issued it, or approved the device sign-in that did (absent on
    /// keys issued before this was kept).
    pub issued_by: Option<String>,
}

impl From<KeyRecord> for KeyInfo {
    fn from(k: KeyRecord) -> Self {
        Self {
            key_id: k.key_id,
            kind: match k.kind {
                KeyKind::Sdk(_) => "sdk".into(),
                KeyKind::Authoring => "authoring".into(),
            },
            environment: match k.kind {
                KeyKind::Sdk(Environment::Production) => Some("production".into()),
                KeyKind::Sdk(Environment::Sandbox) => Some("sandbox".into()),
                KeyKind::Authoring => None,
            },
            created_at: k.created_at,
            expires_at: k.expires_at,
            revoked_at: k.revoked_at,
            issued_by: k.issued_by,
        }
    }
}

/// The keys of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct KeyList {
    /// Every key, revoked ones included.
    pub keys: Vec<KeyInfo>,
}

/// Issues an SDK key (admin).
#[utoipa::path(post, path = "/v1/games/{game_id}/sdk-keys", tag = "credentials",
    params(("game_id" = Uuid, Path)), request_body = NewSdkKey,
    responses(
        (status = 201, description = "The new key, shown this once", body = SdkKeyIssued, links(
            ("RevokeSdkKey" = (operation_id = "revoke_sdk_key",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("key_id" = "$response.body#/key_id")),
                description = "Revoke the key just issued")),
        )),
        AuthErrors, BodyErrors, NotFound, Unavailable))]
pub async fn issue_sdk_key(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
    ApiJson(body): ApiJson<NewSdkKey>,
) -> ApiResult<(StatusCode, Json<SdkKeyIssued>)> {
    let caller = &access.caller;
    let IssuedKey { token, record } = state
        .auth
        .issue(
            access.game_id(),
            &caller.studio_id,
            &caller.changed_by(Via::Rest),
            KeyKind::Sdk(body.environment),
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(SdkKeyIssued {
            key_id: record.key_id,
            api_key: token,
            environment: body.environment,
            created_at: record.created_at,
        }),
    ))
}

/// Issues an authoring key valid for `auth.authoring_key_ttl_days` (admin).
#[utoipa::path(post, path = "/v1/games/{game_id}/authoring-keys", tag = "credentials",
    params(("game_id" = Uuid, Path)),
    responses(
        (status = 201, description = "The new key, shown this once", body = AuthoringKeyIssued, links(
            ("RevokeAuthoringKey" = (operation_id = "revoke_authoring_key",
                parameters(
                    ("game_id" = "$request.path.game_id"),
                    ("key_id" = "$response.body#/key_id")),
                description = "Revoke the key just issued")),
        )),
        AuthErrors, NotFound, Unavailable))]
pub async fn issue_authoring_key(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
) -> ApiResult<(StatusCode, Json<AuthoringKeyIssued>)> {
    let caller = &access.caller;
    let key = state
        .auth
        .issue_authoring(
            access.game_id(),
            &caller.studio_id,
            &caller.changed_by(Via::Rest),
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(AuthoringKeyIssued {
            key_id: key.record.key_id,
            authoring_key: key.token,
            expires_at: key.expires_at,
        }),
    ))
}

/// Lists a game's keys (admin); never shows the keys themselves.
#[utoipa::path(get, path = "/v1/games/{game_id}/keys", tag = "credentials",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "Every key of the game", body = KeyList),
        AuthErrors, NotFound, Unavailable))]
pub async fn list_keys(
    State(state): State<AppState>,
    access: GameAccess<Admin>,
) -> ApiResult<Json<KeyList>> {
    let game_id = access.game_id();
    let keys = state.auth.list(game_id).await?;
    Ok(Json(KeyList {
        keys: keys.into_iter().map(KeyInfo::from).collect(),
    }))
}

/// Revokes an SDK key at once on every node (admin); revoking it again changes nothing.
#[utoipa::path(delete, path = "/v1/games/{game_id}/sdk-keys/{key_id}", tag = "credentials",
    params(("game_id" = Uuid, Path), ("key_id" = Uuid, Path)),
    responses((status = 204, description = "Revoked"), AuthErrors, NotFound, Unavailable))]
pub async fn revoke_sdk_key(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath((game_id, key_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<StatusCode> {
    revoke(&state, &caller, game_id, KeyKind::is_sdk, key_id).await
}

/// Revokes an authoring key at once on every node (admin); revoking it again changes nothing.
#[utoipa::path(delete, path = "/v1/games/{game_id}/authoring-keys/{key_id}", tag = "credentials",
    params(("game_id" = Uuid, Path), ("key_id" = Uuid, Path)),
    responses((status = 204, description = "Revoked"), AuthErrors, NotFound, Unavailable))]
pub async fn revoke_authoring_key(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiPath((game_id, key_id)): ApiPath<(Uuid, Uuid)>,
) -> ApiResult<StatusCode> {
    revoke(&state, &caller, game_id, KeyKind::is_authoring, key_id).await
}

async fn revoke(
    state: &AppState,
    caller: &Dashboard,
    game_id: Uuid,
    of_kind: fn(&KeyKind) -> bool,
    key_id: Uuid,
) -> ApiResult<StatusCode> {
    access::for_studio(&state.services, &caller.studio_id, game_id).await?;
    caller.require(Role::Admin)?;
    state
        .auth
        .revoke(&caller.changed_by(Via::Rest), game_id, of_kind, key_id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
