//! The offer decision: an immutable per-game snapshot and the five-level fallback pipeline.
//!
//! [`GameSnapshot`] is built once per configuration change (catalogue, templates, bundles,
//! experiments, guardrails, mode, kill switch, quadrant, approvals, model) and precomputes
//! every index a decision needs, so [`decide`] only walks short sorted lists: no I/O, no
//! locks, and few allocations (the offer's item list, its definition key and the trace).
//!
//! Step order of [`decide`]: kill switch (level 2 or 3: `kill_switch`), holdout (`holdout`),
//! frequency caps (`frequency_capped`), then L1 AI (the contextual learner), L2 genre template, L3 studio
//! bundle, L4 store shelf, else L5 `suppressed`. A player with an empty feature set goes
//! straight to L4. L1 and L2 are skipped at kill level 1 and in `HYPER_INFL`. In Shadow an
//! L1/L2 pick is recorded but not served (computed for a random one decision in
//! `shadow_every`, the others skip L1 and L2); in Assisted it serves only once approved. Every
//! item of every candidate passes the policy engine (price cap, loot-box countries). A game
//! that enforces store receipts passes over a level whose offer no store product sells at
//! its price (`no_store_product`).
//!
//! The files follow the decision: `snapshot` builds the per-game indexes, `player` holds what
//! is known of the player, `levels` proposes one candidate per level, `experiment` prices the
//! chosen offer, `lesson` says what the offer teaches the learner and why the AI picked it,
//! and `decision` names what a decision returns. This file holds the step order.

mod decision;
mod experiment;
mod lesson;
mod levels;
mod payment;
mod player;
mod snapshot;

use std::num::NonZeroU32;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rand::Rng;

pub use decision::{Candidate, Decision, NoOfferReason, OfferPlan, Outcome, TraceNote, TraceStep};
pub use experiment::variant_of;
use experiment::{apply_experiment, served_price};
pub use lesson::{Explanation, Lesson, source_name, source_of_name};
pub use levels::MAX_DISCOUNT_PCT;
use levels::{ai_levels, level3, level4};
pub use player::PlayerContext;
pub use snapshot::{GameSnapshot, SnapshotInput};

use crate::catalogue::Item;
use crate::learner::Features;
use crate::policy;

/// Dollars to whole cents, still a float: callers check the range before converting.
fn usd_to_cents_f64(usd: f64) -> f64 {
    (usd * 100.0).round()
}

/// Decision scratch state threaded through the levels.
struct Ctx<'a> {
    snap: &'a GameSnapshot,
    player: &'a PlayerContext,
    event_type: &'a str,
    now: DateTime<Utc>,
    /// The context's learner features, extracted once when first needed.
    features: Option<Arc<Features>>,
    trace: Vec<TraceStep>,
    shadow: Option<Candidate>,
    approval_candidates: Vec<Candidate>,
    explanation: Option<Explanation>,
}

impl Ctx<'_> {
    /// Records why `level` passed (or a note about the offer it served).
    fn note(&mut self, level: u8, note: TraceNote) {
        self.trace.push(TraceStep { level, note });
    }

    /// The decision's context features for the learner, extracted on first use (only
    /// decisions that run L1 or serve a single item need them).
    fn features(&mut self) -> Arc<Features> {
        let snap = self.snap;
        let (player, event_type, today) = (self.player, self.event_type, self.now.date_naive());
        Arc::clone(self.features.get_or_insert_with(|| {
            let ignored = &snap.learner().settings().ignored_attributes;
            Arc::new(Features::extract(
                &player.learner_context(event_type, today),
                ignored,
            ))
        }))
    }

    /// Whether the policy lets this player see the item (price cap, loot-box countries).
    fn allowed(&self, item: &Item) -> bool {
        policy::item_allowed(self.snap.guardrails(), item, self.player.country.as_deref())
    }

    /// `candidate`, unless the game enforces store receipts and no store product the player
    /// can buy sells it at the price it would serve at (after its experiment): then the trace
    /// notes why its level passed, and the next level is asked.
    fn payable(&mut self, candidate: Option<Candidate>) -> Option<Candidate> {
        let c = candidate?;
        if self.sells(&c.items, c.price_cents) {
            Some(c)
        } else {
            self.note(c.level, TraceNote::NoStoreProduct);
            None
        }
    }

    /// Whether an offer of `items` at `base_cents` can be paid for by this player once its
    /// experiment prices it (always, unless the game enforces store receipts).
    fn sells(&self, items: &[Arc<Item>], base_cents: i64) -> bool {
        let price = served_price(self, base_cents);
        self.snap
            .payable(self.player.platform.as_deref(), items, price)
    }
}

