//! The simulated game of the arena: its scenarios, their population and the ground truth of
//! what each player buys, and the benchmarks the engine is measured against (the oracle,
//! the best single offer for everyone, uniform random).
//!
//! The engine and the in-process learner (`--in-process`) play these same truths. A player
//! buys an offer of category `c` at price `x` cents with probability
//!
//! `0.35 x affinity(c) / (1 + exp(-2.5 x (ln willing - ln x)))`
//!
//! where `affinity` is 1 for the preferred category and 0.25 for the others (1 for every
//! category where the category does not matter), and `willing` is the price the player is
//! happy to pay (499 cents where the price does not matter). The preferred category depends
//! on the trigger: `currency_low` currency, `first_loss` consumable, `boss_raid` equipment,
//! `level_up` consumable. The willing price depends on level and platform:
//! `99 x 2^(level / 15)`, times 2.5 on iOS.
//!
//! The truth reads only what the engine sees through the session and the request: the
//! trigger, the `platform` and `level` attributes. Spender tier and days since install are
//! derived by the engine itself (lifetime spend, first session), so the arena cannot set
//! them, and no truth depends on them.

use offer_domain::bandit::{AI_CATEGORIES, ARM_COUNT, Arm};
use offer_domain::category::Category;
use rand::{Rng, RngExt as _};

/// The triggers a game sends, drawn uniformly for each offer.
pub const TRIGGERS: [&str; 4] = ["currency_low", "first_loss", "boss_raid", "level_up"];
/// The players' countries, drawn uniformly (no truth depends on them).
const COUNTRIES: [&str; 5] = ["US", "FR", "BR", "JP", "DE"];
/// Distinct values of the irrelevant `device` attribute of [`Scenario::Noise`].
const DEVICES: u32 = 5_000;
/// The preferred category of each trigger of [`TRIGGERS`], in order.
const PREFERRED: [Category; 4] = [
    Category::Currency,
    Category::Consumable,
    Category::Equipment,
    Category::Consumable,
];

/// What decides a player's purchases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    /// The moment decides the category: a player buys the trigger's preferred category
    /// four times as often as the others; the price does not matter beyond the common
    /// willing price of $4.99.
    Category,
    /// Level and platform decide the price a player is happy to pay; the category does not
    /// matter.
    Price,
    /// Both of the above at once.
    Both,
    /// As `both` until half of the offers, then the preferences shift: each trigger prefers
    /// the next trigger's category and the platforms swap their willingness to pay. Scored
    /// from 3/16 to 4/16 of the offers after the shift (11,000..12,000 of 16,000) against
    /// the new oracle.
    Shift,
    /// As `both`, plus a `device` attribute with 5,000 values that changes nothing.
    Noise,
    /// As `both`, the game in Shadow mode for the first half of the offers, then promoted
    /// to Autonomous as a studio would; scored on the first eighth of the offers after the
    /// promotion (2,000 of 16,000), compared with a fresh game playing `both` over as many
    /// offers from the start.
    Shadow,
}

impl Scenario {
    /// Every scenario, in report order.
    pub const ALL: [Self; 6] = [
        Self::Category,
        Self::Price,
        Self::Both,
        Self::Shift,
        Self::Noise,
        Self::Shadow,
    ];

    /// The scenario's name on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Self::Category => "category",
            Self::Price => "price",
            Self::Both => "both",
            Self::Shift => "shift",
            Self::Noise => "noise",
            Self::Shadow => "shadow",
        }
    }

    /// The scenario called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether the category of an offer matters.
    fn categories_matter(self) -> bool {
        self != Self::Price
    }

    /// Whether the price of an offer matters beyond the common willing price.
    fn prices_matter(self) -> bool {
        self != Self::Category
    }
}

/// The timeline of one run of `offers` offers: how many offers are played, where the world
/// changes and which offers are scored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeline {
    /// Offers played in all.
    pub offers: usize,
    /// From this offer on the preferences are shifted ([`Scenario::Shift`]).
    pub shift_at: Option<usize>,
    /// Offers before this one are played in Shadow mode ([`Scenario::Shadow`]).
    pub shadow_until: Option<usize>,
    /// The scored offers, `from..to`.
    pub scored: (usize, usize),
}

