//! The contextual learner against an independent reference, and its promises: forgetting,
//! the memory bound, statistics that add up across nodes, guardrails and determinism.

use std::collections::{BTreeMap, HashMap};

use offer_domain::bandit::{Arm, PRICE_LADDER_CENTS};
use offer_domain::category::Category;
use offer_domain::learner::{
    CELLS, Context, Features, Learner, LearnerSettings, Prior, Source, nearest_arm,
};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

fn settings(half_life: f64) -> LearnerSettings {
    LearnerSettings {
        half_life_offers: half_life,
        ..LearnerSettings::default()
    }
}

fn arm(category: Category, price_cents: i64) -> Arm {
    Arm {
        category,
        price_cents,
    }
}

fn feats(trigger: &str, extra: &[&str]) -> Features {
    let mut labels = vec!["bias".to_owned(), format!("trigger={trigger}")];
    labels.extend(extra.iter().map(|l| (*l).to_owned()));
    Features::from_labels(trigger, labels)
}

/// The store: adds counters by name.
#[derive(Default)]
struct Store(BTreeMap<String, i64>);

impl Store {
    fn add(&mut self, learner: &mut Learner) {
        for (name, v) in learner.take_increments().to_counters() {
            *self.0.entry(name).or_default() += v;
        }
    }

    fn counters(&self) -> Vec<(String, i64)> {
        self.0.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }
}

fn category(name: &str) -> Category {
    serde_json::from_value(serde_json::Value::String(name.to_owned())).expect("category")
}

#[test]
fn updates_match_the_python_reference() {
    let text = include_str!("fixtures/learner_reference.json");
    let fixture: serde_json::Value = serde_json::from_str(text).expect("fixture");
    let num = |k: &str| fixture[k].as_f64().expect("number");
    let mut learner = Learner::new(
        LearnerSettings {
            half_life_offers: num("half_life_offers"),
            prior_precision: num("prior_precision"),
            fallback_weight: num("fallback_weight"),
            ..LearnerSettings::default()
        },
        Prior::default(),
    );
    let steps = fixture["steps"].as_array().expect("steps");
    for step in steps {
        let labels: Vec<String> = step["labels"]
            .as_array()
            .expect("labels")
            .iter()
            .map(|l| l.as_str().expect("label").to_owned())
            .collect();
        let f = Features::from_labels("", labels);
        let c = category(step["category"].as_str().expect("category"));
        let price = step["price_cents"].as_i64().expect("price");
        let bought = step["bought"].as_bool().expect("bought");
        let fallback = step["fallback"].as_bool().expect("fallback");
        let source = if fallback {
            Source::Fallback
        } else {
            Source::Ai
        };
        let served = nearest_arm(c, price).expect("an AI category");
        let learned = match step["kind"].as_str().expect("kind") {
            "observe" if fallback => learner.observe_fallback(&f, c, price, bought),
            "observe" => learner.observe(&f, arm(c, price), bought),
            "shown" => learner.shown(&f, served, source),
            "bought" => learner.bought(&f, served, source),
            other => panic!("unknown step {other}"),
        };
        assert!(learned);
    }
    let cells = fixture["cells"].as_array().expect("cells");
    assert!(cells.len() > 100);
    for row in cells {
        let i = row[0].as_u64().expect("cell") as usize;
        let (q, m) = (row[1].as_f64().expect("q"), row[2].as_f64().expect("m"));
        let (rq, rm) = learner.cell_posterior(i).expect("cell in table");
        assert!((rq - q).abs() < 1e-9, "cell {i}: precision {rq} vs {q}");
        assert!((rm - m).abs() < 1e-9, "cell {i}: mean {rm} vs {m}");
    }
    let offers = fixture["offers"].as_u64().expect("offers");
    assert!(offers < steps.len() as u64, "purchases count no offer");
    assert_eq!(learner.view().offers, offers);
}

