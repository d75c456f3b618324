//! New player ids per SDK key: the game's key ships in every copy of the game, so without a
//! bound one script could open sessions for made-up players at thousands a second. A player
//! id that never played in the key's environment is new; each one spends a cell of its key's
//! budget (per minute, with a burst of as many), kept by each node on its own. Known players
//! are never limited.

use uuid::Uuid;

use super::keyed::Keyed;
use crate::config::PlayerSettings;
use crate::service::ServiceError;

/// This node's budget of new player ids, one per SDK key.
pub struct NewPlayers {
    per_key: Keyed<Uuid>,
}

impl NewPlayers {
    /// The budget the settings give each key.
    pub fn new(settings: &PlayerSettings) -> Self {
        Self {
            per_key: Keyed::new(settings.new_per_minute_per_key),
        }
    }

    /// Spends one new player id of `key_id`'s budget; past it, 429
    /// `new_player_rate_limited` with the seconds to wait.
    pub fn admit(&self, key_id: Uuid) -> Result<(), ServiceError> {
        self.per_key.check(&key_id).map_err(|e| match e {
            ServiceError::RateLimited(wait) => ServiceError::NewPlayerRateLimited(wait),
            other => other,
        })
    }
}
