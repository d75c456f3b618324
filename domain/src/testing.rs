//! Fixtures for the domain's unit tests, the benches and the load tool, so each of them
//! builds games, items and snapshots the same way instead of retyping every field.
//!
//! Compiled for this crate's tests and, elsewhere, only with the `testing` feature. The
//! fixtures are deterministic (fixed ids, fixed [`STAMP`]) so two runs compare equal.

use std::collections::HashSet;
use std::num::NonZeroU32;

use chrono::{DateTime, Utc};
use rand::SeedableRng;
use rand::rngs::StdRng;
use uuid::Uuid;

use std::sync::Arc;

use crate::bandit::Arm;
use crate::catalogue::Item;
use crate::category::Category;
use crate::currency::{Currency, CurrencyKind};
use crate::economy::Quadrant;
use crate::game::{Game, Guardrails, Mode};
use crate::kill_level::KillLevel;
use crate::learner::{Features, Learner, LearnerSettings, Prior};
use crate::offer::{Bundle, Experiment, Template, Variant};
use crate::pipeline::{
    Decision, GameSnapshot, OfferPlan, Outcome, PlayerContext, SnapshotInput, decide,
};

/// The fixtures' game id. Its holdout test vectors are known: `player_0` is outside the
/// holdout, `player_4` and `player_5` are in it.
pub const GAME_ID: Uuid = Uuid::from_u128(0x3f2b_8c4e_9a1d_4e6f_8b2a_5c7d_9e0f_1a2b);

/// 2026-01-01T00:00:00Z: when every fixture was created and last updated.
pub const STAMP: DateTime<Utc> = match DateTime::from_timestamp(1_767_225_600, 0) {
    Some(t) => t,
    None => panic!("2026-01-01 is a valid timestamp"),
};

/// Trigger events of the realistic fixture: one template each, bundles on the last five.
const EVENTS: [&str; 10] = [
    "session_start",
    "currency_low",
    "first_loss",
    "boss_raid",
    "level_up",
    "daily_login",
    "shop_open",
    "pvp_loss",
    "chest_open",
    "quest_done",
];

/// A game of `genre` with id [`GAME_ID`], no currencies, default guardrails and the
/// default (Shadow) mode, never launched.
pub fn game(genre: &str) -> Game {
    Game {
        game_id: GAME_ID,
        studio_id: "studio".into(),
        name: "Fixture game".into(),
        genre: genre.into(),
        currencies: vec![],
        guardrails: Guardrails::default(),
        mode: Mode::default(),
        learner: crate::learning::LearnerConfig::default(),
        launched_at: None,
        sandbox_launched_at: None,
        created_at: STAMP,
        updated_at: STAMP,
    }
}

/// Two currencies: `gems`, bought with money, and `gold`, earned by playing.
pub fn currencies() -> Vec<Currency> {
    let currency = |id: &str, kind| Currency {
        currency_id: id.into(),
        kind,
        name: None,
        usd_per_unit: None,
        max_per_event: None,
        max_per_player_day: None,
    };
    vec![
        currency("gems", CurrencyKind::Hard),
        currency("gold", CurrencyKind::Earned),
    ]
}

/// A live, shelf-eligible item named after its id, priced `cents` and worth `value_usd`.
pub fn item(id: &str, category: Category, cents: i64, value_usd: f64) -> Item {
    Item {
        item_id: id.into(),
        item_name: id.into(),
        category,
        price_usd: cents as f64 / 100.0,
        price_cents: cents,
        quantity: None,
        is_consumable: false,
        fallback_eligible: true,
        image: None,
        image_url: None,
        description: None,
        value_usd,
        value_override_usd: None,
        currency_id: None,
        earned_price: None,
        is_loot_box: false,
        store_products: crate::product_ids::StoreProducts::default(),
        created_at: STAMP,
        updated_at: STAMP,
        deleted_at: None,
    }
}

/// A realistic catalogue of `n` items: every category on the usual price points, values
/// up to twice the price, one in five off the shelf, one in seventeen a loot box and one in
/// fifty soft-deleted.
pub fn items(n: usize) -> Vec<Item> {
    const CATEGORIES: [Category; 5] = [
        Category::Currency,
        Category::Consumable,
        Category::Equipment,
        Category::Bundle,
        Category::Cosmetic,
    ];
    const PRICES: [i64; 10] = [99, 199, 299, 499, 799, 999, 1499, 1999, 2999, 4999];
    (0..n)
        .map(|i| {
            let cents = PRICES[(i * 7) % PRICES.len()];
            let bonus = (i % 13) as f64 / 10.0;
            Item {
                item_name: format!("Item {i}"),
                quantity: Some(100 + i as i64),
                is_consumable: i % 2 == 0,
                fallback_eligible: i % 5 != 0,
                is_loot_box: i % 17 == 0,
                deleted_at: (i % 50 == 49).then_some(STAMP),
                ..item(
                    &format!("item_{i:03}"),
                    CATEGORIES[i % CATEGORIES.len()],
                    cents,
                    cents as f64 / 100.0 * (1.0 + bonus),
                )
            }
        })
        .collect()
}

