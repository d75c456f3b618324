//! One extractor for every dashboard route under `/v1/games/{game_id}`: [`GameAccess`]
//! resolves the game in the caller's studio and checks the caller's role, so no handler
//! repeats (or forgets) either check. [`AuthorAccess`] does the same for the routes the
//! game's authoring key may call too.
//!
//! The order is fixed: the credential (401, or 403 for an API key), then the game (404 when
//! absent, malformed or another studio's: a caller never learns what exists outside its
//! studio), then the role (403). The body is read only after all three passed.

use std::marker::PhantomData;

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use offer_actors::GameHandle;
use offer_domain::audit::{ChangedBy, Via};
use uuid::Uuid;

use super::callers::{CatalogueReader, Dashboard, GameCaller};
use crate::auth::Role;
use crate::error::{ApiError, ApiResult};
use crate::service::ServiceError;
use crate::service::access;
use crate::state::AppState;

/// The least role a route needs, as a type, so the route's signature says it.
pub trait MinRole: Send + Sync {
    /// The role.
    const ROLE: Role;
}

/// Reading a game's configuration, catalogue and figures.
pub struct Viewer;
/// Changing a game's catalogue and offer configuration.
pub struct Developer;
/// Credentials, the kill switch and the operating mode.
pub struct Admin;

impl MinRole for Viewer {
    const ROLE: Role = Role::Viewer;
}
impl MinRole for Developer {
    const ROLE: Role = Role::Developer;
}
impl MinRole for Admin {
    const ROLE: Role = Role::Admin;
}

/// A dashboard caller with at least role `R` on the game its path names.
pub struct GameAccess<R> {
    /// Who is calling.
    pub caller: Dashboard,
    /// The game, in the caller's studio.
    pub game: GameHandle,
    role: PhantomData<R>,
}

impl<R> GameAccess<R> {
    /// The game's id.
    pub fn game_id(&self) -> Uuid {
        self.game.view().game.game_id
    }

    /// The caller as the audit trail names a change of theirs: a member, over REST.
    pub fn by(&self) -> ChangedBy {
        self.caller.changed_by(Via::Rest)
    }
}

impl<R: MinRole> FromRequestParts<AppState> for GameAccess<R> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let caller = Dashboard::from_request_parts(parts, state).await?;
        let game_id = game_id_of(parts, state).await?;
        let game = access::for_studio(&state.services, &caller.studio_id, game_id).await?;
        caller.require(R::ROLE)?;
        Ok(Self {
            caller,
            game,
            role: PhantomData,
        })
    }
}

/// A dashboard caller with at least role `R`, or an authoring key of the game, on the game
/// its path names (the custom-page authoring routes).
pub struct AuthorAccess<R> {
    /// Who is calling.
    pub caller: GameCaller,
    /// The game: the key's, or in the user's studio.
    pub game: GameHandle,
    role: PhantomData<R>,
}

impl<R> AuthorAccess<R> {
    /// The game's id.
    pub fn game_id(&self) -> Uuid {
        self.game.view().game.game_id
    }
}

impl<R: MinRole> FromRequestParts<AppState> for AuthorAccess<R> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let CatalogueReader(caller) = CatalogueReader::from_request_parts(parts, state).await?;
        let game_id = game_id_of(parts, state).await?;
        caller.check_game(game_id)?;
        let game = access::for_studio(&state.services, caller.studio_id(), game_id).await?;
        if let GameCaller::Dashboard(user) = &caller {
            user.require(R::ROLE)?;
        }
        Ok(Self {
            caller,
            game,
            role: PhantomData,
        })
    }
}

/// The `{game_id}` of the route; a malformed id names nothing, so it is a 404.
async fn game_id_of(parts: &mut Parts, state: &AppState) -> ApiResult<Uuid> {
    let params = RawPathParams::from_request_parts(parts, state)
        .await
        .map_err(|_| ApiError::Service(ServiceError::NotFound("game")))?;
    params
        .iter()
        .find(|(name, _)| *name == "game_id")
        .and_then(|(_, value)| value.parse().ok())
        .ok_or(ApiError::Service(ServiceError::NotFound("game")))
}