impl Timeline {
    /// The timeline of `scenario` for a run of `offers` offers.
    pub fn of(scenario: Scenario, offers: usize) -> Self {
        let half = offers / 2;
        match scenario {
            Scenario::Shift => Self {
                offers,
                shift_at: Some(half),
                shadow_until: None,
                scored: (half + offers * 3 / 16, half + offers / 4),
            },
            Scenario::Shadow => Self {
                offers: half + offers / 8,
                shift_at: None,
                shadow_until: Some(half),
                scored: (half, half + offers / 8),
            },
            _ => Self {
                offers,
                shift_at: None,
                shadow_until: None,
                scored: (half, offers),
            },
        }
    }

    /// The timeline of the comparison run of [`Scenario::Shadow`]: `both` from the start,
    /// over as many offers as the Shadow run scores.
    pub fn without_shadow(self) -> Self {
        let n = self.scored.1 - self.scored.0;
        Self {
            offers: n,
            shift_at: None,
            shadow_until: None,
            scored: (0, n),
        }
    }

    /// Whether the preferences are shifted at offer `t`.
    pub fn shifted(&self, t: usize) -> bool {
        self.shift_at.is_some_and(|s| t >= s)
    }
}

/// One player of the population: what its session tells the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// The studio's player id.
    pub id: String,
    /// On iOS (else Android).
    pub ios: bool,
    /// Level, 1 to 60.
    pub level: i64,
    /// Index into the countries.
    country: usize,
    /// The irrelevant device model ([`Scenario::Noise`] only).
    device: Option<u32>,
}

impl Player {
    /// The session attributes the game sends for this player.
    pub fn attributes(&self) -> serde_json::Value {
        let mut attributes = serde_json::json!({
            "platform": if self.ios { "ios" } else { "android" },
            "level": self.level,
            "country": COUNTRIES[self.country],
        });
        if let Some(device) = self.device {
            attributes["device"] = format!("d{device}").into();
        }
        attributes
    }
}

/// Draws a population of `n` players for `scenario` from `rng`: iOS 45%, level uniform in
/// 1..=60, country uniform, and on `noise` a device uniform among 5,000.
pub fn population(scenario: Scenario, n: usize, rng: &mut impl Rng) -> Vec<Player> {
    (0..n)
        .map(|i| Player {
            id: format!("arena_{i}"),
            ios: rng.random_bool(0.45),
            level: rng.random_range(1..=60),
            country: rng.random_range(0..COUNTRIES.len()),
            device: (scenario == Scenario::Noise).then(|| rng.random_range(0..DEVICES)),
        })
        .collect()
}

/// The true purchase probability of a single-item offer of `category` at `price_cents`
/// for `player` on trigger `trigger` (an index into [`TRIGGERS`]), `shifted` after the
/// change of [`Scenario::Shift`]. Categories outside the AI's (bundles, cosmetics) never
/// sell.
pub fn truth(
    scenario: Scenario,
    shifted: bool,
    player: &Player,
    trigger: usize,
    category: Category,
    price_cents: i64,
) -> f64 {
    if !AI_CATEGORIES.contains(&category) || price_cents <= 0 {
        return 0.0;
    }
    let preferred = PREFERRED[if shifted {
        (trigger + 1) % PREFERRED.len()
    } else {
        trigger % PREFERRED.len()
    }];
    let affinity = if !scenario.categories_matter() || category == preferred {
        1.0
    } else {
        0.25
    };
    let willing = if scenario.prices_matter() {
        let ios = player.ios != shifted;
        99.0 * (player.level as f64 / 15.0).exp2() * if ios { 2.5 } else { 1.0 }
    } else {
        499.0
    };
    let z = 2.5 * (willing.ln() - (price_cents as f64).ln());
    0.35 * affinity / (1.0 + (-z).exp())
}

