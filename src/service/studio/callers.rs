//! Who is calling, once the transport has checked the credential: a dashboard user
//! ([`Dashboard`]), an SDK client ([`SdkCaller`]), or either a user or a key of one game
//! ([`GameCaller`]). The use cases take these (an authoring run records who made each call);
//! the transports build them from the request's credential.

use std::sync::Arc;

use offer_domain::audit::{ChangedBy, Via};
use offer_domain::environment::Environment;
use uuid::Uuid;

use super::keys::KeyRecord;
use crate::auth::Role;
use crate::service::{ServiceError, ServiceResult};

/// A dashboard user (JWT).
#[derive(Debug, Clone)]
pub struct Dashboard {
    /// The user.
    pub sub: String,
    /// The user's studio: every object it reaches must belong to it.
    pub studio_id: String,
    /// The user's role.
    pub role: Role,
}

impl Dashboard {
    /// The user as the audit trail names a change of theirs made through `via`.
    pub fn changed_by(&self, via: Via) -> ChangedBy {
        ChangedBy::member(&self.sub, via)
    }

    /// Refuses with 403 unless the user has at least `role`.
    pub fn require(&self, role: Role) -> ServiceResult<()> {
        if self.role >= role {
            Ok(())
        } else {
            Err(ServiceError::Forbidden("your role does not allow this"))
        }
    }
}

/// An SDK client (SDK key).
#[derive(Debug, Clone)]
pub struct SdkCaller {
    /// The key's record: its game, studio and environment.
    pub key: Arc<KeyRecord>,
    /// The key's environment.
    pub env: Environment,
}

impl SdkCaller {
    /// Refuses another game's id with 404, as for any foreign object.
    pub fn check_game(&self, game_id: Uuid) -> ServiceResult<()> {
        if self.key.game_id == game_id {
            Ok(())
        } else {
            Err(ServiceError::NotFound("game"))
        }
    }
}

/// A caller that reaches one game's objects: a dashboard user of the owning studio (checked
/// where the game is loaded), or a key, which is bound to one game.
#[derive(Debug, Clone)]
pub enum GameCaller {
    /// A dashboard user.
    Dashboard(Dashboard),
    /// A key of one game.
    Key(Arc<KeyRecord>),
}

impl GameCaller {
    /// The caller's studio.
    pub fn studio_id(&self) -> &str {
        match self {
            Self::Dashboard(d) => &d.studio_id,
            Self::Key(k) => &k.studio_id,
        }
    }

    /// The caller as the audit trail names a change of theirs over the REST API: the
    /// member, or the key by its id.
    pub fn changed_by(&self) -> ChangedBy {
        match self {
            Self::Dashboard(d) => d.changed_by(Via::Rest),
            Self::Key(k) => ChangedBy::key(&k.key_id.to_string()),
        }
    }

    /// Refuses a key of another game with 404, as for any foreign object.
    pub fn check_game(&self, game_id: Uuid) -> ServiceResult<()> {
        match self {
            Self::Key(k) if k.game_id != game_id => Err(ServiceError::NotFound("game")),
            _ => Ok(()),
        }
    }
}
