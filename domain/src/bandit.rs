//! The L1 learning model: Thompson sampling over (category, price point) arms per player
//! segment.
//!
//! An arm is a category the AI may sell (currency, consumable, equipment: bundles are L3
//! only and cosmetics are offered only when everything else is exhausted) at one point of a
//! fixed price ladder. A segment is a platform bucket crossed with a spender tier. Each arm of
//! each segment keeps `shown` and `purchases`; its conversion rate has the posterior
//! `Beta(1 + purchases, b0 + shown - purchases)`, and [`BanditState::sample`] draws one rate
//! per allowed arm and picks the highest expected revenue `draw x price`.
//!
//! The prior `b0 = 2 x price / 99 - 1` (1 for the 99-cent arm, so that arm's posterior is the
//! textbook `Beta(1 + purchases, 1 + failures)`) gives every fresh arm the same prior
//! expected revenue of 49.5 cents. With a flat `Beta(1, 1)` on every arm the dearest arm would
//! win nearly every fresh draw (a uniform draw times $49.99 almost always beats one times
//! $0.99), so the cheap arms would never be explored.
//!
//! Beta draws are two Gamma draws (`X / (X + Y)`), Gamma by Marsaglia and Tsang's method with
//! Box-Muller normals, so the crate needs no distribution library.

use std::f64::consts::TAU;

use rand::{Rng, RngExt};
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

/// An arm the model picked and the segment it picked it for: what a later show or
/// purchase of the offer is recorded against, even if the player's spend changed meanwhile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub struct ArmPick {
    /// The player's segment when the offer was made.
    pub segment: Segment,
    /// The arm offered.
    pub arm: Arm,
}

/// What a served L1 offer taught the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// The offer was shown to the player.
    Shown,
    /// The player bought it.
    Purchased,
}

/// Counts of one arm in one segment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    shown: u64,
    purchases: u64,
}

/// One persisted row of the model: the counts of one arm in one segment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ArmRecord {
    /// Segment the counts belong to.
    pub segment: Segment,
    /// The arm.
    pub arm: Arm,
    /// Offers of this arm shown to the segment.
    pub shown: u64,
    /// Purchases of those offers.
    pub purchases: u64,
}

/// The learned state of the L1 model. Serialises as a list of [`ArmRecord`]s (arms never
/// tried are left out) so it can be persisted and survive a change of the ladder: rows of
/// arms no longer on it are dropped when loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Vec<ArmRecord>", into = "Vec<ArmRecord>")]
pub struct BanditState {
    /// `SEGMENT_COUNT x ARM_COUNT`, segment-major; dense so sampling does no hashing.
    counts: Vec<Counts>,
}

impl Default for BanditState {
    fn default() -> Self {
        Self {
            counts: vec![Counts::default(); SEGMENT_COUNT * ARM_COUNT],
        }
    }
}

impl From<Vec<ArmRecord>> for BanditState {
    fn from(rows: Vec<ArmRecord>) -> Self {
        let mut state = Self::default();
        for row in rows {
            if let Some(c) = state.slot(row.segment, row.arm) {
                c.shown = c.shown.saturating_add(row.shown);
                c.purchases = c.purchases.saturating_add(row.purchases);
            }
        }
        state
    }
}

impl From<BanditState> for Vec<ArmRecord> {
    fn from(state: BanditState) -> Self {
        state
            .counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != Counts::default())
            .map(|(i, c)| ArmRecord {
                segment: Segment::at(i / ARM_COUNT),
                arm: Arm::at(i % ARM_COUNT),
                shown: c.shown,
                purchases: c.purchases,
            })
            .collect()
    }
}

impl BanditState {
    fn slot(&mut self, segment: Segment, arm: Arm) -> Option<&mut Counts> {
        let i = arm.index()?;
        self.counts.get_mut(segment.index() * ARM_COUNT + i)
    }

