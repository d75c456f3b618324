//! The policy engine: the studio's guardrails applied to items, offers and sessions.
//!
//! Every level of the pipeline runs its candidates through these checks, so no level can
//! serve an item above the price cap or a loot box in a blocked country, whatever model or
//! template proposed it.

use chrono::{DateTime, Utc};

use crate::catalogue::Item;
use crate::game::Guardrails;

/// Whether an offer (or one item of it) at this price is within the studio's price cap.
/// A negative price is never allowed: it would pay the player.
pub fn price_allowed(guardrails: &Guardrails, price_cents: i64) -> bool {
    price_cents >= 0
        && guardrails
            .max_price_cents
            .is_none_or(|max| price_cents <= max)
}

/// Whether a loot box may be shown to a player from `country`.
///
/// Country codes compare case-insensitively. A player whose country is unknown gets no loot
/// box while any country is blocked: the engine cannot prove the player is outside Belgium
/// or the Netherlands, and the restriction is a legal one.
pub fn loot_box_allowed(guardrails: &Guardrails, country: Option<&str>) -> bool {
    let blocked = &guardrails.loot_box_blocked_countries;
    if blocked.is_empty() {
        return true;
    }
    country.is_some_and(|c| !blocked.iter().any(|b| b.eq_ignore_ascii_case(c)))
}

/// The per-item checks: the price cap and, for a loot box, the player's country.
pub fn item_allowed(guardrails: &Guardrails, item: &Item, country: Option<&str>) -> bool {
    price_allowed(guardrails, item.price_cents)
        && (!item.is_loot_box || loot_box_allowed(guardrails, country))
}

/// Whether the session may see one more offer now: at most `max_offers_per_session` offers,
/// at least `min_offer_interval_s` seconds apart. Both caps are off unless set.
pub fn frequency_allowed(
    guardrails: &Guardrails,
    offers_shown: u32,
    last_offer_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> bool {
    if guardrails
        .max_offers_per_session
        .is_some_and(|max| offers_shown >= max)
    {
        return false;
    }
    match (guardrails.min_offer_interval_s, last_offer_at) {
        (Some(gap), Some(last)) => (now - last).num_seconds() >= i64::from(gap),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::category::Category;
    use crate::testing;

    fn item(price_cents: i64, is_loot_box: bool) -> Item {
        Item {
            is_loot_box,
            ..testing::item("x", Category::Consumable, price_cents, 0.0)
        }
    }

    #[test]
    fn price_cap() {
        let mut g = Guardrails::default();
        assert!(price_allowed(&g, 1_000_000));
        assert!(!price_allowed(&g, -1));
        g.max_price_cents = Some(499);
        assert!(price_allowed(&g, 499));
        assert!(!price_allowed(&g, 500));
        assert!(!item_allowed(&g, &item(999, false), Some("FR")));
    }

    #[test]
    fn loot_boxes_blocked_case_insensitively() {
        let g = Guardrails::default();
        let lb = item(99, true);
        assert!(!item_allowed(&g, &lb, Some("be")));
        assert!(!item_allowed(&g, &lb, Some("NL")));
        assert!(!item_allowed(&g, &lb, None));
        assert!(item_allowed(&g, &lb, Some("fr")));
        assert!(item_allowed(&g, &item(99, false), Some("BE")));
        let open = Guardrails {
            loot_box_blocked_countries: vec![],
            ..Guardrails::default()
        };
        assert!(item_allowed(&open, &lb, None));
    }

    #[test]
    fn frequency_caps() {
        let now = Utc::now();
        let mut g = Guardrails::default();
        assert!(frequency_allowed(&g, 100, Some(now), now));
        g.max_offers_per_session = Some(2);
        assert!(frequency_allowed(&g, 1, None, now));
        assert!(!frequency_allowed(&g, 2, None, now));
        g.min_offer_interval_s = Some(60);
        let recent = now - chrono::Duration::seconds(30);
        let old = now - chrono::Duration::seconds(60);
        assert!(!frequency_allowed(&g, 0, Some(recent), now));
        assert!(frequency_allowed(&g, 0, Some(old), now));
    }
}