#[test]
fn old_evidence_fades_with_the_half_life() {
    let half_life = 500.0;
    let mut learner = Learner::new(settings(half_life), Prior::default());
    let target = arm(Category::Currency, 499);
    let f = feats("currency_low", &["platform=ios"]);
    for i in 0..200 {
        learner.observe(&f, target, i % 2 == 0);
    }
    let cells = Learner::cells_of(&f, target);
    let q0 = learner.settings().prior_precision;
    let before: Vec<(f64, f64)> = cells
        .iter()
        .map(|c| learner.cell_posterior(*c).expect("cell"))
        .collect();
    let evidence = learner.view().effective_observations;
    // One half-life of offers elsewhere: other features (no bias, whose price-slope cell
    // every arm shares), so other cells.
    let elsewhere = Features::from_labels("boss_raid", vec!["platform=android".to_owned()]);
    let other = arm(Category::Equipment, 4999);
    let shared: Vec<usize> = Learner::cells_of(&elsewhere, other);
    assert!(cells.iter().all(|c| !shared.contains(c)));
    for _ in 0..500 {
        learner.observe(&elsewhere, other, false);
    }
    for (c, (q, m)) in cells.iter().zip(before) {
        let (q2, m2) = learner.cell_posterior(*c).expect("cell");
        assert!(((q2 - q0) - 0.5 * (q - q0)).abs() < 1e-9, "{q} -> {q2}");
        // precision x mean halves too: the mean shrinks towards the prior's 0.
        assert!((q2 * m2 - 0.5 * q * m).abs() < 1e-9);
    }
    let per_arm = learner.view().per_arm;
    let kept = per_arm.iter().find(|(a, _)| *a == target).expect("arm").1;
    assert!((kept - 0.5 * evidence).abs() < 1e-9, "{kept} of {evidence}");
    // Forgetting epochs roll every 16 half-lives: far past several, values stay finite
    // and the old evidence is gone.
    for _ in 0..(40 * 500) {
        learner.observe(&elsewhere, other, false);
    }
    let (q3, m3) = learner.cell_posterior(cells[0]).expect("cell");
    assert!((q3 - q0).abs() < 1e-9 && m3.abs() < 1e-9, "{q3} {m3}");
    assert!(learner.view().effective_observations.is_finite());
}

#[test]
fn a_million_distinct_attribute_values_cost_no_memory() {
    let mut learner = Learner::new(LearnerSettings::default(), Prior::default());
    // A learner that has learned nothing holds no table.
    assert!(learner.memory_bytes() < 4096, "{}", learner.memory_bytes());
    let target = arm(Category::Consumable, 299);
    let bias = Features::from_labels("first_loss", vec!["bias".to_owned()]);
    learner.observe(&bias, target, false);
    let before = learner.memory_bytes();
    assert!(before <= 1 << 20, "{before} bytes");
    let mut attrs = HashMap::new();
    let mut store = Store::default();
    for i in 0..1_000_000u32 {
        attrs.insert("player_id".to_owned(), format!("p{i}").into());
        let ctx = Context {
            trigger: "first_loss",
            platform: None,
            country: None,
            spend_cents: 0,
            days_since_install: None,
            attributes: &attrs,
        };
        learner.observe(&Features::extract(&ctx, &[]), target, i % 10 == 0);
        if i % 100_000 == 0 {
            store.add(&mut learner);
        }
    }
    assert_eq!(learner.memory_bytes(), before);
    store.add(&mut learner);
    // At most two counters per cell and epoch, one per arm and epoch, and the offer count.
    let epochs = store
        .0
        .keys()
        .filter_map(|k| k.split(':').next())
        .filter(|e| *e != "n");
    let epochs: std::collections::BTreeSet<&str> = epochs.collect();
    assert!(store.0.len() <= epochs.len() * (2 * CELLS + 18) + 1);
}