    /// Records that an offer of `arm` was shown to a player of `segment`. An arm off the
    /// ladder is ignored: there is nothing to learn about it.
    pub fn record_shown(&mut self, segment: Segment, arm: Arm) {
        if let Some(c) = self.slot(segment, arm) {
            c.shown = c.shown.saturating_add(1);
        }
    }

    /// Records a purchase of an offer of `arm` by a player of `segment`.
    pub fn record_purchase(&mut self, segment: Segment, arm: Arm) {
        if let Some(c) = self.slot(segment, arm) {
            c.purchases = c.purchases.saturating_add(1);
        }
    }

    /// Records what a served offer of `pick` taught the model.
    pub fn record(&mut self, pick: ArmPick, feedback: Feedback) {
        match feedback {
            Feedback::Shown => self.record_shown(pick.segment, pick.arm),
            Feedback::Purchased => self.record_purchase(pick.segment, pick.arm),
        }
    }

    /// `(shown, purchases)` of an arm in a segment, for dashboards and tests.
    pub fn counts(&self, segment: Segment, arm: Arm) -> Option<(u64, u64)> {
        let c = self
            .counts
            .get(segment.index() * ARM_COUNT + arm.index()?)?;
        Some((c.shown, c.purchases))
    }

    /// The expected conversion rate of `arm` in `segment`: the mean `alpha / (alpha + beta)`
    /// of its posterior, which is the prior's mean for an arm never shown there or off the
    /// ladder. What the approval simulation takes as the chance that one player takes the
    /// offer.
    pub fn posterior_mean(&self, segment: Segment, arm: Arm) -> f64 {
        let (shown, purchases) = self.counts(segment, arm).unwrap_or((0, 0));
        let alpha = 1.0 + purchases as f64;
        let beta = prior_beta(arm.price_cents) + shown.saturating_sub(purchases) as f64;
        alpha / (alpha + beta)
    }

    /// Thompson sampling: draws a conversion rate for every allowed arm from its posterior
    /// and returns the arm with the highest `draw x price`. `allowed` holds only the arms the
    /// guardrails permit and the catalogue can fill, so the model explores only inside the
    /// studio's bounds. `None` when no allowed arm is on the ladder.
    pub fn sample(&self, segment: Segment, allowed: &[Arm], rng: &mut impl Rng) -> Option<Arm> {
        let base = segment.index() * ARM_COUNT;
        let mut normals = Normals::default();
        let mut best: Option<(f64, Arm)> = None;
        for arm in allowed {
            let Some(c) = arm.index().and_then(|i| self.counts.get(base + i)) else {
                continue;
            };
            let failures = c.shown.saturating_sub(c.purchases);
            // Counts far beyond f64's exact integers do not occur; precision loss is harmless.
            let (alpha, beta) = (
                1.0 + c.purchases as f64,
                prior_beta(arm.price_cents) + failures as f64,
            );
            let score = beta_draw(alpha, beta, &mut normals, rng) * arm.price_cents as f64;
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, *arm));
            }
        }
        best.map(|(_, arm)| arm)
    }
}

/// Counts kept as named counters, so that every node can add what it learned to one
/// shared total (a store adds to named integers atomically) and read the total back. A name
/// is `<segment and arm as JSON>#s` (shown) or `#p` (purchases): stable across ladder
/// changes (a row of an arm no longer on the ladder is dropped when read back).
impl BanditState {
    /// The non-zero counts as named counters.
    pub fn to_counters(&self) -> Vec<(String, i64)> {
        let rows: Vec<ArmRecord> = self.clone().into();
        let mut out = Vec::with_capacity(rows.len() * 2);
        for row in rows {
            let Ok(name) = serde_json::to_string(&(row.segment, row.arm)) else {
                continue;
            };
            for (suffix, n) in [("#s", row.shown), ("#p", row.purchases)] {
                if n > 0 {
                    out.push((
                        format!("{name}{suffix}"),
                        i64::try_from(n).unwrap_or(i64::MAX),
                    ));
                }
            }
        }
        out
    }

