//! Offer configuration records (genre templates, studio bundles, experiments) and the offer
//! the engine serves.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
use uuid::Uuid;

use crate::category::Category;
use crate::kill_level::KillLevel;
use crate::product_ids::StoreProducts;
use crate::schema::{PriceUsd, SnakeCaseId, VariantName};

/// An L2 genre template: a trigger event mapped to the item categories it may offer. A game
/// has at most one template per event type (a list naming one twice is refused with 422).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Template {
    /// The trigger event, for example `boss_raid`.
    #[schema(value_type = SnakeCaseId)]
    pub event_type: String,
    /// Categories the template picks from, in preference order: 1 to 5, never `bundle`.
    #[schema(schema_with = template_categories)]
    pub categories: Vec<Category>,
    /// Discount applied to the picked items' summed price, 0 to 90.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 90)]
    pub discount_pct: Option<u8>,
    /// How many items the offer holds at most, 1 to 10 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 1, maximum = 10)]
    pub max_items: Option<u8>,
}

/// The schema of a template's categories: 1 to 5 category names, `bundle` excluded.
fn template_categories() -> ArrayBuilder {
    ArrayBuilder::new()
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(Category::TEMPLATE_NAMES)),
        )
        .min_items(Some(1))
        .max_items(Some(5))
        .description(Some(
            "Categories the template picks from, in preference order: 1 to 5, never `bundle` \
             (only L3 studio bundles serve bundles).",
        ))
}

/// An L3 studio bundle: exact item ids, a price, and the events that trigger it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Bundle {
    /// Stable id.
    pub bundle_id: Uuid,
    /// Display name.
    pub name: String,
    /// Exact catalogue items (1 to 50); each must exist and not be deleted when saved.
    #[schema(value_type = Vec<SnakeCaseId>, min_items = 1, max_items = 50)]
    pub item_ids: Vec<String>,
    /// Bundle price in dollars, at most 2 decimal places.
    #[schema(value_type = PriceUsd)]
    pub price_usd: f64,
    /// Trigger events that may serve it (at most 20); empty means every trigger.
    #[serde(default)]
    #[schema(value_type = Vec<SnakeCaseId>, max_items = 20)]
    pub triggers: Vec<String>,
    /// The product id each store sells the bundle under, each optional; one product pays
    /// for one live item or bundle of the game only (409 otherwise). Bundles stored before
    /// stores existed read as empty.
    #[serde(default)]
    pub store_products: StoreProducts,
}

/// One arm of a price experiment. It changes the price at most one way: `price_usd` or
/// `price_multiplier`, not both (422).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    /// Variant name, reported in the offer; unique within its experiment.
    #[schema(value_type = VariantName)]
    pub name: String,
    /// Relative weight of the assignment.
    #[schema(value_type = u64, maximum = 4294967295_u64)]
    pub weight: u32,
    /// Replaces the offer's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(minimum = 0, maximum = 100000)]
    pub price_usd: Option<f64>,
    /// Multiplies the offer's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(exclusive_minimum = 0, maximum = 10)]
    pub price_multiplier: Option<f64>,
}

/// A price experiment: variants change the price, never the items. Its variant names are
/// unique and its weights are not all 0 (422).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Experiment {
    /// Stable id; part of the assignment hash.
    pub experiment_id: Uuid,
    /// Arms with their weights, 1 to 10.
    #[schema(min_items = 1, max_items = 10)]
    pub variants: Vec<Variant>,
    /// Exposed players every variant with a weight needs before its results stop being
    /// provisional, 1 to 10,000,000 (1,000 when not given).
    #[serde(default = "default_min_sample")]
    #[schema(minimum = 1, maximum = 10000000, default = 1000)]
    pub min_sample: u64,
}

/// Exposed players per variant before an experiment's results stop being provisional, when
/// it names none.
pub const DEFAULT_MIN_SAMPLE: u64 = 1_000;
/// The largest `min_sample` an experiment may ask for.
pub const MAX_MIN_SAMPLE: u64 = 10_000_000;

/// The `min_sample` of an experiment that names none (and of those stored before it existed).
fn default_min_sample() -> u64 {
    DEFAULT_MIN_SAMPLE
}

/// A game's kill switch: `0` normal, `1` AI off (L1 and L2 never serve), `2` offers off,
/// `3` SDK off (no offers, and events are refused so the SDK stops its telemetry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct KillSwitch {
    /// Level 0 to 3.
    #[schema(value_type = u8, maximum = 3)]
    pub level: KillLevel,
    /// Why, shown to the SDK and the dashboard.
    pub reason: String,
    /// Last change.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

impl Default for KillSwitch {
    fn default() -> Self {
        Self {
            level: KillLevel::Normal,
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
