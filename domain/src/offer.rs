//! Offer configuration records (genre templates, studio bundles, experiments) and the offer
//! the engine serves.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::catalogue::Category;

/// An L2 genre template: a trigger event mapped to the item categories it may offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Template {
    /// The trigger event, for example `boss_raid`.
    pub event_type: String,
    /// Categories the template picks from, in preference order.
    pub categories: Vec<Category>,
    /// Discount applied to the picked items' summed price, 0 to 90.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discount_pct: Option<u8>,
    /// How many items the offer holds at most (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u8>,
}

/// An L3 studio bundle: exact item ids, a price, and the events that trigger it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Bundle {
    /// Stable id.
    pub bundle_id: Uuid,
    /// Display name.
    pub name: String,
    /// Exact catalogue items; each must exist and not be deleted when saved.
    pub item_ids: Vec<String>,
    /// Bundle price in dollars.
    pub price_usd: f64,
    /// Trigger events that may serve it; empty means every trigger.
    #[serde(default)]
    pub triggers: Vec<String>,
}

/// One arm of a price experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Variant name, reported in the offer.
    pub name: String,
    /// Relative weight of the assignment.
    pub weight: u32,
    /// Replaces the offer's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_usd: Option<f64>,
    /// Multiplies the offer's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price_multiplier: Option<f64>,
}

/// A price experiment: variants change the price, never the items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Experiment {
    /// Stable id; part of the assignment hash.
    pub experiment_id: Uuid,
    /// Arms with their weights.
    pub variants: Vec<Variant>,
}

/// A game's kill switch: `0` normal, `1` AI off (L1 and L2 never serve), `2` offers off,
/// `3` SDK off (no offers, and events are refused so the SDK stops its telemetry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct KillSwitch {
    /// Level 0 to 3.
    pub level: u8,
    /// Why, shown to the SDK and the dashboard.
    pub reason: String,
    /// Last change.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

impl Default for KillSwitch {
    fn default() -> Self {
        Self {
            level: 0,
            reason: String::new(),
            updated_at: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
        }
    }
}

/// The experiment arm a served offer belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ExperimentRef {
    /// The experiment.
    pub experiment_id: Uuid,
    /// The variant's name.
    pub variant: String,
}

/// An offer as served to the SDK (REST answer and WebSocket `offer` message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServedOffer {
    /// Id of this offer; `offer_shown` and `purchase` events name it.
    pub offer_id: Uuid,
    /// Pipeline level 1 to 4 that produced it.
    pub fallback_level: u8,
    /// Full item records, as the catalogue returns them.
    #[schema(value_type = Vec<crate::catalogue::Item>)]
    pub items: Vec<std::sync::Arc<crate::catalogue::Item>>,
    /// Price in dollars.
    pub price_usd: f64,
    /// Price in cents.
    pub price_cents: i64,
    /// After this the client must not show it.
    pub expires_at: chrono::DateTime<chrono::Utc>,
    /// The experiment arm, when an experiment priced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<ExperimentRef>,
}
