//! The four levels that can propose an offer, tried in order until one does: L1 the AI
//! (the contextual learner picks a category and price point), L2 the genre template of the trigger
//! event, L3 a studio bundle, L4 the store shelf. Each level that passes notes why in the
//! trace; L1 and L2 are gated together by the kill switch, the FSR quadrant and the mode.

use std::fmt::Write as _;
use std::num::NonZeroU32;
use std::sync::Arc;

use rand::{Rng, RngExt as _};

use super::{Candidate, Ctx, Explanation, TraceNote};
use crate::catalogue::Item;
use crate::category::Category;
use crate::game::Mode;
use crate::policy;

/// Highest template discount honoured, so a typo cannot give items away.
pub const MAX_DISCOUNT_PCT: u8 = 90;

/// The category as the definition key of an L1 offer names it.
fn category_name(c: Category) -> &'static str {
    match c {
        Category::Currency => "currency",
        Category::Consumable => "consumable",
        Category::Equipment => "equipment",
        Category::Bundle => "bundle",
        Category::Cosmetic => "cosmetic",
    }
}

/// L1 then L2, gated by the kill switch, the quadrant and the mode. In Shadow mode the
/// silent pick is computed for one decision in `shadow_every`, drawn at random: it is only
/// recorded, so the others skip the L1 sampling that would cost most of the decision.
pub(super) fn ai_levels(
    cx: &mut Ctx<'_>,
    rng: &mut impl Rng,
    shadow_every: NonZeroU32,
) -> Option<Candidate> {
    let gate = if !cx.snap.kill_level().allows_ai() {
        Some(TraceNote::KillSwitchAiOff)
    } else if !cx.snap.quadrant().allows_ai() {
        Some(TraceNote::HyperInflation)
    } else if cx.snap.mode() == Mode::Shadow && !rng.random_ratio(1, shadow_every.get()) {
        Some(TraceNote::ShadowUnsampled)
    } else {
        None
    };
    if let Some(note) = gate {
        cx.note(1, note);
        cx.note(2, note);
        return None;
    }
    for level in 1..=2u8 {
        let candidate = if level == 1 {
            level1(cx, rng)
        } else {
            level2(cx)
        };
        let Some(c) = cx.payable(candidate) else {
            continue;
        };
        match cx.snap.mode() {
            Mode::Autonomous => return Some(c),
            Mode::Shadow => {
                for l in level..=2 {
                    cx.note(l, TraceNote::ShadowSilent);
                }
                cx.shadow = Some(c);
                return None;
            }
            Mode::Assisted => {
                if cx.snap.is_approved(&c.definition_key) {
                    return Some(c);
                }
                cx.note(level, TraceNote::AwaitingApproval);
                cx.approval_candidates.push(c);
            }
        }
    }
    None
}

/// Builds the definition key `L<level>|<source>|<sorted item ids>|<price>`.
fn definition_key(level: u8, source: &str, items: &[Arc<Item>], price_cents: i64) -> String {
    let mut key = String::with_capacity(48 + source.len() + 16 * items.len());
    // Writing to a String cannot fail.
    let _ = write!(key, "L{level}|{source}|");
    if let [only] = items {
        key.push_str(&only.item_id);
    } else {
        let mut ids: Vec<&str> = items.iter().map(|i| i.item_id.as_str()).collect();
        ids.sort_unstable();
        for (i, id) in ids.iter().enumerate() {
            if i > 0 {
                key.push(',');
            }
            key.push_str(id);
        }
    }
    let _ = write!(key, "|{price_cents}");
    key
}

