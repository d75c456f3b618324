//! Catalogue items: their wire shape, validation and the three value (USD) rules.
//!
//! Value rules, applied on every save to every item of the game:
//! 1. a currency pack is worth `quantity x face rate`, the face rate being the per-unit price
//!    of the currency's smallest pack (so a discounted large pack is worth more than its price);
//! 2. a real-money item is worth its price;
//! 3. an item priced in an earned currency is worth `amount x` that currency's derived value.
//!
//! An expert `value_override_usd` wins over the computed value.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::category::Category;
use crate::currency::Currency;
use crate::product_ids::StoreProducts;
use crate::schema::{DisplayName, PriceCents, PriceUsd, Quantity, SnakeCaseId};
use crate::validation::{Errors, FieldError, MAX_ID_LEN, MAX_NAME_LEN, is_snake_case};

/// Most items one bulk call may carry, so one request stays a bounded amount of work.
pub const MAX_BULK_ITEMS: usize = 500;
/// Longest accepted description.
pub const MAX_DESCRIPTION_LEN: usize = 2000;
/// Highest accepted price: $100,000, far above any real in-game purchase.
pub const MAX_PRICE_CENTS: i64 = 10_000_000;

/// A price in an earned currency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EarnedPrice {
    /// The currency paid: one of the game's currencies.
    #[schema(value_type = SnakeCaseId)]
    pub currency_id: String,
    /// Units of it.
    #[schema(value_type = Quantity)]
    pub amount: i64,
}

/// An item as stored and returned by the API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Item {
    /// Stable snake_case id, unique per game, immutable.
    #[schema(value_type = SnakeCaseId)]
    pub item_id: String,
    /// Display name.
    pub item_name: String,
    /// Catalogue category.
    pub category: Category,
    /// Real-money price in dollars (the same money as `price_cents`).
    pub price_usd: f64,
    /// Real-money price in cents; the policy engine compares it with the guardrails.
    pub price_cents: i64,
    /// Amount granted; the offer tile's badge. Required for currency items; omitted from
    /// the JSON of an item that has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<i64>,
    /// Whether the item is used up.
    pub is_consumable: bool,
    /// Whether L4 may pick the item from the store shelf.
    pub fallback_eligible: bool,
    /// Asset id of the item art in the game's asset library.
    pub image: Option<String>,
    /// Where the art is served.
    pub image_url: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Computed value in dollars (read only).
    pub value_usd: f64,
    /// Expert override of the value; wins over the computed one.
    pub value_override_usd: Option<f64>,
    /// For currency items: the currency granted.
    #[schema(value_type = Option<SnakeCaseId>)]
    pub currency_id: Option<String>,
    /// For items priced in an earned currency.
    pub earned_price: Option<EarnedPrice>,
    /// Randomised contents: never offered in the game's blocked countries.
    pub is_loot_box: bool,
    /// The store products that pay for the item (empty: none; items stored before stores
    /// existed read as empty).
    #[serde(default)]
    pub store_products: StoreProducts,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Soft-delete time; a deleted item never appears in offers again.
    pub deleted_at: Option<DateTime<Utc>>,
}

impl Item {
    /// True unless soft-deleted.
    pub fn is_live(&self) -> bool {
        self.deleted_at.is_none()
    }

    /// The value the engine uses: the override when set, else the computed value.
    pub fn effective_value_usd(&self) -> f64 {
        self.value_override_usd.unwrap_or(self.value_usd)
    }
}