#[test]
fn nodes_that_sync_between_observations_learn_as_one() {
    let contexts = [
        feats("currency_low", &["platform=ios"]),
        feats("first_loss", &["platform=android", "country=FR"]),
        feats("boss_raid", &[]),
    ];
    let arms: Vec<Arm> = Arm::all().collect();
    let mut rng = StdRng::seed_from_u64(11);
    let seq: Vec<(usize, Arm, bool)> = (0..600)
        .map(|_| {
            (
                rng.random_range(0..contexts.len()),
                arms[rng.random_range(0..arms.len())],
                rng.random_bool(0.2),
            )
        })
        .collect();
    let s = settings(150.0);
    let mut one = Learner::new(s.clone(), Prior::default());
    let mut nodes = [
        Learner::new(s.clone(), Prior::default()),
        Learner::new(s.clone(), Prior::default()),
    ];
    let mut store = Store::default();
    for (chunk, obs) in seq.chunks(37).enumerate() {
        // Node `chunk % 2` reads the totals, observes a batch, and sends what it learned.
        let node = &mut nodes[chunk % 2];
        node.load(&store.counters());
        for (c, a, bought) in obs {
            node.observe(&contexts[*c], *a, *bought);
            one.observe(&contexts[*c], *a, *bought);
        }
        store.add(node);
    }
    let mut reader = Learner::new(s, Prior::default());
    reader.load(&store.counters());
    assert_eq!(reader.view().offers, one.view().offers);
    for i in 0..CELLS {
        let (q, m) = one.cell_posterior(i).expect("cell");
        let (rq, rm) = reader.cell_posterior(i).expect("cell");
        // Equal up to the counters' fixed point (2^-24 per sync).
        assert!((q - rq).abs() < 1e-6 && (m - rm).abs() < 1e-6, "cell {i}");
    }
    let (e1, e2) = (
        one.view().effective_observations,
        reader.view().effective_observations,
    );
    assert!((e1 - e2).abs() < 1e-6);
}

#[test]
fn concurrent_nodes_add_up_to_one_node() {
    // Two nodes learn at once, between the same two syncs, about disjoint cells; without
    // forgetting, the store's sum is exactly what one node seeing everything learns.
    let s = settings(1e12);
    let (fa, aa) = (
        feats("currency_low", &["platform=ios"]),
        arm(Category::Currency, 99),
    );
    // No bias: its price-slope cell is shared by every arm.
    let (fb, ab) = (
        Features::from_labels("boss_raid", vec!["platform=android".to_owned()]),
        arm(Category::Equipment, 4999),
    );
    let ca = Learner::cells_of(&fa, aa);
    assert!(Learner::cells_of(&fb, ab).iter().all(|c| !ca.contains(c)));
    let mut one = Learner::new(s.clone(), Prior::default());
    let mut a = Learner::new(s.clone(), Prior::default());
    let mut b = Learner::new(s.clone(), Prior::default());
    for i in 0..50 {
        a.observe(&fa, aa, i % 3 == 0);
        one.observe(&fa, aa, i % 3 == 0);
    }
    for i in 0..40 {
        b.observe(&fb, ab, i % 7 == 0);
        one.observe(&fb, ab, i % 7 == 0);
    }
    let mut store = Store::default();
    store.add(&mut a);
    store.add(&mut b);
    for node in [&mut a, &mut b] {
        node.load(&store.counters());
        assert_eq!(node.view().offers, 90);
        for i in 0..CELLS {
            let (q, m) = one.cell_posterior(i).expect("cell");
            let (nq, nm) = node.cell_posterior(i).expect("cell");
            assert!((q - nq).abs() < 1e-6 && (m - nm).abs() < 1e-6, "cell {i}");
        }
    }
}

#[test]
fn only_allowed_arms_are_picked() {
    let mut learner = Learner::new(LearnerSettings::default(), Prior::default());
    let all: Vec<Arm> = Arm::all().collect();
    let f = feats("currency_low", &["platform=ios"]);
    let mut rng = StdRng::seed_from_u64(5);
    for i in 0..2_000 {
        let allowed: Vec<Arm> = all
            .iter()
            .copied()
            .filter(|_| rng.random_bool(0.3))
            .collect();
        match learner.choose(&f, &allowed, &mut rng) {
            Some(choice) => {
                assert!(allowed.contains(&choice.arm));
                learner.observe(&f, choice.arm, i % 5 == 0);
            }
            None => assert!(allowed.is_empty()),
        }
    }
    let off_ladder = arm(Category::Currency, 123);
    let cosmetic = arm(Category::Cosmetic, 99);
    assert_eq!(learner.choose(&f, &[off_ladder, cosmetic], &mut rng), None);
    assert_eq!(learner.choose(&f, &[], &mut rng), None);
    let only = arm(Category::Equipment, 1999);
    let pick = learner
        .choose(&f, &[off_ladder, only], &mut rng)
        .expect("one arm on the ladder");
    assert_eq!(pick.arm, only);
    assert_eq!(pick.runner_up, None);
    assert!(!learner.observe(&f, off_ladder, true));
}