/// Decides the offer for one player and trigger event, in the step order above.
///
/// Pure: the same snapshot, player, event, time and random state give the same decision.
/// The random generator feeds only the L1 learner's exploration and, in Shadow mode, the
/// draw of the one decision in `shadow_every` whose silent L1/L2 pick is computed and
/// recorded (the others note `shadow_unsampled` at L1 and L2).
pub fn decide(
    snap: &GameSnapshot,
    player: &PlayerContext,
    event_type: &str,
    now: DateTime<Utc>,
    rng: &mut impl Rng,
    shadow_every: NonZeroU32,
) -> Decision {
    if !snap.kill_level().allows_offers() {
        return Decision::no_offer(NoOfferReason::KillSwitch);
    }
    if player.holdout {
        return Decision::no_offer(NoOfferReason::Holdout);
    }
    if !policy::frequency_allowed(
        snap.guardrails(),
        player.offers_shown,
        player.last_offer_at,
        now,
    ) {
        return Decision::no_offer(NoOfferReason::FrequencyCapped);
    }
    let mut cx = Ctx {
        snap,
        player,
        event_type,
        now,
        features: None,
        trace: Vec::new(),
        shadow: None,
        approval_candidates: Vec::new(),
        explanation: None,
    };
    let picked = if player.has_features() {
        ai_levels(&mut cx, rng, shadow_every).or_else(|| {
            let c = level3(&mut cx);
            cx.payable(c)
        })
    } else {
        for level in 1..=3 {
            cx.note(level, TraceNote::NoFeatures);
        }
        None
    }
    .or_else(|| {
        let c = level4(&mut cx);
        cx.payable(c)
    });
    let outcome = match picked {
        Some(c) => {
            let base_price = c.price_cents;
            let mut plan = apply_experiment(&mut cx, c);
            if plan.items.len() == 1 {
                let features = cx.features();
                let chosen = plan.arm.filter(|_| plan.price_cents == base_price);
                plan.lesson =
                    Lesson::of_offer(plan.level, &plan.items, plan.price_cents, chosen, &features);
            }
            Outcome::Offer(plan)
        }
        None => Outcome::NoOffer(NoOfferReason::Suppressed),
    };
    Decision {
        outcome,
        trace: cx.trace,
        shadow: cx.shadow,
        approval_candidates: cx.approval_candidates,
        explanation: cx.explanation,
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;

    use chrono::Utc;
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;
    use crate::category::Category;
    use crate::economy::Quadrant;
    use crate::game::Mode;
    use crate::kill_level::KillLevel;
    use crate::testing::{GAME_ID, SnapshotFixture, ids, item, notes, offer, player, run};

    #[test]
    fn step_order_kill_switch_then_holdout_then_caps() {
        let mut fx = SnapshotFixture::small();
        fx.game.guardrails.max_offers_per_session = Some(1);
        let mut p = player();
        p.offers_shown = 1;
        p.holdout = true;
        fx.kill_level = KillLevel::OffersOff;
        assert_eq!(
            run(&fx.snapshot(), &p, "boss_raid").outcome,
            Outcome::NoOffer(NoOfferReason::KillSwitch)
        );
        fx.kill_level = KillLevel::Normal;
        assert_eq!(
            run(&fx.snapshot(), &p, "boss_raid").outcome,
            Outcome::NoOffer(NoOfferReason::Holdout)
        );
        p.holdout = false;
        assert_eq!(
            run(&fx.snapshot(), &p, "boss_raid").outcome,
            Outcome::NoOffer(NoOfferReason::FrequencyCapped)
        );
        fx.game.guardrails.max_offers_per_session = None;
        fx.game.guardrails.min_offer_interval_s = Some(60);
        p.last_offer_at = Some(Utc::now() - chrono::Duration::seconds(10));
        let d = run(&fx.snapshot(), &p, "boss_raid");
        assert_eq!(d.outcome, Outcome::NoOffer(NoOfferReason::FrequencyCapped));
        assert_eq!(NoOfferReason::FrequencyCapped.as_str(), "frequency_capped");
        // A real holdout player from the test vectors.
        let held = PlayerContext::new("player_4", GAME_ID);
        assert!(held.holdout);
        assert_eq!(
            run(&SnapshotFixture::small().snapshot(), &held, "boss_raid").outcome,
            Outcome::NoOffer(NoOfferReason::Holdout)
        );
    }

    #[test]
    fn empty_features_go_straight_to_l4() {
        let snap = SnapshotFixture::small().snapshot();
        let p = PlayerContext::new("player_0", GAME_ID);
        assert!(!p.has_features());
        let d = run(&snap, &p, "first_loss");
        let o = offer(&d);
        assert_eq!(o.level, 4);
        // Best value among non-cosmetics: gems_1000 (9.90 for 4.99).
        assert_eq!(ids(o), ["gems_1000"]);
        assert_eq!(
            notes(&d),
            [(1, "no_features"), (2, "no_features"), (3, "no_features")]
        );
        let mut spender = p.clone();
        spender.spend_cents = 100;
        assert!(spender.has_features());
    }

    #[test]
    fn kill_levels() {
        let mut fx = SnapshotFixture::small();
        assert_eq!(
            offer(&run(&fx.snapshot(), &player(), "first_loss")).level,
            1
        );
        fx.kill_level = KillLevel::AiOff;
        let d = run(&fx.snapshot(), &player(), "first_loss");
        assert_eq!(offer(&d).level, 3);
        assert_eq!(
            notes(&d),
            [(1, "kill_switch_ai_off"), (2, "kill_switch_ai_off")]
        );
        for level in [KillLevel::OffersOff, KillLevel::SdkOff] {
            fx.kill_level = level;
            assert_eq!(
                run(&fx.snapshot(), &player(), "first_loss").outcome,
                Outcome::NoOffer(NoOfferReason::KillSwitch)
            );
        }
    }

    #[test]
    fn shadow_records_but_serves_studio_offers() {
        let mut fx = SnapshotFixture::small();
        fx.game.mode = Mode::Shadow;
        let d = run(&fx.snapshot(), &player(), "first_loss");
        assert_eq!(offer(&d).level, 3);
        assert_eq!(d.shadow.as_ref().map(|c| c.level), Some(1));
        assert!(d.approval_candidates.is_empty());
        assert_eq!(notes(&d), [(1, "shadow_silent"), (2, "shadow_silent")]);
    }

    #[test]
    fn shadow_computes_the_silent_pick_for_one_decision_in_shadow_every() {
        let mut fx = SnapshotFixture::small();
        fx.game.mode = Mode::Shadow;
        let snap = fx.snapshot();
        let every = NonZeroU32::new(4).expect("positive");
        let mut sampled = 0;
        for seed in 0..400 {
            let mut rng = StdRng::seed_from_u64(seed);
            let d = decide(&snap, &player(), "first_loss", Utc::now(), &mut rng, every);
            // The studio's offer serves either way.
            assert_eq!(offer(&d).level, 3);
            assert!(d.approval_candidates.is_empty());
            if d.shadow.is_some() {
                sampled += 1;
                assert_eq!(notes(&d), [(1, "shadow_silent"), (2, "shadow_silent")]);
            } else {
                assert_eq!(
                    notes(&d),
                    [(1, "shadow_unsampled"), (2, "shadow_unsampled")]
                );
            }
        }
        // About a quarter of the 400 decisions, far from none and from all.
        assert!((50..=150).contains(&sampled), "{sampled} sampled");
        // Other modes never skip the AI levels.
        let mut fx = SnapshotFixture::small();
        fx.game.mode = Mode::Autonomous;
        let snap = fx.snapshot();
        let never = NonZeroU32::MAX;
        for seed in 0..20 {
            let mut rng = StdRng::seed_from_u64(seed);
            let d = decide(&snap, &player(), "first_loss", Utc::now(), &mut rng, never);
            assert_eq!(offer(&d).level, 1);
        }
    }

    #[test]
    fn assisted_serves_only_approved_definitions() {
        let mut fx = SnapshotFixture::small().without_l1();
        fx.game.mode = Mode::Assisted;
        let d = run(&fx.snapshot(), &player(), "boss_raid");
        assert_eq!(offer(&d).level, 4);
        let pending = d.approval_candidates[0].clone();
        assert_eq!(d.approval_candidates.len(), 1);
        assert_eq!(pending.level, 2);
        assert_eq!(pending.definition_key, "L2|tpl:boss_raid|dagger|50");
        fx.approved.insert(pending.definition_key);
        let d = run(&fx.snapshot(), &player(), "boss_raid");
        assert_eq!(offer(&d).level, 2);
        assert!(d.approval_candidates.is_empty());
        // An approved L1 definition serves too: one arm, one item, a deterministic key.
        let mut fx = SnapshotFixture::small();
        fx.game.mode = Mode::Assisted;
        fx.items = vec![item("gems_1000", Category::Currency, 499, 9.9)];
        let key = run(&fx.snapshot(), &player(), "x").approval_candidates[0]
            .definition_key
            .clone();
        assert_eq!(key, "L1|ai:currency:499|gems_1000|499");
        fx.approved.insert(key);
        assert_eq!(offer(&run(&fx.snapshot(), &player(), "x")).level, 1);
    }

    #[test]
    fn assisted_queues_every_ai_candidate_not_only_the_first() {
        let mut fx = SnapshotFixture::small();
        fx.game.mode = Mode::Assisted;
        let d = run(&fx.snapshot(), &player(), "boss_raid");
        let levels: Vec<u8> = d.approval_candidates.iter().map(|c| c.level).collect();
        assert_eq!(levels, [1, 2]);
        // Approving the L1 definition serves it; L2 is not proposed once L1 serves.
        fx.approved
            .insert(d.approval_candidates[0].definition_key.clone());
        let d = run(&fx.snapshot(), &player(), "boss_raid");
        assert_eq!(offer(&d).level, 1);
        assert!(d.approval_candidates.is_empty());
    }

    #[test]
    fn hyper_inflation_suppresses_ai_levels_only() {
        let mut fx = SnapshotFixture::small();
        fx.quadrant = Quadrant::HyperInfl;
        let d = run(&fx.snapshot(), &player(), "first_loss");
        assert_eq!(offer(&d).level, 3);
        assert_eq!(notes(&d), [(1, "hyper_inflation"), (2, "hyper_inflation")]);
        let d = run(&fx.snapshot(), &player(), "boss_raid");
        assert_eq!(offer(&d).level, 4);
        fx.quadrant = Quadrant::Inflation;
        assert_eq!(offer(&run(&fx.snapshot(), &player(), "boss_raid")).level, 1);
    }

    #[test]
    fn enforced_receipts_pass_over_offers_no_store_product_sells() {
        let mut fx = SnapshotFixture::small();
        fx.kill_level = KillLevel::AiOff;
        fx.enforce_payment = true;
        // Nothing has a store product: every level passes, and says why.
        let d = run(&fx.snapshot(), &player(), "first_loss");
        assert_eq!(d.outcome, Outcome::NoOffer(NoOfferReason::Suppressed));
        assert!(
            notes(&d).contains(&(3, "no_store_product")),
            "{:?}",
            notes(&d)
        );
        assert!(
            notes(&d).contains(&(4, "no_store_product")),
            "{:?}",
            notes(&d)
        );
        // The bundle sold on Google Play serves an Android player, not an iOS one.
        fx.bundles[0].store_products.google_play = Some("starter".into());
        let mut android = player();
        android.platform = Some("android".into());
        assert_eq!(offer(&run(&fx.snapshot(), &android, "first_loss")).level, 3);
        let d = run(&fx.snapshot(), &player(), "first_loss");
        assert_eq!(d.outcome, Outcome::NoOffer(NoOfferReason::Suppressed));
        // An App Store product at the item's catalogue price makes the shelf payable for iOS.
        let mut with_product = SnapshotFixture::small();
        with_product.kill_level = KillLevel::AiOff;
        with_product.enforce_payment = true;
        with_product.bundles.clear();
        for item in &mut with_product.items {
            item.store_products.app_store = Some(format!("com.game.{}", item.item_id));
        }
        let served = offer(&run(&with_product.snapshot(), &player(), "first_loss")).clone();
        assert_eq!(served.level, 4);
        // An experiment moving the price off the catalogue makes the same offer unpayable.
        with_product.experiments = vec![crate::testing::experiment(90, 0, ("cheap", 1, 0.5))];
        let d = run(&with_product.snapshot(), &player(), "first_loss");
        assert_eq!(d.outcome, Outcome::NoOffer(NoOfferReason::Suppressed));
        assert!(
            notes(&d).contains(&(4, "no_store_product")),
            "{:?}",
            notes(&d)
        );
    }
}
