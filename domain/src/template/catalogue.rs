//! The catalogue as the validator and the renderer see it: a lookup from item id to the
//! item's state and the fields a template may show. Callers pass live data (the service's
//! game view) or a fixed list (tests, the bench) through the [`Catalogue`] trait.

use crate::catalogue::Item;

/// What the catalogue knows of an item id.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemLookup {
    /// A live item and what a page may show of it.
    Live(ItemSummary),
    /// The item exists but is soft-deleted: a page must not offer it.
    Deleted,
    /// No item has this id in the game.
    Unknown,
}

/// The fields of an item a page may show.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemSummary {
    /// Display name.
    pub name: String,
    /// The price as shown: `$4.99`, `Free`, or `500 gold` for an earned-currency price.
    pub price: String,
    /// Amount granted (the badge), if any.
    pub amount: Option<i64>,
    /// Asset id of the art, if any.
    pub art: Option<String>,
    /// Free-text description, if any.
    pub description: Option<String>,
}

impl ItemSummary {
    /// The summary of a catalogue item.
    pub fn of(item: &Item) -> Self {
        let price = match &item.earned_price {
            Some(p) => format!("{} {}", p.amount, p.currency_id),
            None if item.price_cents == 0 => "Free".into(),
            None => format!(
                "${}.{:02}",
                item.price_cents / 100,
                (item.price_cents % 100).abs()
            ),
        };
        Self {
            name: item.item_name.clone(),
            price,
            amount: item.quantity,
            art: item.image.clone(),
            description: item.description.clone(),
        }
    }
}

/// Where the validator and the renderer look items up.
pub trait Catalogue {
    /// The state of `item_id` in the game.
    fn lookup(&self, item_id: &str) -> ItemLookup;
}

impl<F: Fn(&str) -> ItemLookup> Catalogue for F {
    fn lookup(&self, item_id: &str) -> ItemLookup {
        self(item_id)
    }
}

/// A game's items, deleted ones included (a page binds a handful, so a scan is enough).
impl Catalogue for [Item] {
    fn lookup(&self, item_id: &str) -> ItemLookup {
        match self.iter().find(|i| i.item_id == item_id) {
            Some(item) if item.is_live() => ItemLookup::Live(ItemSummary::of(item)),
            Some(_) => ItemLookup::Deleted,
            None => ItemLookup::Unknown,
        }
    }
}