/// A new or replaced item as sent by a client (single add and bulk).
///
/// Besides each field's own bounds, an item must follow rules between fields and with the
/// game, refused with 422 naming the field: `price_usd` or `price_cents` is required, and
/// they must agree when both are sent; a `currency` item needs a `quantity`, and a
/// `currency_id` when the game has several currencies; only `currency` items grant a
/// currency; `currency_id` and `earned_price.currency_id` name currencies of the game; `image`
/// names an asset of the game's library.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemInput {
    /// snake_case id.
    #[schema(value_type = SnakeCaseId)]
    pub item_id: String,
    /// Display name, not blank, at most 200 characters.
    #[schema(value_type = DisplayName)]
    pub item_name: String,
    /// Category (`currency_pack` accepted for `currency`).
    pub category: Category,
    /// Price in dollars, 0 to 100000, at most 2 decimal places.
    #[serde(default)]
    #[schema(value_type = Option<PriceUsd>)]
    pub price_usd: Option<f64>,
    /// Price in cents, 0 to 10000000; must agree with `price_usd` when both are sent.
    #[serde(default)]
    #[schema(value_type = Option<PriceCents>)]
    pub price_cents: Option<i64>,
    /// Amount granted, 1 to 1000000000; required for currency items.
    #[serde(default)]
    #[schema(value_type = Option<Quantity>)]
    pub quantity: Option<i64>,
    /// Whether the item is used up.
    #[serde(default)]
    pub is_consumable: bool,
    /// Whether L4 may pick it.
    #[serde(default)]
    pub fallback_eligible: bool,
    /// Asset id of its art, from this game's asset library.
    #[serde(default)]
    #[schema(pattern = "^[0-9a-f]{24}$")]
    pub image: Option<String>,
    /// Free text, at most 2000 characters.
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// Expert value override in dollars, 0 to 1000000.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 1000000)]
    pub value_override_usd: Option<f64>,
    /// Currency granted (currency items): one of the game's currencies.
    #[serde(default)]
    #[schema(value_type = Option<SnakeCaseId>)]
    pub currency_id: Option<String>,
    /// Price in an earned currency.
    #[serde(default)]
    pub earned_price: Option<EarnedPrice>,
    /// Randomised contents.
    #[serde(default)]
    pub is_loot_box: bool,
    /// The product id each store sells the item under, each optional; one product pays for
    /// one live item or bundle of the game only (409 otherwise).
    #[serde(default)]
    pub store_products: StoreProducts,
    /// In a bulk upsert, brings back a soft-deleted item of this id. Without it a deleted
    /// item is never revived by accident: the call is refused.
    #[serde(default)]
    pub restore: bool,
}

/// A partial update. `item_id` may be sent only unchanged; every other field present replaces
/// the stored one (`null` leaves it as it is, except for `value_override_usd`, which it
/// clears).
///
/// The patched item as a whole must follow the rules of a new item (see `ItemInput`), refused
/// with 422 naming the field: for example `price_usd` and `price_cents` must agree when both
/// are sent.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemPatch {
    /// Must equal the path's item id: ids are immutable.
    #[serde(default)]
    #[schema(value_type = Option<SnakeCaseId>)]
    pub item_id: Option<String>,
    /// New name, not blank, at most 200 characters.
    #[serde(default)]
    #[schema(value_type = Option<DisplayName>)]
    pub item_name: Option<String>,
    /// New category.
    #[serde(default)]
    pub category: Option<Category>,
    /// New price in dollars, 0 to 100000, at most 2 decimal places.
    #[serde(default)]
    #[schema(value_type = Option<PriceUsd>)]
    pub price_usd: Option<f64>,
    /// New price in cents, 0 to 10000000.
    #[serde(default)]
    #[schema(value_type = Option<PriceCents>)]
    pub price_cents: Option<i64>,
    /// New quantity, 1 to 1000000000.
    #[serde(default)]
    #[schema(value_type = Option<Quantity>)]
    pub quantity: Option<i64>,
    /// New consumable flag.
    #[serde(default)]
    pub is_consumable: Option<bool>,
    /// New shelf eligibility.
    #[serde(default)]
    pub fallback_eligible: Option<bool>,
    /// New art: an asset id of this game's library.
    #[serde(default)]
    #[schema(pattern = "^[0-9a-f]{24}$")]
    pub image: Option<String>,
    /// New description, at most 2000 characters.
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// New value override, 0 to 1000000; `null` clears it.
    #[serde(default, deserialize_with = "some_nullable")]
    #[schema(value_type = Option<f64>, minimum = 0, maximum = 1000000)]
    pub value_override_usd: Option<Option<f64>>,
    /// New granted currency: one of the game's currencies.
    #[serde(default)]
    #[schema(value_type = Option<SnakeCaseId>)]
    pub currency_id: Option<String>,
    /// New earned price.
    #[serde(default)]
    pub earned_price: Option<EarnedPrice>,
    /// New loot-box flag.
    #[serde(default)]
    pub is_loot_box: Option<bool>,
    /// New store products: replaces both ids (a store left out has none afterwards);
    /// `null` keeps them.
    #[serde(default)]
    pub store_products: Option<StoreProducts>,
}

