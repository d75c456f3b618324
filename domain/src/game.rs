//! Games, their guardrails and operating mode, and the genre calibration table.
//!
//! The genre table (healthy FSR ranges and default offer templates) is data loaded from
//! `config/genres.toml`; this module only gives it a type.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::currency::{Currency, MAX_PER_PLAYER_DAY};
use crate::learning::LearnerConfig;
use crate::offer::Template;
use crate::schema::CountryCode;
use crate::validation::{Errors, FieldError, MAX_ID_LEN, MAX_NAME_LEN, is_snake_case};

/// The studio's bounds on what the engine may offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Guardrails {
    /// No offer, and no item in it, may cost more than this. `None` means unbounded;
    /// Autonomous mode requires it to be set.
    #[serde(default)]
    #[schema(minimum = 0)]
    pub max_price_cents: Option<i64>,
    /// ISO 3166-1 alpha-2 codes where loot boxes are never offered (at most 250).
    #[serde(default = "default_blocked_countries")]
    #[schema(value_type = Vec<CountryCode>, max_items = 250)]
    pub loot_box_blocked_countries: Vec<String>,
    /// At most this many offers shown per session (`None`: off).
    #[serde(default)]
    #[schema(value_type = Option<u64>, maximum = 4294967295_u64)]
    pub max_offers_per_session: Option<u32>,
    /// At least this many seconds between two offers to one session (`None`: off).
    #[serde(default)]
    #[schema(value_type = Option<u64>, maximum = 4294967295_u64)]
    pub min_offer_interval_s: Option<u32>,
}

fn default_blocked_countries() -> Vec<String> {
    vec!["BE".to_owned(), "NL".to_owned()]
}

impl Default for Guardrails {
    fn default() -> Self {
        Self {
            max_price_cents: None,
            loot_box_blocked_countries: default_blocked_countries(),
            max_offers_per_session: None,
            min_offer_interval_s: None,
        }
    }
}

/// A partial guardrail update: every field present replaces the stored one, the rest keep
/// their values (merged field by field). `Some(None)` clears a bound.
///
/// The price ceiling cannot be removed while the game is in Autonomous mode (422): step the
/// mode down first.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GuardrailsPatch {
    /// New price ceiling in cents, or `null` to remove it.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<i64>, minimum = 0)]
    pub max_price_cents: Option<Option<i64>>,
    /// New list of loot-box blocked countries (at most 250); `null` keeps the stored one.
    #[serde(default)]
    #[schema(value_type = Option<Vec<CountryCode>>, max_items = 250)]
    pub loot_box_blocked_countries: Option<Vec<String>>,
    /// New per-session cap, or `null` to turn it off.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<u64>, maximum = 4294967295_u64)]
    pub max_offers_per_session: Option<Option<u32>>,
    /// New minimum interval, or `null` to turn it off.
    #[serde(default, with = "double_option")]
    #[schema(value_type = Option<u64>, maximum = 4294967295_u64)]
    pub min_offer_interval_s: Option<Option<u32>>,
}

/// Distinguishes an absent field (`None`) from an explicit `null` (`Some(None)`).
mod double_option {
    use serde::{Deserialize, Deserializer};

    pub fn deserialize<'de, T, D>(de: D) -> Result<Option<Option<T>>, D::Error>
    where
        T: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Option::<T>::deserialize(de).map(Some)
    }
}

impl Guardrails {
    /// Applies a patch field by field.
    pub fn merge(&mut self, patch: GuardrailsPatch) {
        if let Some(v) = patch.max_price_cents {
            self.max_price_cents = v;
        }
        if let Some(v) = patch.loot_box_blocked_countries {
            self.loot_box_blocked_countries = v;
        }
        if let Some(v) = patch.max_offers_per_session {
            self.max_offers_per_session = v;
        }
        if let Some(v) = patch.min_offer_interval_s {
            self.min_offer_interval_s = v;
        }
    }

    /// Checks bounds and normalises country codes to upper case.
    pub fn validate(&mut self, errors: &mut Errors) {
        if let Some(max) = self.max_price_cents
            && max < 0
        {
            errors.push("guardrails.max_price_cents", "must not be negative");
        }
        if self.loot_box_blocked_countries.len() > 250 {
            errors.push(
                "guardrails.loot_box_blocked_countries",
                "at most 250 countries",
            );
        }
        for code in &mut self.loot_box_blocked_countries {
            if code.len() != 2 || !code.chars().all(|c| c.is_ascii_alphabetic()) {
                errors.push(
                    "guardrails.loot_box_blocked_countries",
                    format!("`{code}` is not an ISO 3166-1 alpha-2 code"),
                );
            }
            *code = code.to_ascii_uppercase();
        }
    }
}