    /// The state the named counters describe; names it does not know are ignored.
    pub fn from_counters(counters: &[(String, i64)]) -> Self {
        let mut state = Self::default();
        for (name, n) in counters {
            let Some((pair, kind)) = name.rsplit_once('#') else {
                continue;
            };
            let Ok((segment, arm)) = serde_json::from_str::<(Segment, Arm)>(pair) else {
                continue;
            };
            let n = u64::try_from(*n).unwrap_or(0);
            if let Some(c) = state.slot(segment, arm) {
                match kind {
                    "s" => c.shown = c.shown.saturating_add(n),
                    "p" => c.purchases = c.purchases.saturating_add(n),
                    _ => {}
                }
            }
        }
        state
    }

    /// Adds every count of `other` to this state.
    pub fn add(&mut self, other: &BanditState) {
        for (mine, theirs) in self.counts.iter_mut().zip(&other.counts) {
            mine.shown = mine.shown.saturating_add(theirs.shown);
            mine.purchases = mine.purchases.saturating_add(theirs.purchases);
        }
    }

    /// Whether nothing was ever recorded.
    pub fn is_empty(&self) -> bool {
        self.counts.iter().all(|c| *c == Counts::default())
    }
}

/// The prior failure count that gives an arm at `price_cents` the same prior expected
/// revenue as the cheapest ladder arm under `Beta(1, 1)`; at least 1.
fn prior_beta(price_cents: i64) -> f64 {
    let ratio = price_cents as f64 / PRICE_LADDER_CENTS[0] as f64;
    (2.0 * ratio - 1.0).max(1.0)
}

/// Box-Muller normals, two per pair of uniforms: the second is kept for the next call.
#[derive(Default)]
struct Normals {
    spare: Option<f64>,
}

impl Normals {
    fn next(&mut self, rng: &mut impl Rng) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        // 1 - [0, 1) is (0, 1]: the logarithm stays finite.
        let u1 = 1.0 - rng.random::<f64>();
        let u2 = rng.random::<f64>();
        let r = (-2.0 * u1.ln()).sqrt();
        let (s, c) = (TAU * u2).sin_cos();
        self.spare = Some(r * s);
        r * c
    }
}