/// L1: the learner picks an arm among those the guardrails and catalogue allow, from the
/// decision's context; the item of the arm's category nearest its price point that passes
/// policy is offered at its price. Why it picked the arm goes to the decision's explanation.
fn level1(cx: &mut Ctx<'_>, rng: &mut impl Rng) -> Option<Candidate> {
    let snap = cx.snap;
    let loot_boxes = policy::loot_box_allowed(snap.guardrails(), cx.player.country.as_deref());
    let features = cx.features();
    let Some(choice) = snap
        .learner()
        .choose(&features, snap.l1_arms(loot_boxes), rng)
    else {
        cx.note(1, TraceNote::NoArm);
        return None;
    };
    let arm = choice.arm;
    cx.explanation = Some(Explanation::of_choice(&choice, &features));
    let mut allowed = snap
        .arm_items(arm)
        .iter()
        .filter(|i| cx.allowed(i))
        .peekable();
    if allowed.peek().is_none() {
        cx.note(1, TraceNote::NoItemForArm);
        return None;
    }
    let Some(item) = allowed.find(|i| cx.sells(std::slice::from_ref(*i), i.price_cents)) else {
        cx.note(1, TraceNote::NoStoreProduct);
        return None;
    };
    let items = vec![Arc::clone(item)];
    let mut source = String::with_capacity(24);
    let _ = write!(
        source,
        "ai:{}:{}",
        category_name(arm.category),
        arm.price_cents
    );
    Some(Candidate {
        level: 1,
        definition_key: definition_key(1, &source, &items, item.price_cents),
        price_cents: item.price_cents,
        items,
        arm: Some(arm),
    })
}

/// Applies a template discount, rounding half up.
fn discounted(sum_cents: i64, discount_pct: u8) -> i64 {
    let keep = i64::from(100 - discount_pct.min(MAX_DISCOUNT_PCT));
    (sum_cents * keep + 50) / 100
}

/// L2: the event's template takes the best-value items of its categories in order, up to
/// `max_items`, as long as the discounted total stays within the price cap.
fn level2(cx: &mut Ctx<'_>) -> Option<Candidate> {
    let snap = cx.snap;
    let Some(t) = snap.template(cx.event_type) else {
        cx.note(2, TraceNote::NoTemplate);
        return None;
    };
    let max_items = usize::from(t.max_items.unwrap_or(1).max(1));
    let discount = t.discount_pct.unwrap_or(0);
    let mut items: Vec<Arc<Item>> = Vec::with_capacity(max_items);
    let mut sum = 0i64;
    'categories: for cat in &t.categories {
        if *cat == Category::Bundle {
            continue;
        }
        for item in snap.sellable(*cat) {
            if items.len() >= max_items {
                break 'categories;
            }
            let next = sum + item.price_cents;
            if cx.allowed(item)
                && policy::price_allowed(snap.guardrails(), discounted(next, discount))
            {
                sum = next;
                items.push(Arc::clone(item));
            }
        }
    }
    if items.is_empty() {
        cx.note(2, TraceNote::TemplateEmpty);
        return None;
    }
    let price_cents = discounted(sum, discount);
    let mut source = String::with_capacity(4 + t.event_type.len());
    source.push_str("tpl:");
    source.push_str(&t.event_type);
    Some(Candidate {
        level: 2,
        definition_key: definition_key(2, &source, &items, price_cents),
        price_cents,
        items,
        arm: None,
    })
}

/// L3: the first bundle for the event (or without triggers) whose price and every item pass
/// policy.
pub(super) fn level3(cx: &mut Ctx<'_>) -> Option<Candidate> {
    let snap = cx.snap;
    let found = snap.bundles_for(cx.event_type).find(|b| {
        policy::price_allowed(snap.guardrails(), b.price_cents)
            && b.items.iter().all(|i| cx.allowed(i))
    });
    let Some(b) = found else {
        cx.note(3, TraceNote::NoBundle);
        return None;
    };
    let mut source = String::with_capacity(43);
    let _ = write!(source, "bundle:{}", b.bundle_id);
    Some(Candidate {
        level: 3,
        definition_key: definition_key(3, &source, &b.items, b.price_cents),
        price_cents: b.price_cents,
        items: b.items.clone(),
        arm: None,
    })
}