fn some_nullable<'de, D>(de: D) -> Result<Option<Option<f64>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<f64>::deserialize(de).map(Some)
}

/// Converts dollars to cents, refusing more than 2 decimal places.
///
/// "Decimal places" are those of the number the client wrote: `usd` is accepted exactly when
/// a number of whole cents reads back as it, so `0.07` (stored as 0.07000000000000000666...)
/// passes and `1.000000001` or `1e-10` do not (they are not rounded to a cent behind the
/// client's back).
pub fn usd_to_cents(usd: f64) -> Option<i64> {
    if !usd.is_finite() {
        return None;
    }
    let cents = (usd * 100.0).round();
    if cents.abs() > 1e15 || cents / 100.0 != usd {
        return None;
    }
    // The bound above keeps the conversion exact.
    Some(cents as i64)
}

/// Cents to dollars.
pub fn cents_to_usd(cents: i64) -> f64 {
    // Prices are bounded by MAX_PRICE_CENTS, far inside f64's exact integers.
    cents as f64 / 100.0
}

/// Rounds dollars to whole cents for the wire.
pub fn round_usd(usd: f64) -> f64 {
    (usd * 100.0).round() / 100.0
}

impl ItemInput {
    /// Validates the input and builds the stored item (value still zero; see
    /// [`recompute_values`]). `existing` is the stored item on an upsert, whose creation
    /// time is kept.
    pub fn into_item(
        self,
        currencies: &[Currency],
        existing: Option<&Item>,
        now: DateTime<Utc>,
    ) -> Result<Item, Vec<FieldError>> {
        let mut e = Errors::default();
        if !is_snake_case(&self.item_id, MAX_ID_LEN) {
            e.push(
                "item_id",
                "must be snake_case (a-z, 0-9, single underscores, starting with a letter), at most 64 characters",
            );
        }
        let price_cents = resolve_price(self.price_usd, self.price_cents, &mut e);
        let item = Item {
            item_id: self.item_id,
            item_name: self.item_name,
            category: self.category,
            price_usd: cents_to_usd(price_cents),
            price_cents,
            quantity: self.quantity,
            is_consumable: self.is_consumable,
            fallback_eligible: self.fallback_eligible,
            image: self.image,
            image_url: None,
            description: self.description,
            value_usd: 0.0,
            value_override_usd: self.value_override_usd,
            currency_id: self.currency_id,
            earned_price: self.earned_price,
            is_loot_box: self.is_loot_box,
            store_products: self.store_products,
            created_at: existing.map_or(now, |x| x.created_at),
            updated_at: now,
            deleted_at: None,
        };
        check_item(&item, currencies, &mut e);
        e.finish(item)
    }
}

/// Applies a patch to a stored item, validating the result as a whole.
pub fn apply_patch(
    mut item: Item,
    patch: ItemPatch,
    currencies: &[Currency],
    now: DateTime<Utc>,
) -> Result<Item, Vec<FieldError>> {
    let mut e = Errors::default();
    if let Some(id) = &patch.item_id
        && *id != item.item_id
    {
        e.push(
            "item_id",
            "item_id cannot be changed; create a new item instead",
        );
    }
    if patch.price_usd.is_some() || patch.price_cents.is_some() {
        item.price_cents = resolve_price(patch.price_usd, patch.price_cents, &mut e);
        item.price_usd = cents_to_usd(item.price_cents);
    }
    macro_rules! set {
        ($($f:ident),*) => { $( if let Some(v) = patch.$f { item.$f = v; } )* };
    }
    macro_rules! set_opt {
        ($($f:ident),*) => { $( if let Some(v) = patch.$f { item.$f = Some(v); } )* };
    }
    set!(
        item_name,
        category,
        is_consumable,
        fallback_eligible,
        is_loot_box,
        value_override_usd,
        store_products
    );
    set_opt!(quantity, image, description, currency_id, earned_price);
    item.updated_at = now;
    check_item(&item, currencies, &mut e);
    e.finish(item)
}