/// A Gamma(`shape`, 1) draw for `shape >= 1` (Marsaglia and Tsang, 2000). Shapes here are
/// always at least 1 (`1 + purchases`, and the prior keeps the other side at least 1).
fn gamma_draw(shape: f64, normals: &mut Normals, rng: &mut impl Rng) -> f64 {
    let d = shape.max(1.0) - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normals.next(rng);
        let t = 1.0 + c * x;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = rng.random::<f64>();
        let x2 = x * x;
        if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// A Beta(`alpha`, `beta`) draw as `X / (X + Y)` of two Gamma draws.
fn beta_draw(alpha: f64, beta: f64, normals: &mut Normals, rng: &mut impl Rng) -> f64 {
    let x = gamma_draw(alpha, normals, rng);
    let y = gamma_draw(beta, normals, rng);
    x / (x + y)
}

#[cfg(test)]
mod tests {

    #[test]
    fn named_counters_round_trip_and_add_up() {
        let mut a = BanditState::default();
        let seg = Segment::of(Some("ios"), 0);
        let arm = Arm::all().nth(3).expect("arm");
        a.record_shown(seg, arm);
        a.record_shown(seg, arm);
        a.record_purchase(seg, arm);
        assert!(!a.is_empty());
        let named = a.to_counters();
        assert_eq!(named.len(), 2);
        let mut back = BanditState::from_counters(&named);
        assert_eq!(back, a);
        back.add(&a);
        assert_eq!(back.counts(seg, arm), Some((4, 2)));
        // Unknown names (an arm off the ladder, garbage) are ignored.
        let odd = vec![("garbage".to_owned(), 3), ("[1,2]#s".to_owned(), 1)];
        assert!(BanditState::from_counters(&odd).is_empty());
    }

    use super::*;
    use rand::{SeedableRng, rngs::StdRng};
    use std::collections::HashMap;

    fn seg() -> Segment {
        Segment::of(Some("iOS"), 500)
    }

    #[test]
    fn segments_from_features() {
        assert_eq!(
            Segment::of(Some("Android"), 0),
            Segment {
                platform: Platform::Android,
                tier: SpenderTier::NonPayer
            }
        );
        assert_eq!(Segment::of(None, 20_000).tier, SpenderTier::Whale);
        assert_eq!(seg().tier, SpenderTier::Payer);
        for i in 0..SEGMENT_COUNT {
            assert_eq!(Segment::at(i).index(), i);
        }
        for (i, arm) in Arm::all().enumerate() {
            assert_eq!(arm.index(), Some(i));
        }
    }

    #[test]
    fn beta_draw_has_the_right_mean() {
        let mut rng = StdRng::seed_from_u64(1);
        let mut n = Normals::default();
        let mean: f64 = (0..20_000)
            .map(|_| beta_draw(3.0, 7.0, &mut n, &mut rng))
            .sum::<f64>()
            / 20_000.0;
        assert!((mean - 0.3).abs() < 0.01, "mean {mean}");
    }

    #[test]
    fn fresh_state_explores_all_arms() {
        let state = BanditState::default();
        let allowed: Vec<Arm> = Arm::all().collect();
        let mut rng = StdRng::seed_from_u64(42);
        let mut picks: HashMap<Arm, u32> = HashMap::new();
        for _ in 0..20_000 {
            let arm = state.sample(seg(), &allowed, &mut rng).expect("an arm");
            *picks.entry(arm).or_default() += 1;
        }
        assert_eq!(picks.len(), ARM_COUNT, "{picks:?}");
    }

    #[test]
    fn a_clearly_better_arm_wins_most_draws() {
        let mut state = BanditState::default();
        let good = Arm {
            category: Category::Currency,
            price_cents: 499,
        };
        let allowed: Vec<Arm> = Arm::all().collect();
        for arm in &allowed {
            // The good arm converts at 40%, every other at 1%.
            let purchases = if *arm == good { 80 } else { 2 };
            for i in 0..200 {
                state.record_shown(seg(), *arm);
                if i < purchases {
                    state.record_purchase(seg(), *arm);
                }
            }
        }
        assert_eq!(state.counts(seg(), good), Some((200, 80)));
        let mut rng = StdRng::seed_from_u64(9);
        let wins = (0..1000)
            .filter(|_| state.sample(seg(), &allowed, &mut rng) == Some(good))
            .count();
        assert!(wins > 900, "good arm won {wins} of 1000");
        // Another segment learned nothing and still explores.
        let other = Segment::of(Some("android"), 0);
        let wins = (0..1000)
            .filter(|_| state.sample(other, &allowed, &mut rng) == Some(good))
            .count();
        assert!(wins < 300);
    }

    #[test]
    fn only_allowed_arms_are_candidates() {
        let state = BanditState::default();
        let cheap = Arm {
            category: Category::Consumable,
            price_cents: 99,
        };
        let off_ladder = Arm {
            category: Category::Consumable,
            price_cents: 123,
        };
        let mut rng = StdRng::seed_from_u64(3);
        assert_eq!(state.sample(seg(), &[cheap], &mut rng), Some(cheap));
        assert_eq!(state.sample(seg(), &[off_ladder], &mut rng), None);
        assert_eq!(state.sample(seg(), &[], &mut rng), None);
    }

    #[test]
    fn serde_round_trip_keeps_counts() {
        let mut state = BanditState::default();
        let arm = Arm {
            category: Category::Equipment,
            price_cents: 1999,
        };
        state.record_shown(seg(), arm);
        state.record_purchase(seg(), arm);
        let json = serde_json::to_string(&state).expect("serialise");
        assert!(json.contains("\"equipment\""));
        let back: BanditState = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back, state);
    }
}
