//! What the engine knows about the requesting player: the features a decision reads.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::holdout::is_holdout;
use crate::learner::Context;

/// What the engine knows about the requesting player in this session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlayerContext {
    /// The studio's external player id.
    pub player_id: String,
    /// Holdout membership, computed once per session by [`PlayerContext::new`].
    pub holdout: bool,
    /// ISO country code from the session attributes, for the loot-box rule.
    pub country: Option<String>,
    /// Platform from the session attributes.
    pub platform: Option<String>,
    /// Other session attributes (app_version, level, ...).
    pub attributes: HashMap<String, serde_json::Value>,
    /// Events seen this session other than `session_start`.
    pub events_seen: u32,
    /// Lifetime real-money spend in cents.
    pub spend_cents: i64,
    /// The UTC day of the player's first session, when known: its install cohort.
    pub install_day: Option<chrono::NaiveDate>,
    /// Offers shown this session, for `max_offers_per_session`.
    pub offers_shown: u32,
    /// When the last offer of this session was shown, for `min_offer_interval_s`.
    pub last_offer_at: Option<DateTime<Utc>>,
}

impl PlayerContext {
    /// A player with no features yet, its holdout flag computed from the ids.
    pub fn new(player_id: impl Into<String>, game_id: Uuid) -> Self {
        let player_id = player_id.into();
        Self {
            holdout: is_holdout(&player_id, game_id),
            player_id,
            ..Self::default()
        }
    }

    /// What the learner sees of this player answering `trigger` on `today`.
    pub fn learner_context<'a>(
        &'a self,
        trigger: &'a str,
        today: chrono::NaiveDate,
    ) -> Context<'a> {
        Context {
            trigger,
            platform: self.platform.as_deref(),
            country: self.country.as_deref(),
            spend_cents: self.spend_cents,
            days_since_install: self.install_day.map(|d| (today - d).num_days()),
            attributes: &self.attributes,
        }
    }

    /// Whether anything is known about the player beyond its id. An empty feature set (no
    /// attributes, no events besides `session_start`, no spend) falls straight to L4: with
    /// nothing to personalise on, the store shelf is the honest answer.
    pub fn has_features(&self) -> bool {
        self.country.is_some()
            || self.platform.is_some()
            || !self.attributes.is_empty()
            || self.events_seen > 0
            || self.spend_cents > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::GAME_ID;

    #[test]
    fn any_one_known_feature_counts() {
        let bare = PlayerContext::new("player_0", GAME_ID);
        assert!(!bare.has_features());
        let with = |f: fn(&mut PlayerContext)| {
            let mut p = bare.clone();
            f(&mut p);
            p.has_features()
        };
        assert!(with(|p| p.country = Some("FR".into())));
        assert!(with(|p| p.platform = Some("ios".into())));
        assert!(with(|p| {
            p.attributes.insert("level".into(), 3.into());
        }));
        assert!(with(|p| p.events_seen = 1));
        assert!(with(|p| p.spend_cents = 1));
        // Offer counters are the session's, not the player's: they are no feature.
        assert!(!with(|p| p.offers_shown = 1));
    }

    #[test]
    fn holdout_is_computed_from_the_ids() {
        assert!(!PlayerContext::new("player_0", GAME_ID).holdout);
        assert!(PlayerContext::new("player_4", GAME_ID).holdout);
    }
}
