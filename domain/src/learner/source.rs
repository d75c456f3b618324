//! Where an offer the learner learns from came from, and which arm of the ladder it stands
//! for.

use crate::bandit::{AI_CATEGORIES, Arm, PRICE_LADDER_CENTS};
use crate::category::Category;

/// Which level served an offer the learner learns from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The AI level itself: the offer counts with weight 1.
    Ai,
    /// Another level (template, bundle, shelf): the offer counts with
    /// [`super::LearnerSettings::fallback_weight`].
    Fallback,
}

/// The ladder arm nearest (in price ratio) to an item of `category` at `price_cents`; `None`
/// outside the AI categories or for a non-positive price.
pub fn nearest_arm(category: Category, price_cents: i64) -> Option<Arm> {
    if !AI_CATEGORIES.contains(&category) || price_cents <= 0 {
        return None;
    }
    let ratio = |p: i64| (p as f64 / price_cents as f64).ln().abs();
    let price = PRICE_LADDER_CENTS
        .iter()
        .copied()
        .min_by(|a, b| ratio(*a).total_cmp(&ratio(*b)))?;
    Some(Arm {
        category,
        price_cents: price,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_arm_is_nearest_in_ratio() {
        let at = |c, p| nearest_arm(c, p).map(|a| a.price_cents);
        assert_eq!(at(Category::Currency, 99), Some(99));
        // 450 is nearer 499 than 299 in ratio (and in cents).
        assert_eq!(at(Category::Consumable, 450), Some(499));
        // 700 is 1.40 x 499 and 0.70 x 999: nearer 999 in ratio, nearer 499 in cents.
        assert_eq!(at(Category::Consumable, 720), Some(999));
        assert_eq!(at(Category::Equipment, 1), Some(99));
        assert_eq!(at(Category::Equipment, 1_000_000), Some(4999));
        assert_eq!(nearest_arm(Category::Cosmetic, 499), None);
        assert_eq!(nearest_arm(Category::Currency, 0), None);
        assert_eq!(nearest_arm(Category::Currency, -5), None);
    }
}