/// L4: the single best-value shelf item that passes policy (and that a store product sells,
/// when the game enforces store receipts); cosmetics come last on the shelf, so they serve
/// only when the others are exhausted.
pub(super) fn level4(cx: &mut Ctx<'_>) -> Option<Candidate> {
    let mut allowed = cx.snap.shelf().iter().filter(|i| cx.allowed(i)).peekable();
    if allowed.peek().is_none() {
        cx.note(4, TraceNote::ShelfEmpty);
        return None;
    }
    let Some(item) = allowed.find(|i| cx.sells(std::slice::from_ref(*i), i.price_cents)) else {
        cx.note(4, TraceNote::NoStoreProduct);
        return None;
    };
    let items = vec![Arc::clone(item)];
    Some(Candidate {
        level: 4,
        definition_key: definition_key(4, "shelf", &items, item.price_cents),
        price_cents: item.price_cents,
        items,
        arm: None,
    })
}

#[cfg(test)]
mod tests {
    use chrono::Utc;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;
    use crate::offer::Template;
    use crate::pipeline::{NoOfferReason, Outcome, PlayerContext, decide};
    use crate::testing::{GAME_ID, SnapshotFixture, bundle, ids, item, notes, offer, player, run};

    #[test]
    fn l1_serves_a_learner_arm_in_autonomous() {
        let snap = SnapshotFixture::small().snapshot();
        let d = run(&snap, &player(), "currency_low");
        let o = offer(&d);
        assert_eq!(o.level, 1);
        let arm = o.arm.expect("an arm");
        assert_eq!(o.items.len(), 1);
        assert_eq!(o.items[0].category, arm.category);
        assert!(o.definition_key.starts_with("L1|ai:"));
        assert!(d.trace.is_empty());
        // The lesson is the arm, taught by the AI, in the decision's context; the
        // explanation names the same arm and the features used.
        let lesson = o.lesson.as_ref().expect("a single-item offer teaches");
        assert_eq!(lesson.arm, arm);
        assert_eq!(lesson.source, crate::learner::Source::Ai);
        let why = d.explanation.as_ref().expect("L1 explains its pick");
        assert_eq!(why.arm, arm);
        assert!(why.features.labels().any(|l| l == "trigger=currency_low"));
    }

    #[test]
    fn fall_through_l1_l2_l3_l4_l5() {
        let fx = SnapshotFixture::small().without_l1();
        let snap = fx.snapshot();
        // L1 empty -> L2: the template's equipment under the cap.
        let d = run(&snap, &player(), "boss_raid");
        assert_eq!(offer(&d).level, 2);
        assert_eq!(ids(offer(&d)), ["dagger"]);
        assert_eq!(notes(&d), [(1, "no_arm")]);
        // L2 empty (no template) -> L3.
        let d = run(&snap, &player(), "first_loss");
        assert_eq!(offer(&d).level, 3);
        assert_eq!(offer(&d).price_cents, 90);
        assert_eq!(notes(&d), [(1, "no_arm"), (2, "no_template")]);
        // L3 empty (no bundle for the event) -> L4: the best value, non-cosmetic first.
        let d = run(&snap, &player(), "session_start");
        assert_eq!(offer(&d).level, 4);
        assert_eq!(ids(offer(&d)), ["dagger"]);
        assert_eq!(
            notes(&d),
            [(1, "no_arm"), (2, "no_template"), (3, "no_bundle")]
        );
        // Cosmetics serve at L4 only when the others are exhausted.
        let mut fx = SnapshotFixture::small().without_l1();
        fx.items.retain(|i| i.item_id != "dagger");
        fx.bundles.clear();
        let d = run(&fx.snapshot(), &player(), "session_start");
        assert_eq!(ids(offer(&d)), ["hat"]);
        // L4 empty -> L5.
        for i in &mut fx.items {
            i.fallback_eligible = false;
        }
        let d = run(&fx.snapshot(), &player(), "session_start");
        assert_eq!(d.outcome, Outcome::NoOffer(NoOfferReason::Suppressed));
        assert_eq!(notes(&d).last(), Some(&(4, "shelf_empty")));
    }

