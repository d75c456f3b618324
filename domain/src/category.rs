//! The catalogue category of an item.
//!
//! A module of its own because three layers read it: the catalogue stores it, the offer
//! templates name it, and the L1 model's arms are built on it.

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

/// Catalogue category of an item. `currency_pack` is accepted as `currency`, the one name
/// the engine stores and answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Hard-currency refills; answers `currency_low`.
    #[serde(alias = "currency_pack")]
    Currency,
    /// One-time-use items; answers `first_loss`.
    Consumable,
    /// Persistent gear; answers RPG events such as `boss_raid`.
    Equipment,
    /// Studio-curated packs, served through L3 bundles only.
    Bundle,
    /// Skins and emotes: offered only when the other categories are exhausted.
    Cosmetic,
}

impl Category {
    /// Every name a request may use for a category, the `currency_pack` alias included.
    pub const ACCEPTED_NAMES: [&'static str; 6] = [
        "currency",
        "currency_pack",
        "consumable",
        "equipment",
        "bundle",
        "cosmetic",
    ];

    /// The names an offer template may use: every category but `bundle`, which only L3
    /// studio bundles serve.
    pub const TEMPLATE_NAMES: [&'static str; 5] = [
        "currency",
        "currency_pack",
        "consumable",
        "equipment",
        "cosmetic",
    ];
}

/// The schema lists the alias too, since requests may use it (answers never do).
impl PartialSchema for Category {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "Catalogue category of an item. `currency_pack` is accepted as `currency`, the \
                 one name the engine stores and answers.",
            ))
            .enum_values(Some(Self::ACCEPTED_NAMES))
            .into()
    }
}

impl ToSchema for Category {}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(name: &str) -> Option<Category> {
        serde_json::from_value(serde_json::Value::from(name)).ok()
    }

    #[test]
    fn the_documented_names_are_exactly_the_accepted_ones() {
        for name in Category::ACCEPTED_NAMES {
            assert!(read(name).is_some(), "{name} is documented but refused");
        }
        for name in Category::TEMPLATE_NAMES {
            assert_ne!(read(name), Some(Category::Bundle));
            assert!(Category::ACCEPTED_NAMES.contains(&name));
        }
        for category in [
            Category::Currency,
            Category::Consumable,
            Category::Equipment,
            Category::Bundle,
            Category::Cosmetic,
        ] {
            let wire = serde_json::to_value(category).expect("json");
            let name = wire.as_str().expect("a name");
            assert!(
                Category::ACCEPTED_NAMES.contains(&name),
                "{name} undocumented"
            );
        }
        assert_eq!(read("currency_pack"), Some(Category::Currency));
        assert_eq!(read("weapon"), None);
    }
}
