//! Price experiments: which variant a player is assigned, and the price it sets.
//!
//! An experiment changes the price of the offer the levels chose, never its items, so the
//! definition key (and so an approval) is the same in every variant. The assignment is a
//! hash of the player id and the experiment id, so a player keeps its variant on every node
//! and after every restart without anything being stored.

use uuid::Uuid;

use super::{Candidate, Ctx, OfferPlan, TraceNote, usd_to_cents_f64};
use crate::catalogue::MAX_PRICE_CENTS;
use crate::holdout::hash_pair_u64;
use crate::offer::Experiment;
use crate::offer::ExperimentRef;
use crate::policy;

/// How an experiment variant changes the price.
#[derive(Debug, Clone, Copy)]
enum PriceChange {
    /// The control: the base price.
    Keep,
    /// `price_usd`, in whole cents (not yet checked against the range or the cap).
    Replace(f64),
    /// `price_multiplier`.
    Multiply(f64),
}

/// One variant, ready to assign.
#[derive(Debug, Clone)]
struct SnapVariant {
    /// Cumulative weight bound: the variant owns hashes below it.
    upto: u64,
    name: String,
    change: PriceChange,
}

/// The experiment that applies, precomputed when the snapshot is built.
#[derive(Debug, Clone)]
pub(super) struct SnapExperiment {
    id: Uuid,
    /// The id in lowercase hyphenated form, hashed with the player id.
    id_text: String,
    total_weight: u64,
    variants: Vec<SnapVariant>,
}

/// Precomputes an experiment: its variants with a positive weight and their cumulative
/// bounds. `None` when no variant has weight, so the snapshot takes the next experiment.
pub(super) fn snap_experiment(e: &Experiment) -> Option<SnapExperiment> {
    let mut upto = 0u64;
    let variants: Vec<SnapVariant> = e
        .variants
        .iter()
        .filter(|v| v.weight > 0)
        .map(|v| {
            upto += u64::from(v.weight);
            let change = match (v.price_usd, v.price_multiplier) {
                (Some(usd), _) => PriceChange::Replace(usd_to_cents_f64(usd)),
                (None, Some(m)) => PriceChange::Multiply(m),
                (None, None) => PriceChange::Keep,
            };
            SnapVariant {
                upto,
                name: v.name.clone(),
                change,
            }
        })
        .collect();
    (upto > 0).then(|| SnapExperiment {
        id: e.experiment_id,
        id_text: e.experiment_id.hyphenated().to_string(),
        total_weight: upto,
        variants,
    })
}

/// The variant of `e` the player hashes to (the one it is served while `e` is the game's
/// first experiment); `None` when no variant has weight.
pub fn variant_of(e: &Experiment, player_id: &str) -> Option<String> {
    let exp = snap_experiment(e)?;
    let bucket = hash_pair_u64(player_id, &exp.id_text) % exp.total_weight;
    exp.variants
        .into_iter()
        .find(|v| bucket < v.upto)
        .map(|v| v.name)
}

/// Assigns the player a variant of the first experiment and applies its price; a variant
/// price outside the guardrails keeps the base price (noted in the trace). The player is
/// still reported in the variant: assignment is intent-to-treat.
pub(super) fn apply_experiment(cx: &mut Ctx<'_>, c: Candidate) -> OfferPlan {
    let mut plan = OfferPlan {
        level: c.level,
        items: c.items,
        price_cents: c.price_cents,
        definition_key: c.definition_key,
        experiment: None,
        arm: c.arm,
        lesson: None,
    };
    let Some((exp, variant, price)) = variant_price(cx, plan.price_cents) else {
        return plan;
    };
    match price {
        VariantPrice::Base => {}
        VariantPrice::Set(cents) => plan.price_cents = cents,
        VariantPrice::OutsideGuardrails => {
            cx.note(plan.level, TraceNote::VariantPriceOutsideGuardrails);
        }
    }
    plan.experiment = Some(ExperimentRef {
        experiment_id: exp.id,
        variant: variant.name.clone(),
    });
    plan
}

/// The price an offer at `base_cents` serves at for this player once its experiment (if
/// any) applies: what [`apply_experiment`] will set, without noting anything.
pub(super) fn served_price(cx: &Ctx<'_>, base_cents: i64) -> i64 {
    match variant_price(cx, base_cents) {
        Some((_, _, VariantPrice::Set(cents))) => cents,
        _ => base_cents,
    }
}

/// What a variant does to a price.
enum VariantPrice {
    /// The control, or no change.
    Base,
    /// This price, within the range and the guardrails.
    Set(i64),
    /// A price outside the range or the guardrails: the base price stays.
    OutsideGuardrails,
}

