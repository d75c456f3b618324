//! The currencies of a game.
//!
//! Apart from the game record because the catalogue's value rules read them too, and the
//! catalogue must not depend on the game (which depends on the offer templates, which name
//! catalogue categories).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::schema::SnakeCaseId;

/// The largest `max_per_player_day` a currency may set.
pub const MAX_PER_PLAYER_DAY: i64 = 1_000_000_000_000_000;

/// Whether a currency is bought with real money or earned by playing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CurrencyKind {
    /// Bought with real money (gems); its face rate comes from its smallest pack.
    Hard,
    /// Earned by playing (gold); its USD value is derived from the packs that grant it.
    Earned,
}

/// A currency of a game. A game's currency ids are unique (a list naming one twice is
/// refused with 422).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Currency {
    /// snake_case id, referenced by items' `currency_id` and `earned_price`.
    #[schema(value_type = SnakeCaseId)]
    pub currency_id: String,
    /// Hard or earned.
    pub kind: CurrencyKind,
    /// Display name, at most 200 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 200)]
    pub name: Option<String>,
    /// Expert override of the USD value of one unit (not negative). When absent the value
    /// is derived from the catalogue (see `catalogue::currency_rates`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0)]
    pub usd_per_unit: Option<f64>,
    /// The most units one `currency_earned` or `currency_spent` may move (1 to 1000000000):
    /// an event above it is refused as `amount_out_of_bounds` and changes nothing. Absent:
    /// only the engine's own bound of 1000000000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1000000000)]
    pub max_per_event: Option<i64>,
    /// The most units of this currency one player's UTC day may count in the economy's
    /// figures, earned and spent each (1 to 1000000000000000). Units above it are still
    /// applied to the player's wallet and kept in the ledger, but left out of the FSR, the
    /// quadrant and the approval simulation, and shown as left out on the FSR report. Absent:
    /// a cap derived from the game's own players once it has enough days of them (see the
    /// economy documentation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 1000000000000000_i64)]
    pub max_per_player_day: Option<i64>,
}
