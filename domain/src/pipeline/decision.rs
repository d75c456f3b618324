//! What a decision returns: the outcome (an offer plan or the reason for none), the trace
//! of why each higher level passed, and the L1/L2 picks that Shadow and Assisted modes hold
//! back.

use std::sync::Arc;

use serde::{Serialize, Serializer};

use super::lesson::{Explanation, Lesson};
use crate::bandit::Arm;
use crate::catalogue::Item;
use crate::offer::ExperimentRef;

/// Why no offer was served, named as in the `Offer-Outcome` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoOfferReason {
    /// Kill switch at level 2 or 3.
    KillSwitch,
    /// The player is in the permanent holdout.
    Holdout,
    /// A frequency cap of the guardrails.
    FrequencyCapped,
    /// No level produced an offer (L5).
    Suppressed,
}

impl NoOfferReason {
    /// The `Offer-Outcome` header value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::KillSwitch => "kill_switch",
            Self::Holdout => "holdout",
            Self::FrequencyCapped => "frequency_capped",
            Self::Suppressed => "suppressed",
        }
    }
}

/// An offer a level proposed.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// Pipeline level 1 to 4.
    pub level: u8,
    /// The items, shared with the snapshot.
    pub items: Vec<Arc<Item>>,
    /// Price in cents before any experiment.
    pub price_cents: i64,
    /// Stable key of the offer's definition: identical candidates share it, so one approval
    /// covers them all.
    pub definition_key: String,
    /// The arm the learner picked, for an L1 candidate.
    pub arm: Option<Arm>,
}

/// The offer to serve.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferPlan {
    /// Pipeline level 1 to 4 (`fallback_level`).
    pub level: u8,
    /// The items, shared with the snapshot.
    pub items: Vec<Arc<Item>>,
    /// Price in cents, after the experiment's override if any.
    pub price_cents: i64,
    /// Stable key of the offer's definition (before any experiment).
    pub definition_key: String,
    /// The experiment and variant, when an experiment assigned the player.
    pub experiment: Option<ExperimentRef>,
    /// The arm the learner picked, for an L1 offer.
    pub arm: Option<Arm>,
    /// What showing the offer teaches the learner (a single-item offer of an AI category,
    /// whatever its level), with the context it was decided in, so the show and the purchase
    /// teach the same thing on whichever node they arrive.
    pub lesson: Option<Lesson>,
}

/// The result of a decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Serve this offer.
    Offer(OfferPlan),
    /// Answer 204 with this `Offer-Outcome`.
    NoOffer(NoOfferReason),
}

/// Why a level passed over, or a note about the offer it served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceNote {
    /// The player has no features yet: L1 to L3 give way to the store shelf.
    NoFeatures,
    /// The kill switch turned the AI levels (L1, L2) off.
    KillSwitchAiOff,
    /// The FSR quadrant is hyper-inflation: the AI levels are suppressed.
    HyperInflation,
    /// Shadow mode: the AI pick was recorded, not served.
    ShadowSilent,
    /// Shadow mode: this decision was not among those sampled to compute the silent pick
    /// (one in the engine's `shadow_every`), so L1 and L2 were not run.
    ShadowUnsampled,
    /// Assisted mode: the AI pick waits for the studio's approval.
    AwaitingApproval,
    /// L1: the model had no arm to pick (price cap, catalogue, loot-box rule).
    NoArm,
    /// L1: no item of the picked arm passes the policy for this player.
    NoItemForArm,
    /// L2: no template for the trigger event.
    NoTemplate,
    /// L2: the template found no item within the rules.
    TemplateEmpty,
    /// L3: no bundle for the event passes the policy.
    NoBundle,
    /// L4: no shelf item passes the policy.
    ShelfEmpty,
    /// The experiment variant's price is outside the guardrails: the base price serves.
    VariantPriceOutsideGuardrails,
    /// The game enforces store receipts and no product of a store the player buys from
    /// sells this level's offer at its price: it could never be paid for.
    NoStoreProduct,
}

impl TraceNote {
    /// The snake_case name the trace is read with.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoFeatures => "no_features",
            Self::KillSwitchAiOff => "kill_switch_ai_off",
            Self::HyperInflation => "hyper_inflation",
            Self::ShadowSilent => "shadow_silent",
            Self::ShadowUnsampled => "shadow_unsampled",
            Self::AwaitingApproval => "awaiting_approval",
            Self::NoArm => "no_arm",
            Self::NoItemForArm => "no_item_for_arm",
            Self::NoTemplate => "no_template",
            Self::TemplateEmpty => "template_empty",
            Self::NoBundle => "no_bundle",
            Self::ShelfEmpty => "shelf_empty",
            Self::VariantPriceOutsideGuardrails => "variant_price_outside_guardrails",
            Self::NoStoreProduct => "no_store_product",
        }
    }
}

impl Serialize for TraceNote {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// Why a level was passed over (or a note about the served offer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct TraceStep {
    /// The level the note is about (1 to 4).
    pub level: u8,
    /// A snake_case reason, for example `no_template` or `kill_switch_ai_off`.
    #[schema(value_type = String)]
    pub note: TraceNote,
}

/// A decision with its explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// Offer or no offer.
    pub outcome: Outcome,
    /// Why each higher level passed, in evaluation order.
    pub trace: Vec<TraceStep>,
    /// Shadow mode: the L1/L2 pick that would have served.
    pub shadow: Option<Candidate>,
    /// Assisted mode: every L1/L2 pick waiting for studio approval, L1 first. Each is
    /// queued, so an L2 definition reaches the studio even while L1 keeps finding an arm.
    pub approval_candidates: Vec<Candidate>,
    /// Why the learner picked its arm, when L1 ran (served, silent or awaiting approval).
    pub explanation: Option<Explanation>,
}

impl Decision {
    /// A decision that stopped before the levels: no trace, no held-back pick.
    pub(super) fn no_offer(reason: NoOfferReason) -> Self {
        Self {
            outcome: Outcome::NoOffer(reason),
            trace: Vec::new(),
            shadow: None,
            approval_candidates: Vec::new(),
            explanation: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_step_serialises_its_note_by_name() {
        let step = TraceStep {
            level: 3,
            note: TraceNote::VariantPriceOutsideGuardrails,
        };
        assert_eq!(
            serde_json::to_string(&step).expect("json"),
            r#"{"level":3,"note":"variant_price_outside_guardrails"}"#
        );
    }
}
