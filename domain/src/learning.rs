//! A game's learner as the studio sets it: the settings a game may change
//! ([`LearnerConfig`], part of the game record), and the cold-start prior the game's genre
//! templates and catalogue give ([`prior_of`]).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::catalogue::Item;
use crate::learner::{LearnerSettings, Prior};
use crate::offer::Template;
use crate::validation::{Errors, MAX_ID_LEN};

/// Shortest half-life a game may set: below it a shift of taste is indistinguishable from
/// the noise of a few hundred offers.
pub const MIN_HALF_LIFE_OFFERS: u32 = 500;
/// Longest half-life a game may set (practically never forgetting).
pub const MAX_HALF_LIFE_OFFERS: u32 = 100_000_000;
/// Highest weight an offer of another level may carry.
pub const MAX_FALLBACK_WEIGHT: f64 = 10.0;
/// Attributes a game may list as ignored, at most.
pub const MAX_IGNORED_ATTRIBUTES: usize = 64;

/// The learner settings of one game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LearnerConfig {
    /// Shown offers of the game after which an observation counts half (default 20,000).
    /// Changing it starts the learner again from its prior: evidence faded at one rate
    /// cannot be read at another.
    #[serde(default = "default_half_life")]
    #[schema(minimum = 500, maximum = 100000000)]
    pub half_life_offers: u32,
    /// Weight of a single-item offer served by the genre template, a bundle or the shelf as
    /// evidence about the nearest AI arm, 0 to 10 (default 1, as much as an AI offer; 0
    /// learns from AI offers only).
    #[serde(default = "default_fallback_weight")]
    #[schema(minimum = 0, maximum = 10)]
    pub fallback_weight: f64,
    /// Session attributes that never become features (at most 64 names), for attributes that
    /// must not steer offers or carry nothing (a session id, a device id).
    #[serde(default)]
    #[schema(max_items = 64)]
    pub ignored_attributes: Vec<String>,
}

fn default_half_life() -> u32 {
    // The kernel's default is a whole number of offers.
    LearnerSettings::default().half_life_offers as u32
}

fn default_fallback_weight() -> f64 {
    LearnerSettings::default().fallback_weight
}

impl Default for LearnerConfig {
    fn default() -> Self {
        Self {
            half_life_offers: default_half_life(),
            fallback_weight: default_fallback_weight(),
            ignored_attributes: Vec::new(),
        }
    }
}

/// A partial update of [`LearnerConfig`]: every field present replaces the stored one.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LearnerConfigPatch {
    /// New half-life in shown offers (restarts the learner from its prior when it changes).
    #[schema(minimum = 500, maximum = 100000000)]
    pub half_life_offers: Option<u32>,
    /// New weight of other levels' single-item offers.
    #[schema(minimum = 0, maximum = 10)]
    pub fallback_weight: Option<f64>,
    /// New list of ignored session attributes.
    #[schema(max_items = 64)]
    pub ignored_attributes: Option<Vec<String>>,
}

impl LearnerConfig {
    /// Applies a patch field by field.
    pub fn merge(&mut self, patch: LearnerConfigPatch) {
        if let Some(v) = patch.half_life_offers {
            self.half_life_offers = v;
        }
        if let Some(v) = patch.fallback_weight {
            self.fallback_weight = v;
        }
        if let Some(v) = patch.ignored_attributes {
            self.ignored_attributes = v;
        }
    }