/// The engine's operating mode, promoted one step at a time: Shadow, Assisted, Autonomous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// AI and template picks are computed but silent; bundles and the shelf serve.
    #[default]
    Shadow,
    /// Every AI or template offer needs a studio approval before it serves.
    Assisted,
    /// AI acts within the guardrails.
    Autonomous,
}

/// Why a mode change is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PromotionRefused {
    /// Shadow straight to Autonomous would skip the supervised phase.
    #[error("promote one step at a time: shadow -> assisted -> autonomous")]
    SkipsAStep,
}

impl Mode {
    fn rank(self) -> u8 {
        match self {
            Self::Shadow => 0,
            Self::Assisted => 1,
            Self::Autonomous => 2,
        }
    }

    /// The promotion rule: up one step at a time (Shadow, then Assisted, then Autonomous),
    /// down any number of steps at once. `Ok(None)` when `to` is the current mode.
    pub fn promote_to(self, to: Mode) -> Result<Option<Mode>, PromotionRefused> {
        if to.rank() > self.rank() + 1 {
            Err(PromotionRefused::SkipsAStep)
        } else if to == self {
            Ok(None)
        } else {
            Ok(Some(to))
        }
    }
}

/// A registered game.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Game {
    /// Stable id.
    pub game_id: Uuid,
    /// Owning studio: every access checks it.
    pub studio_id: String,
    /// Display name.
    pub name: String,
    /// A genre of the calibration table (`config/genres.toml`).
    pub genre: String,
    /// The game's currencies.
    pub currencies: Vec<Currency>,
    /// The studio's bounds.
    pub guardrails: Guardrails,
    /// Operating mode.
    pub mode: Mode,
    /// The AI level's learner settings.
    #[serde(default)]
    pub learner: LearnerConfig,
    /// First production `session_start`; the holdout share is fixed from then on.
    pub launched_at: Option<DateTime<Utc>>,
    /// First sandbox `session_start`, kept apart from production.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_launched_at: Option<DateTime<Utc>>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
}

impl Game {
    /// Rules between mode and guardrails: Autonomous mode needs a price ceiling, so the
    /// ceiling cannot be removed while the game is autonomous.
    pub fn check_mode_guardrails(&self, errors: &mut Errors) {
        if self.mode == Mode::Autonomous && self.guardrails.max_price_cents.is_none() {
            errors.push(
                "guardrails.max_price_cents",
                "Autonomous mode needs a price ceiling; step the mode down first",
            );
        }
    }
}

/// Validates a currency list: snake_case ids, unique, sane overrides.
pub fn validate_currencies(currencies: &[Currency], errors: &mut Errors) {
    let mut seen = std::collections::HashSet::new();
    if currencies.len() > 20 {
        errors.push("currencies", "at most 20 currencies");
    }
    for (i, c) in currencies.iter().enumerate() {
        if !is_snake_case(&c.currency_id, MAX_ID_LEN) {
            errors
                .0
                .push(FieldError::new("currencies.currency_id", "must be snake_case").at(i));
        }
        if !seen.insert(c.currency_id.as_str()) {
            errors
                .0
                .push(FieldError::new("currencies.currency_id", "duplicate currency_id").at(i));
        }
        if let Some(name) = &c.name
            && name.chars().count() > MAX_NAME_LEN
        {
            errors
                .0
                .push(FieldError::new("currencies.name", "too long").at(i));
        }
        if let Some(v) = c.usd_per_unit
            && !(v.is_finite() && v >= 0.0)
        {
            errors.0.push(
                FieldError::new("currencies.usd_per_unit", "must be a non-negative number").at(i),
            );
        }
        if let Some(max) = c.max_per_event
            && !(1..=1_000_000_000).contains(&max)
        {
            errors.0.push(
                FieldError::new("currencies.max_per_event", "between 1 and 1000000000").at(i),
            );
        }
        if let Some(max) = c.max_per_player_day
            && !(1..=MAX_PER_PLAYER_DAY).contains(&max)
        {
            errors.0.push(
                FieldError::new(
                    "currencies.max_per_player_day",
                    "between 1 and 1000000000000000",
                )
                .at(i),
            );
        }
    }
}

/// One genre's calibration: its healthy FSR range and its default offer templates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct GenreCalibration {
    /// Lowest healthy faucet/sink ratio.
    pub healthy_fsr_min: f64,
    /// Highest healthy faucet/sink ratio.
    pub healthy_fsr_max: f64,
    /// Templates a new game of this genre starts with.
    #[serde(default)]
    pub templates: Vec<Template>,
}

/// The calibration table by genre name, loaded from configuration.
pub type GenreTable = BTreeMap<String, GenreCalibration>;
