//! The AI level's arms and the player segments.
//!
//! An arm is a category the AI may sell (currency, consumable, equipment: bundles are L3
//! only and cosmetics are offered only when everything else is exhausted) at one point of a
//! fixed price ladder; the learner ([`crate::learner`]) picks one per decision. A segment
//! (platform bucket x spender tier) groups players who buy alike, for the approval
//! simulation's population.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::category::Category;

/// The price points the AI may choose, in cents.
pub const PRICE_LADDER_CENTS: [i64; 6] = [99, 299, 499, 999, 1999, 4999];
/// The categories the AI may choose: bundles are served by L3 only, and cosmetics only as a
/// last resort.
pub const AI_CATEGORIES: [Category; 3] = [
    Category::Currency,
    Category::Consumable,
    Category::Equipment,
];
/// Lifetime spend from which a payer counts as a whale ($100).
pub const WHALE_SPEND_CENTS: i64 = 10_000;
/// Number of arms: every AI category at every price point.
pub const ARM_COUNT: usize = AI_CATEGORIES.len() * PRICE_LADDER_CENTS.len();
/// Number of segments: 3 platform buckets x 3 spender tiers.
pub const SEGMENT_COUNT: usize = 9;

/// One thing the AI can try: a category at a price point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub struct Arm {
    /// Category of the offered item.
    pub category: Category,
    /// Price point of the ladder, in cents.
    pub price_cents: i64,
}

impl Arm {
    /// Position in the dense arm table, or `None` for an arm off the ladder or outside the
    /// AI categories (nothing to learn about it).
    pub fn index(self) -> Option<usize> {
        let c = AI_CATEGORIES.iter().position(|c| *c == self.category)?;
        let p = PRICE_LADDER_CENTS
            .iter()
            .position(|p| *p == self.price_cents)?;
        Some(c * PRICE_LADDER_CENTS.len() + p)
    }

    /// The arm at a position of the dense arm table (`index < ARM_COUNT`).
    fn at(index: usize) -> Self {
        let n = PRICE_LADDER_CENTS.len();
        Self {
            category: AI_CATEGORIES[(index / n) % AI_CATEGORIES.len()],
            price_cents: PRICE_LADDER_CENTS[index % n],
        }
    }

    /// Every arm, category-major, cheapest first: the order the snapshot indexes them in.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..ARM_COUNT).map(Self::at)
    }
}

/// Platform bucket of a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Platform {
    /// Apple devices.
    Ios,
    /// Android devices.
    Android,
    /// Anything else or unknown.
    Other,
}

/// Spender tier of a segment, from lifetime real-money spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum SpenderTier {
    /// Never paid.
    NonPayer,
    /// Paid, less than [`WHALE_SPEND_CENTS`].
    Payer,
    /// Paid at least [`WHALE_SPEND_CENTS`].
    Whale,
}

/// The group of players an arm's statistics are kept for: players who buy alike share
/// what the model learns, without one model per player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub struct Segment {
    /// Platform bucket.
    pub platform: Platform,
    /// Spender tier.
    pub tier: SpenderTier,
}

impl Segment {
    /// The segment of a player from the `platform` attribute (case-insensitive `ios` or
    /// `android`, anything else is `Other`) and lifetime spend in cents.
    pub fn of(platform: Option<&str>, spend_cents: i64) -> Self {
        let platform = match platform {
            Some(p) if p.eq_ignore_ascii_case("ios") => Platform::Ios,
            Some(p) if p.eq_ignore_ascii_case("android") => Platform::Android,
            _ => Platform::Other,
        };
        let tier = if spend_cents <= 0 {
            SpenderTier::NonPayer
        } else if spend_cents < WHALE_SPEND_CENTS {
            SpenderTier::Payer
        } else {
            SpenderTier::Whale
        };
        Self { platform, tier }
    }

    /// Every segment, in [`Segment::index`] order.
    pub fn all() -> impl Iterator<Item = Self> {
        (0..SEGMENT_COUNT).map(Self::at)
    }

    /// Position of the segment among the [`SEGMENT_COUNT`] segments.
    pub fn index(self) -> usize {
        let p = match self.platform {
            Platform::Ios => 0,
            Platform::Android => 1,
            Platform::Other => 2,
        };
        let t = match self.tier {
            SpenderTier::NonPayer => 0,
            SpenderTier::Payer => 1,
            SpenderTier::Whale => 2,
        };
        p * 3 + t
    }

    fn at(index: usize) -> Self {
        let platform = match index / 3 {
            0 => Platform::Ios,
            1 => Platform::Android,
            _ => Platform::Other,
        };
        let tier = match index % 3 {
            0 => SpenderTier::NonPayer,
            1 => SpenderTier::Payer,
            _ => SpenderTier::Whale,
        };
        Self { platform, tier }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_from_features() {
        assert_eq!(
            Segment::of(Some("IOS"), 0),
            Segment {
                platform: Platform::Ios,
                tier: SpenderTier::NonPayer
            }
        );
        assert_eq!(Segment::of(Some("android"), 1).tier, SpenderTier::Payer);
        assert_eq!(
            Segment::of(None, WHALE_SPEND_CENTS).tier,
            SpenderTier::Whale
        );
        assert_eq!(Segment::of(Some("web"), 0).platform, Platform::Other);
        let all: Vec<usize> = Segment::all().map(Segment::index).collect();
        assert_eq!(all, (0..SEGMENT_COUNT).collect::<Vec<_>>());
    }

    #[test]
    fn arms_round_trip_their_index() {
        for (i, arm) in Arm::all().enumerate() {
            assert_eq!(arm.index(), Some(i));
        }
        let off = Arm {
            category: Category::Currency,
            price_cents: 100,
        };
        assert_eq!(off.index(), None);
    }
}