    #[test]
    fn template_takes_items_in_order_with_discount() {
        let mut fx = SnapshotFixture::small().without_l1();
        fx.templates = vec![Template {
            event_type: "boss_raid".into(),
            categories: vec![Category::Equipment, Category::Cosmetic],
            discount_pct: Some(10),
            max_items: Some(3),
        }];
        fx.items.push(item("pin", Category::Cosmetic, 40, 1.0));
        let d = run(&fx.snapshot(), &player(), "boss_raid");
        let o = offer(&d);
        assert_eq!(o.level, 2, "{:?}", d.trace);
        // The hat (better value than the pin) would take the total to 99 > 98: skipped.
        assert_eq!(ids(o), ["dagger", "pin"]);
        assert_eq!(o.price_cents, 81); // (50 + 40) x 0.9
        assert_eq!(o.definition_key, "L2|tpl:boss_raid|dagger,pin|81");
    }

    #[test]
    fn max_price_bounds_every_level() {
        let mut fx = SnapshotFixture::small();
        fx.game.guardrails.max_price_cents = Some(499);
        let snap = fx.snapshot();
        for seed in 0..200 {
            let d = decide(
                &snap,
                &player(),
                "currency_low",
                Utc::now(),
                &mut StdRng::seed_from_u64(seed),
                NonZeroU32::MIN,
            );
            let o = offer(&d);
            assert!(o.price_cents <= 499);
            assert!(o.items.iter().all(|i| i.price_cents <= 499));
        }
        // The first_loss bundle costs 9.99: above the cap, so L4 serves instead.
        let mut fx = SnapshotFixture::small().without_l1();
        fx.game.guardrails.max_price_cents = Some(98);
        fx.bundles = vec![bundle(3, &["dagger"], 0.99, &["first_loss"])];
        let d = run(&fx.snapshot(), &player(), "first_loss");
        assert_eq!(offer(&d).level, 4);
        // A bundle holding an item above the cap never serves either.
        fx.bundles = vec![bundle(4, &["dagger", "axe"], 0.50, &[])];
        let d = run(&fx.snapshot(), &player(), "first_loss");
        assert_eq!(offer(&d).level, 4);
    }

    #[test]
    fn loot_boxes_never_reach_be_or_nl() {
        let mut fx = SnapshotFixture::small();
        fx.items = vec![
            item("crate", Category::Consumable, 199, 50.0),
            item("potion", Category::Consumable, 299, 2.99),
        ];
        fx.items[0].is_loot_box = true;
        fx.bundles = vec![bundle(5, &["crate"], 1.0, &[])];
        let snap = fx.snapshot();
        let mut fr = PlayerContext::new("player_0", GAME_ID);
        fr.country = Some("fr".into());
        // Elsewhere the AI explores the loot box like any other arm.
        let crates = (0..50)
            .filter(|seed| {
                let mut rng = StdRng::seed_from_u64(*seed);
                let d = decide(&snap, &fr, "x", Utc::now(), &mut rng, NonZeroU32::MIN);
                ids(offer(&d)) == ["crate"]
            })
            .count();
        assert!(crates > 0, "the crate never served in France");
        for country in ["BE", "nl", "Be"] {
            let mut p = fr.clone();
            p.country = Some(country.into());
            for seed in 0..50 {
                let mut rng = StdRng::seed_from_u64(seed);
                let d = decide(&snap, &p, "x", Utc::now(), &mut rng, NonZeroU32::MIN);
                assert_eq!(ids(offer(&d)), ["potion"], "{country}");
            }
        }
    }
}