fn resolve_price(usd: Option<f64>, cents: Option<i64>, e: &mut Errors) -> i64 {
    let from_usd = usd.map(|u| {
        usd_to_cents(u).unwrap_or_else(|| {
            e.push(
                "price_usd",
                "must be a number with at most 2 decimal places",
            );
            0
        })
    });
    match (from_usd, cents) {
        (Some(a), Some(b)) if a != b => {
            e.push(
                "price_cents",
                format!("price_usd is {a} cents but price_cents is {b}: they must agree"),
            );
            b
        }
        (Some(a), _) => a,
        (None, Some(b)) => b,
        (None, None) => {
            e.push("price_usd", "price_usd or price_cents is required");
            0
        }
    }
}

/// Field rules shared by create, upsert and patch.
fn check_item(item: &Item, currencies: &[Currency], e: &mut Errors) {
    e.text("item_name", &item.item_name, MAX_NAME_LEN);
    item.store_products.validate(e);
    if item.price_cents < 0 {
        e.push("price_usd", "must not be negative");
    } else if item.price_cents > MAX_PRICE_CENTS {
        e.push("price_usd", "must be at most 100000.00");
    }
    if let Some(d) = &item.description
        && d.chars().count() > MAX_DESCRIPTION_LEN
    {
        e.push(
            "description",
            format!("must be at most {MAX_DESCRIPTION_LEN} characters"),
        );
    }
    if let Some(img) = &item.image
        && (img.is_empty() || img.len() > 64)
    {
        e.push(
            "image",
            "must be an asset id from this game's asset library",
        );
    }
    match item.quantity {
        Some(q) if q <= 0 || q > 1_000_000_000 => {
            e.push("quantity", "must be between 1 and 1000000000");
        }
        None if item.category == Category::Currency => {
            e.push("quantity", "is required for currency items");
        }
        _ => {}
    }
    let known = |id: &str| currencies.iter().any(|c| c.currency_id == id);
    match (&item.currency_id, item.category) {
        (Some(id), _) if !known(id) => e.push("currency_id", format!("unknown currency `{id}`")),
        (Some(_), c) if c != Category::Currency => {
            e.push("currency_id", "only currency items grant a currency");
        }
        (None, Category::Currency) if currencies.len() > 1 => {
            e.push(
                "currency_id",
                "is required for currency items when the game has several currencies",
            );
        }
        _ => {}
    }
    if let Some(ep) = &item.earned_price {
        if !known(&ep.currency_id) {
            e.push(
                "earned_price.currency_id",
                format!("unknown currency `{}`", ep.currency_id),
            );
        }
        if ep.amount <= 0 || ep.amount > 1_000_000_000 {
            e.push("earned_price.amount", "must be between 1 and 1000000000");
        }
    }
    if let Some(v) = item.value_override_usd
        && !(v.is_finite() && (0.0..=1_000_000.0).contains(&v))
    {
        e.push("value_override_usd", "must be between 0 and 1000000");
    }
}

/// The currency an item grants: its `currency_id`, or the game's only currency.
pub fn granted_currency<'a>(item: &'a Item, currencies: &'a [Currency]) -> Option<&'a str> {
    if item.category != Category::Currency {
        return None;
    }
    item.currency_id.as_deref().or(match currencies {
        [only] => Some(only.currency_id.as_str()),
        _ => None,
    })
}