/// An L2 template for `event` over `categories`, without discount, one item.
pub fn template(event: &str, categories: Vec<Category>) -> Template {
    Template {
        event_type: event.into(),
        categories,
        discount_pct: None,
        max_items: None,
    }
}

/// An L3 bundle with id `n` holding `ids` at `price_usd`, served on `triggers` (every
/// trigger when empty).
pub fn bundle(n: u128, ids: &[&str], price_usd: f64, triggers: &[&str]) -> Bundle {
    Bundle {
        bundle_id: Uuid::from_u128(n),
        name: format!("Bundle {n}"),
        item_ids: ids.iter().map(|s| (*s).to_owned()).collect(),
        price_usd,
        triggers: triggers.iter().map(|s| (*s).to_owned()).collect(),
        store_products: crate::product_ids::StoreProducts::default(),
    }
}

/// A price experiment with id `n` and two arms of weight `control_weight` and
/// `treated_weight`: `control` at the listed price and `treated` at `multiplier` times it.
pub fn experiment(
    n: u128,
    control_weight: u32,
    (treated, treated_weight, multiplier): (&str, u32, f64),
) -> Experiment {
    let arm = |name: &str, weight, price_multiplier| Variant {
        name: name.into(),
        weight,
        price_usd: None,
        price_multiplier,
    };
    Experiment {
        experiment_id: Uuid::from_u128(n),
        variants: vec![
            arm("control", control_weight, None),
            arm(treated, treated_weight, Some(multiplier)),
        ],
        min_sample: crate::offer::DEFAULT_MIN_SAMPLE,
    }
}

/// `player_0` of [`GAME_ID`] (outside the holdout), playing on iOS in France: a player with
/// features, so every level is open to it.
pub fn player() -> PlayerContext {
    let mut p = PlayerContext::new("player_0", GAME_ID);
    p.country = Some("FR".into());
    p.platform = Some("ios".into());
    p
}

/// Everything a snapshot is built from, owned and public so a test changes one part and
/// builds again.
#[derive(Debug, Clone)]
pub struct SnapshotFixture {
    /// The game: its mode and guardrails.
    pub game: Game,
    /// The catalogue.
    pub items: Vec<Item>,
    /// L2 templates.
    pub templates: Vec<Template>,
    /// L3 bundles.
    pub bundles: Vec<Bundle>,
    /// Price experiments.
    pub experiments: Vec<Experiment>,
    /// Kill-switch level.
    pub kill_level: KillLevel,
    /// FSR quadrant.
    pub quadrant: Quadrant,
    /// Approved definition keys.
    pub approved: HashSet<String>,
    /// The L1 learner.
    pub learner: Arc<Learner>,
    /// Whether the game enforces store receipts.
    pub enforce_payment: bool,
}

impl SnapshotFixture {
    /// A small RPG in Autonomous mode without a price cap: six items (two gem packs, a
    /// potion, a sword, an axe, a skin), a `boss_raid` template for equipment and a
    /// `first_loss` bundle of the sword and the potion, with a fresh model.
    pub fn small() -> Self {
        Self {
            game: Game {
                mode: Mode::Autonomous,
                ..game("rpg")
            },
            items: vec![
                item("gems_100", Category::Currency, 99, 0.99),
                item("gems_1000", Category::Currency, 499, 9.90),
                item("potion", Category::Consumable, 299, 2.99),
                item("sword", Category::Equipment, 999, 9.99),
                item("axe", Category::Equipment, 1999, 15.0),
                item("skin", Category::Cosmetic, 499, 20.0),
            ],
            templates: vec![template("boss_raid", vec![Category::Equipment])],
            bundles: vec![bundle(1, &["sword", "potion"], 9.99, &["first_loss"])],
            experiments: vec![],
            kill_level: KillLevel::Normal,
            quadrant: Quadrant::Healthy,
            approved: HashSet::new(),
            learner: Arc::new(Learner::new(LearnerSettings::default(), Prior::default())),
            enforce_payment: false,
        }
    }