/// The expected revenue (true probability x price, in cents) of every arm for one offer's
/// context, in [`Arm::all`] order.
pub fn arm_revenues(
    scenario: Scenario,
    shifted: bool,
    player: &Player,
    trigger: usize,
) -> [f64; ARM_COUNT] {
    let mut out = [0.0; ARM_COUNT];
    for (slot, arm) in out.iter_mut().zip(Arm::all()) {
        let p = truth(
            scenario,
            shifted,
            player,
            trigger,
            arm.category,
            arm.price_cents,
        );
        *slot = p * arm.price_cents as f64;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng as _;
    use rand::rngs::StdRng;

    fn player(ios: bool, level: i64) -> Player {
        Player {
            id: "p".to_owned(),
            ios,
            level,
            country: 0,
            device: None,
        }
    }

    fn best_arm(scenario: Scenario, shifted: bool, p: &Player, trigger: usize) -> Arm {
        let revenues = arm_revenues(scenario, shifted, p, trigger);
        let best = (0..ARM_COUNT)
            .max_by(|a, b| revenues[*a].total_cmp(&revenues[*b]))
            .expect("arms");
        Arm::all().nth(best).expect("arm")
    }

    #[test]
    fn the_moment_decides_the_category() {
        let p = player(false, 30);
        for (trigger, category) in PREFERRED.iter().enumerate() {
            assert_eq!(
                best_arm(Scenario::Category, false, &p, trigger).category,
                *category
            );
        }
        // The price does not depend on the player in `category`.
        let rich = player(true, 60);
        assert_eq!(
            best_arm(Scenario::Category, false, &p, 0),
            best_arm(Scenario::Category, false, &rich, 0)
        );
    }

    #[test]
    fn level_and_platform_decide_the_price() {
        let low = best_arm(Scenario::Price, false, &player(false, 5), 0).price_cents;
        let high = best_arm(Scenario::Price, false, &player(false, 55), 0).price_cents;
        let ios = best_arm(Scenario::Price, false, &player(true, 30), 0).price_cents;
        let android = best_arm(Scenario::Price, false, &player(false, 30), 0).price_cents;
        assert!(low < high, "{low} {high}");
        assert!(android < ios, "{android} {ios}");
    }

    #[test]
    fn the_shift_rotates_categories_and_swaps_platforms() {
        let p = player(true, 30);
        let before = best_arm(Scenario::Shift, false, &p, 0);
        let after = best_arm(Scenario::Shift, true, &p, 0);
        assert_eq!(before.category, Category::Currency);
        assert_eq!(after.category, Category::Consumable);
        assert!(after.price_cents < before.price_cents);
    }

    #[test]
    fn other_categories_and_free_offers_never_sell() {
        let p = player(true, 30);
        assert_eq!(
            truth(Scenario::Both, false, &p, 0, Category::Cosmetic, 499),
            0.0
        );
        assert_eq!(
            truth(Scenario::Both, false, &p, 0, Category::Currency, 0),
            0.0
        );
    }

    #[test]
    fn only_noise_players_carry_a_device() {
        let mut rng = StdRng::seed_from_u64(1);
        let noisy = population(Scenario::Noise, 50, &mut rng);
        let plain = population(Scenario::Both, 50, &mut rng);
        assert!(noisy.iter().all(|p| p.attributes()["device"].is_string()));
        assert!(plain.iter().all(|p| p.attributes()["device"].is_null()));
        assert!(plain.iter().all(|p| (1..=60).contains(&p.level)));
    }

    #[test]
    fn timelines_score_the_documented_windows() {
        assert_eq!(Timeline::of(Scenario::Both, 16_000).scored, (8_000, 16_000));
        let shift = Timeline::of(Scenario::Shift, 16_000);
        assert_eq!(shift.scored, (11_000, 12_000));
        assert!(!shift.shifted(7_999) && shift.shifted(8_000));
        let shadow = Timeline::of(Scenario::Shadow, 16_000);
        assert_eq!(shadow.offers, 10_000);
        assert_eq!(shadow.shadow_until, Some(8_000));
        assert_eq!(shadow.scored, (8_000, 10_000));
        assert_eq!(shadow.without_shadow().scored, (0, 2_000));
    }
}
