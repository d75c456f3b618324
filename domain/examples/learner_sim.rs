//! An in-process evaluation of the contextual learner on a simulated population.
//!
//! Each offer draws a player (trigger, platform, level, country, spend, days since install),
//! the learner picks one of the 18 arms, and the player buys with the scenario's true
//! probability. Expected revenue per offer (true purchase probability x price of the served
//! arm) is compared with the oracle's (the best arm of each context under the truth), the
//! best single arm for everyone, and uniform random, over the second half of 16,000 offers
//! and for 5 seeds. Scenarios:
//! - `a`: the trigger decides the category;
//! - `b`: level and platform decide the price a player pays;
//! - `c`: both;
//! - `d`: as `c`, then at offer 8,000 the categories rotate and the platforms swap; scored on
//!   offers 11,000..12,000 against the new oracle;
//! - `e`: as `c` plus a `device` attribute with 5,000 distinct values that changes nothing.
//!
//! The learner starts from [`Prior::default`] (no genre template, the whole ladder in range),
//! so everything it earns it learned.
//!
//! Each offer is learned as the engine learns it: [`Learner::shown`] when it is served, then
//! [`Learner::bought`] when it sells (`--observe` learns it with one [`Learner::observe`]
//! instead).
//!
//! Run with `cargo run --release -p offer-domain --example learner_sim [HALF_LIFE
//! PRIOR_PRECISION EXPLORATION SEEDS] [--observe]` (defaults: the learner's, and 5 seeds). At
//! the defaults, shares of the oracle (mean over seeds 1 to 5, lowest seed in brackets):
//! a 0.95 (0.93), b 0.85 (0.80), c 0.79 (0.64), d 0.34 (0.25), e 0.79 (0.75), e - c +0.01;
//! best single arm 0.62, 0.76, 0.47, 0.49, 0.48; uniform 0.27, 0.53, 0.27, 0.27, 0.27. With
//! `--observe`: a 0.95 (0.92), b 0.86 (0.83), c 0.81 (0.78), d 0.34 (0.23), e 0.80 (0.77).
//! The two ways differ in the Laplace approximation of a purchase (fitted at once, or as a
//! miss turned into a purchase), which changes the draws of each run: over seeds 1 to 20, c
//! earns 0.80 either way, with one seed (4) stuck at 0.64 when learning shows and purchases.
//!
//! Scenario d is not met: a half-life of 1,000 offers lifts it to 0.58 but drops c to 0.64,
//! 3,000 gives d 0.48 and c 0.77, and the learner starting from scratch on the shifted taste
//! earns 0.70 on the same window, so forgetting alone cannot do better. Watching for
//! surprise did not help either (`docs/learner.md` has the figures): the predictions for the
//! arms the learner serves adapt within a few hundred offers (the outcomes stop surprising
//! it); what is slow is trying again the arms the old evidence condemned.

use std::collections::HashMap;

use offer_domain::bandit::{ARM_COUNT, Arm};
use offer_domain::category::Category;
use offer_domain::learner::{Context, Features, Learner, LearnerSettings, Prior, Source};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};

const OFFERS: usize = 16_000;
const SHIFT: usize = 8_000;
const TRIGGERS: [&str; 4] = ["currency_low", "first_loss", "boss_raid", "level_up"];
const COUNTRIES: [&str; 5] = ["US", "FR", "BR", "JP", "DE"];

/// One simulated player at one moment.
struct Player {
    trigger: usize,
    ios: bool,
    level: i64,
    country: usize,
    spend_cents: i64,
    days: i64,
    device: Option<u32>,
}

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Category,
    Price,
    Both,
    Shift,
    Noise,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Self::Category => "a moment decides the category",
            Self::Price => "b level and platform decide the price",
            Self::Both => "c both",
            Self::Shift => "d preferences shift at 8,000",
            Self::Noise => "e c + device with 5,000 values",
        }
    }
}

fn draw_player(rng: &mut impl Rng, noise: bool) -> Player {
    let payer = rng.random::<f64>();
    Player {
        trigger: rng.random_range(0..TRIGGERS.len()),
        ios: rng.random_bool(0.45),
        level: rng.random_range(1..=60),
        country: rng.random_range(0..COUNTRIES.len()),
        spend_cents: if payer < 0.7 {
            0
        } else if payer < 0.95 {
            rng.random_range(99..10_000)
        } else {
            rng.random_range(10_000..100_000)
        },
        days: rng.random_range(0..400),
        device: noise.then(|| rng.random_range(0..5_000)),
    }
}

/// The true purchase probability of `arm` for `player`; `shifted` after the change of (d).
fn truth(s: Scenario, shifted: bool, p: &Player, arm: Arm) -> f64 {
    let categories = matches!(
        s,
        Scenario::Category | Scenario::Both | Scenario::Shift | Scenario::Noise
    );
    let prices = s != Scenario::Category;
    let preferred = {
        let map = [
            Category::Currency,
            Category::Consumable,
            Category::Equipment,
            Category::Consumable,
        ];
        let i = if shifted {
            (p.trigger + 1) % map.len()
        } else {
            p.trigger
        };
        map[i]
    };
    let affinity = if !categories || arm.category == preferred {
        1.0
    } else {
        0.25
    };
    let willing = if prices {
        let ios = if shifted { !p.ios } else { p.ios };
        99.0 * (p.level as f64 / 15.0).exp2() * if ios { 2.5 } else { 1.0 }
    } else {
        499.0
    };
    let k = 2.5;
    let z = k * (willing.ln() - (arm.price_cents as f64).ln());
    0.35 * affinity / (1.0 + (-z).exp())
}