    /// A realistic game in Autonomous mode with a $29.99 cap: [`items`]`(500)`, ten
    /// templates (cosmetics first, then one other category, 10% off, up to three items),
    /// twenty three-item bundles and a learner trained on 500 shows per arm of an iOS payer in France at the first event.
    pub fn realistic() -> Self {
        let templates = EVENTS
            .iter()
            .enumerate()
            .map(|(i, e)| Template {
                discount_pct: Some(10),
                max_items: Some(3),
                ..template(
                    e,
                    vec![
                        Category::Cosmetic,
                        [
                            Category::Equipment,
                            Category::Consumable,
                            Category::Currency,
                        ][i % 3],
                    ],
                )
            })
            .collect();
        let bundles = (0..20usize)
            .map(|i| Bundle {
                item_ids: (0..3)
                    .map(|k| format!("item_{:03}", i * 20 + k * 3))
                    .collect(),
                ..bundle(i as u128 + 1, &[], 9.99, &[EVENTS[i % 5 + 5]])
            })
            .collect();
        let mut learner = Learner::new(LearnerSettings::default(), Prior::default());
        let payer = {
            let mut p = player();
            p.spend_cents = 500;
            p
        };
        let today = STAMP.date_naive();
        let features = Features::extract(&payer.learner_context(EVENTS[0], today), &[]);
        for (k, arm) in Arm::all().enumerate() {
            for n in 0..500 {
                learner.observe(&features, arm, n % (10 + k) == 0);
            }
        }
        Self {
            game: Game {
                mode: Mode::Autonomous,
                guardrails: Guardrails {
                    max_price_cents: Some(2_999),
                    ..Guardrails::default()
                },
                ..game("rpg")
            },
            items: items(500),
            templates,
            bundles,
            experiments: vec![],
            kill_level: KillLevel::Normal,
            quadrant: Quadrant::Healthy,
            approved: HashSet::new(),
            learner: Arc::new(learner),
            enforce_payment: false,
        }
    }

    /// Builds the snapshot of the current parts.
    pub fn snapshot(&self) -> GameSnapshot {
        GameSnapshot::build(SnapshotInput {
            game: &self.game,
            items: &self.items,
            templates: &self.templates,
            bundles: &self.bundles,
            experiments: &self.experiments,
            kill_level: self.kill_level,
            quadrant: self.quadrant,
            approved: self.approved.clone(),
            learner: Arc::clone(&self.learner),
            enforce_payment: self.enforce_payment,
        })
    }

    /// Takes every AI arm away: a 98-cent cap is below the cheapest price point, so L1
    /// finds nothing, and only two cheap items stay sellable (a dagger and a hat, bundled
    /// for `first_loss`).
    #[must_use]
    pub fn without_l1(mut self) -> Self {
        self.game.guardrails.max_price_cents = Some(98);
        self.items
            .push(item("dagger", Category::Equipment, 50, 0.5));
        self.items.push(item("hat", Category::Cosmetic, 60, 5.0));
        self.bundles = vec![bundle(2, &["dagger", "hat"], 0.90, &["first_loss"])];
        self
    }
}

/// Decides for `player` and `event` now, with the random generator seeded the same every
/// call.
pub fn run(snap: &GameSnapshot, player: &PlayerContext, event: &str) -> Decision {
    decide(
        snap,
        player,
        event,
        Utc::now(),
        &mut StdRng::seed_from_u64(5),
        NonZeroU32::MIN,
    )
}

/// The offer of a decision; panics, naming the reason, when there is none.
pub fn offer(decision: &Decision) -> &OfferPlan {
    match &decision.outcome {
        Outcome::Offer(o) => o,
        Outcome::NoOffer(r) => panic!("no offer: {}", r.as_str()),
    }
}

/// The ids of an offer's items, in offer order.
pub fn ids(offer: &OfferPlan) -> Vec<&str> {
    offer.items.iter().map(|i| i.item_id.as_str()).collect()
}

/// A decision's trace as `(level, note)` pairs, in evaluation order.
pub fn notes(decision: &Decision) -> Vec<(u8, &'static str)> {
    decision
        .trace
        .iter()
        .map(|t| (t.level, t.note.as_str()))
        .collect()
}

/// A page whose helper methods call each other `ways` ways, `depth` deep: `ways` to the
/// power `depth` calls of the last one, though no call is deeper than `depth`. With 10 and
/// 7, ten million calls: the validator's step estimate and the renderer's budget are both
/// tested with it.
pub fn fan_out_page(ways: usize, depth: usize) -> String {
    let mut page = String::from(
        "class FanOut extends StatelessWidget {\n  final OfferData offer;\n  Widget build(BuildContext context) => m1();\n",
    );
    for level in 1..depth {
        let calls = vec![format!("m{}()", level + 1); ways].join(", ");
        page.push_str(&format!(
            "  Widget m{level}() => Column(children: [{calls}]);\n"
        ));
    }
    page.push_str(&format!("  Widget m{depth}() => Text('x');\n}}\n"));
    page
}