    /// Checks every bound; the errors name fields under `learner.`.
    pub fn validate(&self, errors: &mut Errors) {
        if !(MIN_HALF_LIFE_OFFERS..=MAX_HALF_LIFE_OFFERS).contains(&self.half_life_offers) {
            errors.push(
                "learner.half_life_offers",
                format!("must be {MIN_HALF_LIFE_OFFERS} to {MAX_HALF_LIFE_OFFERS}"),
            );
        }
        if !(self.fallback_weight.is_finite()
            && (0.0..=MAX_FALLBACK_WEIGHT).contains(&self.fallback_weight))
        {
            errors.push("learner.fallback_weight", "must be 0 to 10");
        }
        if self.ignored_attributes.len() > MAX_IGNORED_ATTRIBUTES {
            errors.push(
                "learner.ignored_attributes",
                format!("at most {MAX_IGNORED_ATTRIBUTES} attributes"),
            );
        }
        if self
            .ignored_attributes
            .iter()
            .any(|a| a.is_empty() || a.chars().count() > MAX_ID_LEN)
        {
            errors.push(
                "learner.ignored_attributes",
                format!("each name must be 1 to {MAX_ID_LEN} characters"),
            );
        }
    }

    /// The kernel's settings: the game's choices over the engine's defaults.
    pub fn settings(&self) -> LearnerSettings {
        LearnerSettings {
            half_life_offers: f64::from(self.half_life_offers),
            fallback_weight: self.fallback_weight,
            ignored_attributes: self.ignored_attributes.clone(),
            ..LearnerSettings::default()
        }
    }
}

/// The prior of a game: for each trigger its template serves, the first category of that
/// template the AI may sell; the price range of the live catalogue. A game with no live item
/// keeps the whole ladder in range.
pub fn prior_of(templates: &[Template], items: &[Item]) -> Prior {
    let preferred = templates.iter().filter_map(|t| {
        t.categories
            .iter()
            .find(|c| crate::bandit::AI_CATEGORIES.contains(c))
            .map(|c| (t.event_type.clone(), *c))
    });
    let prices = items.iter().filter(|i| i.is_live()).map(|i| i.price_cents);
    let (min, max) = prices.fold((i64::MAX, i64::MIN), |(lo, hi), p| (lo.min(p), hi.max(p)));
    if min > max {
        return Prior::new(preferred, 0, i64::MAX);
    }
    Prior::new(preferred, min, max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::category::Category;
    use crate::testing::{item, template};

    #[test]
    fn bounds_are_checked_and_named() {
        let mut errors = Errors::default();
        LearnerConfig::default().validate(&mut errors);
        assert!(errors.0.is_empty());
        let bad = LearnerConfig {
            half_life_offers: 10,
            fallback_weight: f64::NAN,
            ignored_attributes: vec![String::new()],
        };
        bad.validate(&mut errors);
        let fields: Vec<&str> = errors.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "learner.half_life_offers",
                "learner.fallback_weight",
                "learner.ignored_attributes"
            ]
        );
    }

    #[test]
    fn a_patch_replaces_only_what_it_names() {
        let mut c = LearnerConfig::default();
        c.merge(LearnerConfigPatch {
            fallback_weight: Some(0.5),
            ..LearnerConfigPatch::default()
        });
        assert_eq!(c.fallback_weight, 0.5);
        assert_eq!(c.half_life_offers, 20_000);
        assert_eq!(c.settings().half_life_offers, 20_000.0);
    }

    #[test]
    fn the_prior_follows_templates_and_prices() {
        let templates = vec![template(
            "currency_low",
            vec![Category::Cosmetic, Category::Currency],
        )];
        let items = vec![
            item("gems", Category::Currency, 499, 5.0),
            item("sword", Category::Equipment, 1999, 20.0),
        ];
        let prior = prior_of(&templates, &items);
        let logits = prior.logits("currency_low", crate::learner::Moments::FromTemplate);
        let cheap_currency = crate::bandit::Arm {
            category: Category::Currency,
            price_cents: 499,
        };
        let cheap_equipment = crate::bandit::Arm {
            category: Category::Equipment,
            price_cents: 499,
        };
        let outside = crate::bandit::Arm {
            category: Category::Currency,
            price_cents: 99,
        };
        let at = |a: crate::bandit::Arm| logits[a.index().expect("on the ladder")];
        assert!(at(cheap_currency) > at(cheap_equipment));
        assert!(at(outside) < at(cheap_currency));
        // Without a template or items: the default prior.
        assert_eq!(prior_of(&[], &[]), Prior::default());
    }
}