fn features(p: &Player, attrs: &mut HashMap<String, serde_json::Value>) -> Features {
    attrs.clear();
    attrs.insert("level".to_owned(), p.level.into());
    if let Some(d) = p.device {
        attrs.insert("device".to_owned(), format!("d{d}").into());
    }
    let ctx = Context {
        trigger: TRIGGERS[p.trigger],
        platform: Some(if p.ios { "ios" } else { "android" }),
        country: Some(COUNTRIES[p.country]),
        spend_cents: p.spend_cents,
        days_since_install: Some(p.days),
        attributes: attrs,
    };
    Features::extract(&ctx, &[])
}

/// Shares of the oracle's revenue: learner, best single arm, uniform random.
struct Shares {
    learner: f64,
    single: f64,
    uniform: f64,
}

/// One run; `observe_at_once` learns each offer with [`Learner::observe`] rather than as a
/// show and, when bought, a purchase.
fn run(s: Scenario, seed: u64, settings: &LearnerSettings, observe_at_once: bool) -> Shares {
    let mut world = StdRng::seed_from_u64(seed);
    let mut rng = StdRng::seed_from_u64(seed ^ 0x5eed);
    let mut learner = Learner::new(settings.clone(), Prior::default());
    let arms: Vec<Arm> = Arm::all().collect();
    let mut attrs = HashMap::new();
    let (from, to) = if s == Scenario::Shift {
        (SHIFT + 3_000, SHIFT + 4_000)
    } else {
        (OFFERS / 2, OFFERS)
    };
    let (mut got, mut oracle, mut uniform) = (0.0, 0.0, 0.0);
    let mut per_arm = [0.0; ARM_COUNT];
    for t in 0..OFFERS {
        let player = draw_player(&mut world, s == Scenario::Noise);
        let shifted = s == Scenario::Shift && t >= SHIFT;
        let f = features(&player, &mut attrs);
        let Some(choice) = learner.choose(&f, &arms, &mut rng) else {
            continue;
        };
        let p = truth(s, shifted, &player, choice.arm);
        let bought = world.random_bool(p);
        if observe_at_once {
            learner.observe(&f, choice.arm, bought);
        } else {
            learner.shown(&f, choice.arm, Source::Ai);
            if bought {
                learner.bought(&f, choice.arm, Source::Ai);
            }
        }
        if (from..to).contains(&t) {
            got += p * choice.arm.price_cents as f64;
            let revenues: Vec<f64> = arms
                .iter()
                .map(|a| truth(s, shifted, &player, *a) * a.price_cents as f64)
                .collect();
            oracle += revenues.iter().copied().fold(0.0, f64::max);
            uniform += revenues.iter().sum::<f64>() / ARM_COUNT as f64;
            for (acc, r) in per_arm.iter_mut().zip(&revenues) {
                *acc += r;
            }
        }
    }
    Shares {
        learner: got / oracle,
        single: per_arm.iter().copied().fold(0.0, f64::max) / oracle,
        uniform: uniform / oracle,
    }
}

fn main() {
    // Optional tuning: half-life, prior precision, exploration, number of seeds.
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let mut settings = LearnerSettings::default();
    if let Some(h) = args.first() {
        settings.half_life_offers = *h;
    }
    if let Some(q) = args.get(1) {
        settings.prior_precision = *q;
    }
    if let Some(x) = args.get(2) {
        settings.exploration = *x;
    }
    let observe_at_once = std::env::args().any(|a| a == "--observe");
    println!(
        "half-life {} offers, prior precision {}, exploration {}; learning {}",
        settings.half_life_offers,
        settings.prior_precision,
        settings.exploration,
        if observe_at_once {
            "each offer at once (observe)"
        } else {
            "a show, then a purchase (shown + bought)"
        }
    );
    let seeds: Vec<u64> = (1..=args.get(3).map_or(5, |n| *n as u64)).collect();
    let mut means = HashMap::new();
    for s in [
        Scenario::Category,
        Scenario::Price,
        Scenario::Both,
        Scenario::Shift,
        Scenario::Noise,
    ] {
        let runs: Vec<Shares> = seeds
            .iter()
            .map(|seed| run(s, *seed, &settings, observe_at_once))
            .collect();
        let learner: Vec<f64> = runs.iter().map(|r| r.learner).collect();
        let mean = learner.iter().sum::<f64>() / learner.len() as f64;
        let min = learner.iter().copied().fold(f64::INFINITY, f64::min);
        let single = runs.iter().map(|r| r.single).sum::<f64>() / runs.len() as f64;
        let uniform = runs.iter().map(|r| r.uniform).sum::<f64>() / runs.len() as f64;
        let per_seed: Vec<String> = learner.iter().map(|l| format!("{l:.3}")).collect();
        println!(
            "{:<40} learner {mean:.3} (min {min:.3}; seeds {})  best single arm {single:.3}  uniform {uniform:.3}",
            s.name(),
            per_seed.join(" ")
        );
        means.insert(s.name(), mean);
    }
    let (c, e) = (means[Scenario::Both.name()], means[Scenario::Noise.name()]);
    println!("e - c: {:+.3}", e - c);
}