#[test]
fn a_seeded_rng_makes_the_same_choices() {
    let run = |seed: u64| {
        let mut learner = Learner::new(LearnerSettings::default(), Prior::default());
        let mut rng = StdRng::seed_from_u64(seed);
        let all: Vec<Arm> = Arm::all().collect();
        let contexts = [
            feats("currency_low", &[]),
            feats("first_loss", &["tier=payer"]),
        ];
        (0..300)
            .map(|i| {
                let f = &contexts[i % 2];
                let choice = learner.choose(f, &all, &mut rng).expect("an arm");
                learner.observe(f, choice.arm, rng.random_bool(0.1));
                choice
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3), run(4));
}

#[test]
fn the_choice_explains_itself() {
    let mut learner = Learner::new(LearnerSettings::default(), Prior::default());
    let f = feats("currency_low", &["platform=ios", "attr:level~t0:10"]);
    let good = arm(Category::Currency, 999);
    for i in 0..300 {
        learner.observe(&f, good, i % 2 == 0);
    }
    let mut rng = StdRng::seed_from_u64(1);
    let all: Vec<Arm> = Arm::all().collect();
    let choice = learner.choose(&f, &all, &mut rng).expect("an arm");
    assert_eq!(choice.arm, good);
    let (_, second) = choice.runner_up.expect("runner-up");
    assert!(choice.sampled_revenue_cents >= second);
    let top = choice.top_labels(&f);
    assert_eq!(top.len(), 3);
    assert!(top.windows(2).all(|w| w[0].1.abs() >= w[1].1.abs()));
    assert!(top.iter().all(|(_, w)| *w > 0.0), "{top:?}");
}

#[test]
fn the_prior_starts_from_the_template_and_the_price_range() {
    let prior = Prior::new([("boss_raid".to_owned(), Category::Equipment)], 99, 999);
    let learner = Learner::new(LearnerSettings::default(), prior);
    let f = feats("boss_raid", &[]);
    let all: Vec<Arm> = Arm::all().collect();
    let mut rng = StdRng::seed_from_u64(2);
    let mut by_category: HashMap<Category, u32> = HashMap::new();
    let mut out_of_range = 0;
    for _ in 0..3_000 {
        let a = learner.choose(&f, &all, &mut rng).expect("an arm").arm;
        *by_category.entry(a.category).or_default() += 1;
        out_of_range += u32::from(a.price_cents > 999);
    }
    assert!(by_category[&Category::Equipment] > 1_500, "{by_category:?}");
    assert!(out_of_range < 300, "{out_of_range}");
    // Nothing learned yet.
    assert_eq!(learner.view().effective_observations, 0.0);
}

#[test]
fn fallbacks_teach_the_nearest_arm_with_their_weight() {
    let mut learner = Learner::new(
        LearnerSettings {
            fallback_weight: 3.0,
            ..LearnerSettings::default()
        },
        Prior::default(),
    );
    let f = feats("level_up", &[]);
    assert!(learner.observe_fallback(&f, Category::Consumable, 450, true));
    assert!(learner.observe_fallback(&f, Category::Consumable, 7_000, false));
    assert!(!learner.observe_fallback(&f, Category::Cosmetic, 499, true));
    assert!(!learner.observe_fallback(&f, Category::Bundle, 499, true));
    let view = learner.view();
    assert_eq!(view.offers, 2);
    let weight = |p: i64| {
        view.per_arm
            .iter()
            .find(|(a, _)| *a == arm(Category::Consumable, p))
            .map(|(_, w)| *w)
            .expect("arm")
    };
    // Each shown offer counts once it is observed: the first has faded by two offers since,
    // the second by one.
    let gamma = (-1.0 / LearnerSettings::default().half_life_offers).exp2();
    assert!((weight(499) - 3.0 * gamma * gamma).abs() < 1e-9);
    let dearest = *PRICE_LADDER_CENTS.last().expect("ladder");
    assert!((weight(dearest) - 3.0 * gamma).abs() < 1e-9);
}

#[test]
fn a_show_then_a_purchase_on_another_node_adds_up() {
    // A node shows offers; another, which never saw them shown, hears of their purchases. The
    // store's sum is what one node seeing both learns, up to the fixed point.
    let s = settings(300.0);
    let f = feats("currency_low", &["platform=ios", "country=FR"]);
    let served = arm(Category::Currency, 499);
    let mut one = Learner::new(s.clone(), Prior::default());
    let mut shows = Learner::new(s.clone(), Prior::default());
    let mut buys = Learner::new(s.clone(), Prior::default());
    let mut store = Store::default();
    for round in 0..20 {
        shows.load(&store.counters());
        for _ in 0..10 {
            assert!(shows.shown(&f, served, Source::Ai));
            one.shown(&f, served, Source::Ai);
        }
        store.add(&mut shows);
        buys.load(&store.counters());
        for _ in 0..(round % 4) {
            assert!(buys.bought(&f, served, Source::Ai));
            one.bought(&f, served, Source::Ai);
        }
        store.add(&mut buys);
    }
    let mut reader = Learner::new(s, Prior::default());
    reader.load(&store.counters());
    assert_eq!(reader.view().offers, 200);
    for i in Learner::cells_of(&f, served) {
        let (q, m) = one.cell_posterior(i).expect("cell");
        let (rq, rm) = reader.cell_posterior(i).expect("cell");
        assert!((q - rq).abs() < 1e-6 && (m - rm).abs() < 1e-6, "cell {i}");
    }
    // Purchases count no offer and teach nothing about an arm off the ladder.
    assert!(!one.bought(&f, arm(Category::Cosmetic, 499), Source::Ai));
    assert_eq!(one.view().offers, 200);
}

#[test]
fn a_purchase_raises_the_estimate_and_a_miss_lowers_it() {
    let mut learner = Learner::new(LearnerSettings::default(), Prior::default());
    let f = feats("first_loss", &["tier=payer"]);
    let target = arm(Category::Consumable, 999);
    let other = arm(Category::Equipment, 99);
    let prior = learner.estimate(&f, target).expect("on the ladder");
    // Before any data the estimate is the prior's offset.
    let offset = Prior::default()
        .logit("first_loss", target)
        .expect("on the ladder");
    assert!((prior.mean_log_odds - offset).abs() < 1e-12);
    learner.shown(&f, target, Source::Ai);
    let missed = learner.estimate(&f, target).expect("estimate");
    assert!(missed.mean_log_odds < prior.mean_log_odds);
    assert!(missed.sd_log_odds < prior.sd_log_odds);
    learner.bought(&f, target, Source::Ai);
    let bought = learner.estimate(&f, target).expect("estimate");
    assert!(bought.mean_log_odds > missed.mean_log_odds);
    // A purchase leaves the precision alone.
    assert_eq!(bought.sd_log_odds, missed.sd_log_odds);
    // A Fallback source weighs fallback_weight: with weight 0 it teaches nothing.
    let mut deaf = Learner::new(
        LearnerSettings {
            fallback_weight: 0.0,
            ..LearnerSettings::default()
        },
        Prior::default(),
    );
    deaf.shown(&f, target, Source::Fallback);
    deaf.bought(&f, target, Source::Fallback);
    assert_eq!(deaf.estimate(&f, target), Some(prior));
    assert_eq!(deaf.view().offers, 1);
    // Many offers converge on the true rate: 1 in 4 bought.
    for i in 0..4_000 {
        learner.shown(&f, other, Source::Ai);
        if i % 4 == 0 {
            learner.bought(&f, other, Source::Ai);
        }
    }
    let e = learner.estimate(&f, other).expect("estimate");
    let (lo, hi) = e.interval(1.96);
    assert!(lo < 0.25 && 0.25 < hi, "{lo} {hi}");
    assert!((e.conversion() - 0.25).abs() < 0.03, "{}", e.conversion());
    assert_eq!(learner.estimate(&f, arm(Category::Currency, 123)), None);
}

#[test]
fn a_collapse_of_purchases_starts_again_and_every_node_follows() {
    let ctx = feats("currency_low", &["platform=ios"]);
    let sold = arm(Category::Currency, 499);
    let s = settings(20_000.0);
    // The genre template serves equipment at a boss raid.
    let template = Prior::new([("boss_raid".to_owned(), Category::Equipment)], 0, i64::MAX);
    let (mut a, mut b) = (
        Learner::new(s.clone(), template.clone()),
        Learner::new(s.clone(), template.clone()),
    );
    // How far the prior leans towards the template's category at a boss raid (arms no
    // offer below touches).
    let boss = feats("boss_raid", &["platform=android"]);
    let lean = |l: &Learner| {
        let e = |c| {
            l.estimate(&boss, arm(c, 999))
                .expect("on the ladder")
                .mean_log_odds
        };
        e(Category::Equipment) - e(Category::Consumable)
    };
    assert!(lean(&a) > 0.5, "{}", lean(&a));
    let mut store = Store::default();
    // Both nodes learn that the arm sells one time in four.
    for i in 0..3_000 {
        let node = if i % 2 == 0 { &mut a } else { &mut b };
        node.observe(&ctx, sold, i % 8 < 2);
    }
    store.add(&mut a);
    store.add(&mut b);
    a.load(&store.counters());
    b.load(&store.counters());
    let before = a.estimate(&ctx, sold).expect("on the ladder").conversion();
    assert!(before > 0.15, "{before}");
    assert_eq!(a.view().restarts, 0);
    // Then it stops selling on node a's offers; node b keeps a few unsent observations.
    let mut restarted_at = None;
    for i in 0..1_000 {
        a.observe(&ctx, sold, i % 50 == 0);
        if restarted_at.is_none() && a.view().restarts == 1 {
            restarted_at = Some(i);
        }
    }
    let at = restarted_at.expect("a collapse from 25% to 2% starts the learner again");
    assert!(at < 400, "after {at} offers");
    b.observe(&ctx, sold, true);
    let after = a.estimate(&ctx, sold).expect("on the ladder").conversion();
    assert!(after < 0.1, "what the old tastes taught is gone: {after}");
    // So is the template's lean: the tastes it describes may be the ones that changed.
    assert!(lean(&a).abs() < 1e-9, "{}", lean(&a));
    store.add(&mut a);
    assert!(store.0.contains_key("g1.start"), "{:?}", store.0.keys());
    // Node b follows at its next load: its old statistics and its unsent ones are dropped.
    store.add(&mut b);
    b.load(&store.counters());
    a.load(&store.counters());
    assert_eq!(b.view().restarts, 1);
    assert!(lean(&b).abs() < 1e-9, "{}", lean(&b));
    assert_eq!(b.view().offers, a.view().offers);
    for i in 0..CELLS {
        let ((q, m), (bq, bm)) = (
            a.cell_posterior(i).expect("cell"),
            b.cell_posterior(i).expect("cell"),
        );
        // Equal up to what node a could not send (below the counters' fixed point).
        assert!((q - bq).abs() < 1e-6 && (m - bm).abs() < 1e-6, "cell {i}");
    }
    // A reader started afresh reads the new generation only.
    let mut reader = Learner::new(s, template);
    reader.load(&store.counters());
    assert_eq!(reader.view().restarts, 1);
    assert!(lean(&reader).abs() < 1e-9, "{}", lean(&reader));
    let e = |l: &Learner| l.estimate(&ctx, sold).expect("on the ladder").mean_log_odds;
    assert!((e(&reader) - e(&a)).abs() < 1e-6);
}
