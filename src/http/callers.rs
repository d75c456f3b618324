//! Who is calling: the extractors that turn an `Authorization: Bearer` header into a typed
//! caller. Each accepts exactly the credential kinds its routes take, so a route cannot
//! forget a check: a dashboard route takes [`Dashboard`], an SDK route (and the WebSocket
//! upgrade) [`SdkCaller`], the catalogue read path and custom-page drafts
//! [`CatalogueReader`], item art [`AnyGameCaller`]. Object-level checks (the game belongs to
//! the caller's studio) happen where the game is loaded.
//!
//! The callers themselves are the service layer's ([`crate::service::studio::callers`]):
//! the use cases take them. The extractors work on any router state that hands out the
//! [`AuthService`], so this module knows nothing of the application state.

use std::sync::Arc;

use axum::extract::{ConnectInfo, FromRef, FromRequestParts};
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;

use crate::error::{ApiError, ApiResult};
use crate::server::Peer;
use crate::service::ServiceError;
pub use crate::service::studio::callers::{Dashboard, GameCaller, SdkCaller};
use crate::service::studio::connection_keys::ConnectionKeys;
use crate::service::studio::keys::{AuthService, KeyKind};
use offer_wire::key_token as keys;

/// The bearer token of a request. The scheme is case-insensitive (RFC 7235).
fn bearer(parts: &Parts) -> ApiResult<&str> {
    parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .filter(|t| !t.is_empty())
        .ok_or(ApiError::Service(ServiceError::Unauthorized(
            "missing bearer credential",
        )))
}

/// What the connection the request came on remembers of the key it verified last (absent
/// when the router is called without the server, as in-process tests do).
fn connection_keys(parts: &Parts) -> Option<&ConnectionKeys> {
    parts
        .extensions
        .get::<ConnectInfo<Peer>>()
        .map(|peer| &*peer.0.keys)
}

/// The service that checks credentials, from whatever state the router carries.
fn auth_of<S>(state: &S) -> Arc<AuthService>
where
    Arc<AuthService>: FromRef<S>,
{
    Arc::<AuthService>::from_ref(state)
}

impl<S: Send + Sync> FromRequestParts<S> for Dashboard
where
    Arc<AuthService>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> ApiResult<Self> {
        let token = bearer(parts)?;
        if keys::looks_like_key(token) {
            return Err(ApiError::Service(ServiceError::WrongCredential(
                "this path takes a dashboard token, not an API key",
            )));
        }
        let claims = auth_of(state).jwt().verify(token).ok_or(ApiError::Service(
            ServiceError::Unauthorized("invalid or expired token"),
        ))?;
        Ok(Self {
            sub: claims.sub,
            studio_id: claims.studio_id,
            role: claims.role,
        })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for SdkCaller
where
    Arc<AuthService>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> ApiResult<Self> {
        let token = bearer(parts)?;
        if !keys::looks_like_key(token) {
            // A valid dashboard token is the wrong kind here; anything else is no credential.
            return Err(if auth_of(state).jwt().verify(token).is_some() {
                ServiceError::WrongCredential("this path takes an SDK key").into()
            } else {
                ServiceError::Unauthorized("invalid credential").into()
            });
        }
        let key = auth_of(state).key_on(connection_keys(parts), token).await?;
        match key.kind {
            KeyKind::Sdk(env) => Ok(Self { key, env }),
            KeyKind::Authoring => Err(ApiError::Service(ServiceError::WrongCredential(
                "an authoring key never touches /v1/sdk",
            ))),
        }
    }
}

/// Reads a credential of one game; `accept` says which key kinds this route takes, and with
/// what refusal for the others.
async fn game_caller<S>(
    parts: &mut Parts,
    state: &S,
    accept: fn(KeyKind) -> ApiResult<()>,
) -> ApiResult<GameCaller>
where
    S: Send + Sync,
    Arc<AuthService>: FromRef<S>,
{
    let token = bearer(parts)?;
    if !keys::looks_like_key(token) {
        return Dashboard::from_request_parts(parts, state)
            .await
            .map(GameCaller::Dashboard);
    }
    let key = auth_of(state).key_on(connection_keys(parts), token).await?;
    accept(key.kind)?;
    Ok(GameCaller::Key(key))
}

/// Who may read a catalogue, and draft and read a game's custom pages: a dashboard user of the
/// owning studio (whose role the route checks), or an authoring key of that very game (the
/// authoring tool binds pages to items). SDK keys are refused.
#[derive(Debug, Clone)]
pub struct CatalogueReader(pub GameCaller);

impl<S: Send + Sync> FromRequestParts<S> for CatalogueReader
where
    Arc<AuthService>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> ApiResult<Self> {
        game_caller(parts, state, |kind| match kind {
            KeyKind::Authoring => Ok(()),
            KeyKind::Sdk(_) => Err(ApiError::Service(ServiceError::WrongCredential(
                "this path takes a dashboard token or an authoring key",
            ))),
        })
        .await
        .map(Self)
    }
}

/// Any credential of a game: item art is read by game clients (SDK key) and the authoring
/// tool as well as by the dashboard.
#[derive(Debug, Clone)]
pub struct AnyGameCaller(pub GameCaller);

impl<S: Send + Sync> FromRequestParts<S> for AnyGameCaller
where
    Arc<AuthService>: FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> ApiResult<Self> {
        game_caller(parts, state, |_| Ok(())).await.map(Self)
    }
}