/// The USD value of one unit of each currency.
///
/// A currency's override (`usd_per_unit`) wins. Otherwise its face rate is the per-unit cost
/// of its smallest live pack (fewest units; the cheaper one on a tie). A pack's cost is its
/// real-money price, or, for a pack bought with another currency (gold bought with gems), its
/// earned price times that currency's value, so rates resolve in dependency order. A
/// currency with no pack has no rate (its packs and prices are worth 0).
pub fn currency_rates(items: &[Item], currencies: &[Currency]) -> HashMap<String, f64> {
    let mut rates: HashMap<String, f64> = currencies
        .iter()
        .filter_map(|c| c.usd_per_unit.map(|v| (c.currency_id.clone(), v)))
        .collect();
    // Each pass resolves the currencies whose smallest pack's cost is known; a chain of
    // currencies is at most `currencies.len()` long, so that many passes suffice.
    for _ in 0..=currencies.len() {
        let mut progressed = false;
        for c in currencies {
            if rates.contains_key(&c.currency_id) {
                continue;
            }
            let smallest = items
                .iter()
                .filter(|i| i.is_live() && granted_currency(i, currencies) == Some(&c.currency_id))
                .filter_map(|i| i.quantity.filter(|q| *q > 0).map(|q| (q, i)))
                .min_by(|(qa, a), (qb, b)| qa.cmp(qb).then(a.price_cents.cmp(&b.price_cents)));
            let Some((qty, pack)) = smallest else {
                continue;
            };
            let cost = match &pack.earned_price {
                Some(ep) => match rates.get(&ep.currency_id) {
                    Some(r) => ep.amount as f64 * r,
                    None => continue,
                },
                None => cents_to_usd(pack.price_cents),
            };
            rates.insert(c.currency_id.clone(), cost / qty as f64);
            progressed = true;
        }
        if !progressed {
            break;
        }
    }
    rates
}

/// The computed value of one item, given the currency rates.
pub fn item_value(item: &Item, currencies: &[Currency], rates: &HashMap<String, f64>) -> f64 {
    if let (Some(cur), Some(q)) = (granted_currency(item, currencies), item.quantity)
        && let Some(rate) = rates.get(cur)
    {
        return round_usd(q as f64 * rate);
    }
    if let Some(ep) = &item.earned_price {
        return round_usd(ep.amount as f64 * rates.get(&ep.currency_id).copied().unwrap_or(0.0));
    }
    item.price_usd
}

/// Recomputes `value_usd` of every item, because one pack's price or quantity changes the
/// face rate and therefore the value of every pack and every item priced in that currency.
/// Returns the ids of the items whose value changed.
pub fn recompute_values(items: &mut [Item], currencies: &[Currency]) -> Vec<String> {
    let rates = currency_rates(items, currencies);
    let mut changed = Vec::new();
    for item in items.iter_mut() {
        let v = item_value(item, currencies, &rates);
        if (v - item.value_usd).abs() > f64::EPSILON {
            item.value_usd = v;
            changed.push(item.item_id.clone());
        }
    }
    changed
}