/// The experiment that applies, the player's variant and what it does to `base_cents`;
/// `None` without an experiment.
fn variant_price<'s>(
    cx: &Ctx<'s>,
    base_cents: i64,
) -> Option<(&'s SnapExperiment, &'s SnapVariant, VariantPrice)> {
    let exp = cx.snap.experiment()?;
    let bucket = hash_pair_u64(&cx.player.player_id, &exp.id_text) % exp.total_weight;
    let variant = exp.variants.iter().find(|v| bucket < v.upto)?;
    let price = match variant.change {
        PriceChange::Keep => None,
        PriceChange::Replace(cents) => Some(cents),
        PriceChange::Multiply(m) => Some((base_cents as f64 * m).round()),
    };
    let effect = match price {
        None => VariantPrice::Base,
        Some(p) => {
            let in_range = p.is_finite() && (0.0..=MAX_PRICE_CENTS as f64).contains(&p);
            // In range, so the cast is exact.
            let cents = p as i64;
            if in_range && policy::price_allowed(cx.snap.guardrails(), cents) {
                VariantPrice::Set(cents)
            } else {
                VariantPrice::OutsideGuardrails
            }
        }
    };
    Some((exp, variant, effect))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kill_level::KillLevel;
    use crate::offer::Variant;
    use crate::testing::{self, SnapshotFixture, notes, offer, player, run};

    #[test]
    fn the_variant_a_player_hashes_to_is_the_one_it_is_served() {
        let mut fx = SnapshotFixture::small();
        fx.kill_level = KillLevel::AiOff;
        let exp = Experiment {
            experiment_id: Uuid::from_u128(78),
            min_sample: 1_000,
            variants: ["a", "b", "c"]
                .map(|name| Variant {
                    name: name.into(),
                    weight: 1,
                    price_usd: None,
                    price_multiplier: None,
                })
                .to_vec(),
        };
        fx.experiments = vec![exp.clone()];
        let snap = fx.snapshot();
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..60 {
            let mut p = player();
            p.player_id = format!("p{i}");
            let served = offer(&run(&snap, &p, "first_loss")).experiment.clone();
            let named = variant_of(&exp, &p.player_id).expect("a variant");
            assert_eq!(served.map(|r| r.variant), Some(named.clone()));
            seen.insert(named);
        }
        assert_eq!(seen.len(), 3, "every variant is assigned: {seen:?}");
    }

    #[test]
    fn experiments_change_the_price_only() {
        let variant = |price_usd, price_multiplier| Variant {
            name: "b".into(),
            weight: 1,
            price_usd,
            price_multiplier,
        };
        let mut fx = SnapshotFixture::small();
        fx.kill_level = KillLevel::AiOff;
        let base = offer(&run(&fx.snapshot(), &player(), "first_loss")).clone();
        let exp_id = Uuid::from_u128(77);
        fx.experiments = vec![Experiment {
            experiment_id: exp_id,
            variants: vec![variant(Some(7.99), None)],
            min_sample: 1_000,
        }];
        let o = offer(&run(&fx.snapshot(), &player(), "first_loss")).clone();
        assert_eq!(o.price_cents, 799);
        assert_eq!(o.items, base.items);
        assert_eq!(o.definition_key, base.definition_key);
        assert_eq!(
            o.experiment,
            Some(ExperimentRef {
                experiment_id: exp_id,
                variant: "b".to_string()
            })
        );
        fx.experiments[0].variants = vec![variant(None, Some(0.5))];
        assert_eq!(
            offer(&run(&fx.snapshot(), &player(), "first_loss")).price_cents,
            500
        );
        // Above the cap: the base price stays, and the trace says why.
        fx.game.guardrails.max_price_cents = Some(1_000);
        fx.experiments[0].variants = vec![variant(None, Some(2.0))];
        let d = run(&fx.snapshot(), &player(), "first_loss");
        assert_eq!(offer(&d).price_cents, 999);
        assert!(notes(&d).contains(&(3, "variant_price_outside_guardrails")));
    }

    #[test]
    fn experiment_assignment_is_deterministic_and_weighted() {
        let mut fx = SnapshotFixture::small();
        fx.experiments = vec![testing::experiment(78, 1, ("cheap", 3, 0.5))];
        let snap = fx.snapshot();
        let mut cheap = 0;
        for i in 0..2_000 {
            let mut p = player();
            p.player_id = format!("p{i}");
            let a = offer(&run(&snap, &p, "first_loss")).experiment.clone();
            let b = offer(&run(&snap, &p, "first_loss")).experiment.clone();
            assert_eq!(a, b);
            if a.is_some_and(|e| e.variant == "cheap") {
                cheap += 1;
            }
        }
        assert!((1_350..1_650).contains(&cheap), "{cheap}");
    }
}
