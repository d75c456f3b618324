//! The cold-start prior: what a new game believes before its first offer.
//!
//! The model learns a correction to a fixed prior log-odds per arm and context, so the prior
//! never enters the statistics the nodes add up. The prior log-odds of an arm are
//! `logit(min(0.5, PRIOR_REVENUE_CENTS / price))`: every price point of the game's range then
//! starts with the same expected revenue, so cheap arms are explored as much as dear ones (a
//! flat prior would make the dearest arm win nearly every fresh draw). A price point outside
//! the game's range starts [`OUT_OF_RANGE_LOGIT`] lower, and the category the genre template
//! serves for the trigger [`PREFERRED_LOGIT`] higher.

use std::collections::HashMap;

use crate::bandit::{AI_CATEGORIES, ARM_COUNT, Arm, PRICE_LADDER_CENTS};
use crate::category::Category;

/// Expected revenue per offer, in cents, that the prior gives every price point of the range.
pub const PRIOR_REVENUE_CENTS: f64 = 20.0;
/// Log-odds added to the category the genre template serves for a trigger: about 2.7 times
/// the odds, a lead that a few dozen offers can overturn.
pub const PREFERRED_LOGIT: f64 = 1.0;
/// Log-odds added to a price point outside the game's price range.
pub const OUT_OF_RANGE_LOGIT: f64 = -3.0;

/// Whether the prior leans towards the genre template's category for each moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moments {
    /// It does: a new game, which knows nothing better than its genre.
    FromTemplate,
    /// It does not: the learner saw the players' tastes change, and the template may
    /// describe the old ones.
    Unknown,
}

/// What a game believes before it has learned anything.
#[derive(Debug, Clone, PartialEq)]
pub struct Prior {
    preferred: HashMap<String, Category>,
    min_price_cents: i64,
    max_price_cents: i64,
}

impl Default for Prior {
    /// No preferred category and the whole ladder in range.
    fn default() -> Self {
        Self {
            preferred: HashMap::new(),
            min_price_cents: 0,
            max_price_cents: i64::MAX,
        }
    }
}

impl Prior {
    /// The prior of a game from its genre template (the category served for each trigger)
    /// and the range of its catalogue's prices, in cents.
    pub fn new(
        preferred: impl IntoIterator<Item = (String, Category)>,
        min_price_cents: i64,
        max_price_cents: i64,
    ) -> Self {
        Self {
            preferred: preferred.into_iter().collect(),
            min_price_cents,
            max_price_cents,
        }
    }

    /// The prior log-odds of a purchase of every arm (in [`Arm::all`] order) for `trigger`,
    /// leaning towards the template's category for it when `moments` says so.
    pub fn logits(&self, trigger: &str, moments: Moments) -> [f64; ARM_COUNT] {
        let preferred = match moments {
            Moments::FromTemplate => self.preferred.get(trigger).copied(),
            Moments::Unknown => None,
        };
        let mut out = [0.0; ARM_COUNT];
        for (c, category) in AI_CATEGORIES.iter().enumerate() {
            for (p, price) in PRICE_LADDER_CENTS.iter().enumerate() {
                let rate = (PRIOR_REVENUE_CENTS / *price as f64).min(0.5);
                let mut logit = (rate / (1.0 - rate)).ln();
                if *price < self.min_price_cents || *price > self.max_price_cents {
                    logit += OUT_OF_RANGE_LOGIT;
                }
                if preferred == Some(*category) {
                    logit += PREFERRED_LOGIT;
                }
                out[c * PRICE_LADDER_CENTS.len() + p] = logit;
            }
        }
        out
    }

    /// The prior log-odds of one arm for a new game; `None` for an arm off the ladder.
    pub fn logit(&self, trigger: &str, arm: Arm) -> Option<f64> {
        Some(self.logits(trigger, Moments::FromTemplate)[arm.index()?])
    }

    /// Bytes the prior holds on the heap (its trigger map), for the learner's memory bound.
    pub(super) fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(String, Category)>() + std::mem::size_of::<u64>();
        self.preferred.capacity() * entry
            + self.preferred.keys().map(String::capacity).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn revenue(logit: f64, price: i64) -> f64 {
        price as f64 / (1.0 + (-logit).exp())
    }

    #[test]
    fn every_price_in_range_starts_with_the_same_revenue() {
        let prior = Prior::new([("currency_low".to_owned(), Category::Currency)], 99, 1999);
        let arm = |category, price_cents| Arm {
            category,
            price_cents,
        };
        let r = |a: Arm| {
            revenue(
                prior.logit("currency_low", a).expect("on ladder"),
                a.price_cents,
            )
        };
        let (cheap, dear) = (
            r(arm(Category::Consumable, 99)),
            r(arm(Category::Consumable, 1999)),
        );
        assert!((cheap - dear).abs() < 0.01 * dear, "{cheap} {dear}");
        assert!(r(arm(Category::Consumable, 4999)) < 0.1 * dear);
        assert!(r(arm(Category::Currency, 999)) > 2.0 * r(arm(Category::Consumable, 999)));
        // Once tastes changed, the template's category leads no more.
        let after = prior.logits("currency_low", Moments::Unknown);
        let index = |a: Arm| a.index().expect("on ladder");
        assert_eq!(
            after[index(arm(Category::Currency, 999))],
            after[index(arm(Category::Consumable, 999))]
        );
        // Another trigger has no preferred category.
        let other = prior.logit("boss_raid", arm(Category::Currency, 999));
        assert_eq!(
            other,
            prior.logit("boss_raid", arm(Category::Equipment, 999))
        );
    }
}
