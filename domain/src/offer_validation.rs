//! The rules a studio's offer configuration must follow before it is stored: L2 templates,
//! L3 bundles and price experiments. Every rule reports every violation it finds, each with
//! the index of the entry it concerns.

use std::collections::HashSet;

use crate::catalogue::{Item, MAX_PRICE_CENTS, usd_to_cents};
use crate::category::Category;
use crate::offer::{Bundle, Experiment, MAX_MIN_SAMPLE, Template};
use crate::pipeline::MAX_DISCOUNT_PCT;
use crate::validation::{Errors, FieldError, MAX_NAME_LEN, is_snake_case};

/// Most templates, bundles or experiments per game: far above real use, bounded so one
/// game cannot make every decision slow.
pub const MAX_CONFIG_ENTRIES: usize = 100;

/// Checks a full replacement of a game's templates: at most [`MAX_CONFIG_ENTRIES`], one per
/// event type, 1 to 5 categories (never bundles, which only L3 serves), a discount of at most
/// [`MAX_DISCOUNT_PCT`] and 1 to 10 items.
pub fn validate_templates(templates: &[Template], e: &mut Errors) {
    if templates.len() > MAX_CONFIG_ENTRIES {
        e.push(
            "templates",
            format!("at most {MAX_CONFIG_ENTRIES} templates"),
        );
    }
    let mut seen = HashSet::new();
    for (i, t) in templates.iter().enumerate() {
        if !is_snake_case(&t.event_type, 64) {
            e.0.push(FieldError::new("event_type", "must be a snake_case event name").at(i));
        }
        if !seen.insert(t.event_type.as_str()) {
            e.0.push(FieldError::new("event_type", "one template per event type").at(i));
        }
        if t.categories.is_empty() || t.categories.len() > 5 {
            e.0.push(FieldError::new("categories", "between 1 and 5 categories").at(i));
        }
        if t.categories.contains(&Category::Bundle) {
            e.0.push(
                FieldError::new("categories", "bundles are served by L3 studio bundles only").at(i),
            );
        }
        if t.discount_pct.is_some_and(|d| d > MAX_DISCOUNT_PCT) {
            e.0.push(FieldError::new("discount_pct", "at most 90").at(i));
        }
        if t.max_items.is_some_and(|m| m == 0 || m > 10) {
            e.0.push(FieldError::new("max_items", "between 1 and 10").at(i));
        }
    }
}

/// Checks a bundle against the game's catalogue (`items` sorted by id, as a game's live
/// view keeps them): 1 to 50 live items, a price in cents within the catalogue's range, and
/// at most 20 snake_case trigger events.
pub fn validate_bundle(bundle: &Bundle, items: &[Item], e: &mut Errors) {
    e.text("name", &bundle.name, MAX_NAME_LEN);
    if bundle.item_ids.is_empty() || bundle.item_ids.len() > 50 {
        e.push("item_ids", "between 1 and 50 items");
    }
    for (i, id) in bundle.item_ids.iter().enumerate() {
        let live = items
            .binary_search_by(|it| it.item_id.as_str().cmp(id))
            .ok()
            .is_some_and(|pos| items[pos].is_live());
        if !live {
            e.0.push(FieldError::new("item_ids", format!("no live item `{id}`")).at(i));
        }
    }
    if !usd_to_cents(bundle.price_usd).is_some_and(|c| (0..=MAX_PRICE_CENTS).contains(&c)) {
        e.push(
            "price_usd",
            "a non-negative price with at most 2 decimal places, up to 100000",
        );
    }
    if bundle.triggers.len() > 20 || bundle.triggers.iter().any(|t| !is_snake_case(t, 64)) {
        e.push("triggers", "at most 20 snake_case event names");
    }
    bundle.store_products.validate(e);
}

/// Checks an experiment: 1 to 10 uniquely named variants whose weights are not all 0, each
/// changing the price at most one way (a fixed price or a multiplier, within bounds), and a
/// `min_sample` from 1 to 10,000,000.
pub fn validate_experiment(exp: &Experiment, e: &mut Errors) {
    if exp.variants.is_empty() || exp.variants.len() > 10 {
        e.push("variants", "between 1 and 10 variants");
    }
    if exp
        .variants
        .iter()
        .map(|v| u64::from(v.weight))
        .sum::<u64>()
        == 0
    {
        e.push("variants", "the weights must not all be 0");
    }
    if !(1..=MAX_MIN_SAMPLE).contains(&exp.min_sample) {
        e.push("min_sample", "between 1 and 10000000");
    }
    let mut names = HashSet::new();
    for (i, v) in exp.variants.iter().enumerate() {
        e.text(&format!("variants[{i}].name"), &v.name, 64);
        if !names.insert(v.name.as_str()) {
            e.0.push(FieldError::new("name", "duplicate variant name").at(i));
        }
        if v.price_usd.is_some() && v.price_multiplier.is_some() {
            e.0.push(
                FieldError::new("price_usd", "set price_usd or price_multiplier, not both").at(i),
            );
        }
        if v.price_usd
            .is_some_and(|p| !(p.is_finite() && (0.0..=100_000.0).contains(&p)))
        {
            e.0.push(FieldError::new("price_usd", "between 0 and 100000").at(i));
        }
        if v.price_multiplier
            .is_some_and(|m| !(m.is_finite() && m > 0.0 && m <= 10.0))
        {
            e.0.push(FieldError::new("price_multiplier", "above 0 and at most 10").at(i));
        }
    }
}