/// The currency-removal rule: a live item may not be left pointing at a currency that
/// `currencies` no longer has (it could never be saved again). Reports every such use.
pub fn check_currency_removal(items: &[Item], currencies: &[Currency], errors: &mut Errors) {
    let known = |id: &str| currencies.iter().any(|c| c.currency_id == id);
    for item in items.iter().filter(|i| i.is_live()) {
        let used = item
            .currency_id
            .iter()
            .chain(item.earned_price.iter().map(|p| &p.currency_id));
        for id in used.filter(|id| !known(id)) {
            errors.push(
                "currencies",
                format!("item `{}` still uses currency `{id}`", item.item_id),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::currencies;

    fn input(id: &str, json: serde_json::Value) -> ItemInput {
        let mut v = json;
        v["item_id"] = id.into();
        v["item_name"] = id.into();
        serde_json::from_value(v).expect("valid input")
    }

    fn build(inputs: Vec<ItemInput>) -> Vec<Item> {
        let now = Utc::now();
        let mut items: Vec<Item> = inputs
            .into_iter()
            .map(|i| i.into_item(&currencies(), None, now).expect("valid"))
            .collect();
        recompute_values(&mut items, &currencies());
        items
    }

    #[test]
    fn discounted_large_pack_is_worth_more_than_its_price() {
        let items = build(vec![
            input(
                "gems_100",
                serde_json::json!({"category": "currency_pack", "currency_id": "gems", "quantity": 100, "price_usd": 0.99}),
            ),
            input(
                "gems_1000",
                serde_json::json!({"category": "currency", "currency_id": "gems", "quantity": 1000, "price_usd": 4.99}),
            ),
            input(
                "sword",
                serde_json::json!({"category": "equipment", "price_cents": 299}),
            ),
            input(
                "gold_1000",
                serde_json::json!({"category": "currency", "currency_id": "gold", "quantity": 1000, "price_usd": 0, "earned_price": {"currency_id": "gems", "amount": 100}}),
            ),
            input(
                "potion",
                serde_json::json!({"category": "consumable", "price_usd": 0, "earned_price": {"currency_id": "gold", "amount": 2000}}),
            ),
        ]);
        let v: HashMap<_, _> = items
            .iter()
            .map(|i| (i.item_id.as_str(), i.value_usd))
            .collect();
        assert_eq!(v["gems_100"], 0.99);
        assert_eq!(v["gems_1000"], 9.90);
        assert_eq!(v["sword"], 2.99);
        // 100 gems at $0.0099 each buy 1000 gold: gold is worth $0.00099 a unit.
        assert_eq!(v["gold_1000"], 0.99);
        assert_eq!(v["potion"], 1.98);
    }

    #[test]
    fn price_forms_must_agree() {
        let bad = input(
            "x",
            serde_json::json!({"category": "consumable", "price_usd": 1.0, "price_cents": 99}),
        );
        let err = bad
            .into_item(&currencies(), None, Utc::now())
            .expect_err("disagree");
        assert_eq!(err[0].field, "price_cents");
        let three_places = input(
            "x",
            serde_json::json!({"category": "consumable", "price_usd": 1.005}),
        );
        assert!(
            three_places
                .into_item(&currencies(), None, Utc::now())
                .is_err()
        );
    }

    #[test]
    fn a_price_has_at_most_two_decimal_places_as_written() {
        for (usd, cents) in [(0.07, 7), (19.99, 1999), (0.29, 29), (4.35, 435), (0.0, 0)] {
            assert_eq!(usd_to_cents(usd), Some(cents), "{usd}");
        }
        for usd in [1.000000001, 1e-10, 5e-324, 0.001, 1.005, f64::NAN, 1e300] {
            assert_eq!(usd_to_cents(usd), None, "{usd}");
        }
    }

    #[test]
    fn currency_item_needs_quantity_and_rejects_negative_price() {
        let bad = input(
            "x",
            serde_json::json!({"category": "currency", "currency_id": "gems", "price_usd": -1.0}),
        );
        let err = bad
            .into_item(&currencies(), None, Utc::now())
            .expect_err("bad");
        let fields: Vec<_> = err.iter().map(|e| e.field.as_str()).collect();
        assert!(fields.contains(&"quantity"));
        assert!(fields.contains(&"price_usd"));
    }

    #[test]
    fn patch_cannot_change_item_id() {
        let item = build(vec![input(
            "sword",
            serde_json::json!({"category": "equipment", "price_cents": 299}),
        )])
        .remove(0);
        let patch = ItemPatch {
            item_id: Some("axe".into()),
            ..ItemPatch::default()
        };
        assert!(apply_patch(item, patch, &currencies(), Utc::now()).is_err());
    }

    #[test]
    fn override_wins() {
        let mut item = build(vec![input(
            "sword",
            serde_json::json!({"category": "equipment", "price_cents": 299}),
        )])
        .remove(0);
        item.value_override_usd = Some(5.0);
        assert_eq!(item.effective_value_usd(), 5.0);
    }
}
