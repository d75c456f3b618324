//! Serving offers: runs the pure decision on the published snapshots, applies the effects
//! (frequency-cap reservation, decision log, shadow counts, approval queueing) and builds
//! the wire offer. The REST handler and the WebSocket gateway both serve through
//! [`serve`], so the two surfaces can never disagree.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{Duration, Utc};
use offer_actors::{GameHandle, SessionHandle};
use offer_domain::bandit::Arm;
use offer_domain::catalogue::cents_to_usd;
use offer_domain::learner::Features;
use offer_domain::offer::ServedOffer;
use offer_domain::pipeline::{Candidate, Lesson, NoOfferReason, Outcome, decide, source_of_name};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use uuid::Uuid;

use offer_domain::approval::OfferDefinition;
use serde::Deserialize;

use crate::service::approval::approvals::queue_offer;
use crate::service::play::decision_codec;
use crate::service::play::decision_log::{DecisionRecord, Served};
use crate::service::{ServiceResult, Services};

thread_local! {
    /// The L1 learner's sampler on this thread: fast rather than cryptographic (it only picks
    /// which arm to explore), seeded once per thread from the OS.
    static SAMPLER: RefCell<SmallRng> = RefCell::new(SmallRng::from_rng(&mut rand::rng()));
}

/// Decisions made with a seeded sampler in this process (`offers.sampler_seed`): the n-th
/// decision draws from the seed and n, so a run that asks for offers one at a time draws the
/// same numbers every time, whatever thread serves each request.
static SEEDED_DECISIONS: AtomicU64 = AtomicU64::new(0);

/// The sampler of one decision with `offers.sampler_seed` set.
fn seeded_sampler(seed: u64) -> SmallRng {
    let n = SEEDED_DECISIONS.fetch_add(1, Ordering::Relaxed);
    SmallRng::seed_from_u64(seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Decides and records one offer for a session and trigger event. Never waits on the
/// store: approval queueing runs in the background.
pub fn serve(
    state: &Services,
    game: &GameHandle,
    session: &SessionHandle,
    event_type: &str,
) -> Served {
    let view = game.view();
    let guardrails = &view.game.guardrails;
    let caps =
        guardrails.max_offers_per_session.is_some() || guardrails.min_offer_interval_s.is_some();
    let player = session.player(caps);
    let now = Utc::now();
    let shadow_every = state.settings.offers.shadow_every;
    let decide_with =
        |rng: &mut SmallRng| decide(&view.snapshot, &player, event_type, now, rng, shadow_every);
    let decision = match state.settings.offers.sampler_seed {
        Some(seed) => decide_with(&mut seeded_sampler(seed)),
        None => SAMPLER.with_borrow_mut(decide_with),
    };
    let decision_id = state.decisions.next_id();
    let served = match &decision.outcome {
        Outcome::Offer(plan) => {
            if session.counters().reserve(&view.game.guardrails, now) {
                Served::Offer(ServedOffer {
                    offer_id: decision_id,
                    fallback_level: plan.level,
                    items: plan.items.clone(),
                    price_usd: cents_to_usd(plan.price_cents),
                    price_cents: plan.price_cents,
                    expires_at: now + Duration::seconds(i64::from(state.settings.offers.ttl_s)),
                    experiment: plan.experiment.clone(),
                })
            } else {
                Served::NoOffer(NoOfferReason::FrequencyCapped, decision_id)
            }
        }
        Outcome::NoOffer(reason) => Served::NoOffer(*reason, decision_id),
    };
    let unqueued: Vec<OfferDefinition> = decision
        .approval_candidates
        .iter()
        .filter(|c| !view.queued.contains(&c.definition_key))
        .map(|c| definition(c, event_type))
        .collect();
    if !unqueued.is_empty() {
        let (state, game) = (state.clone(), game.clone());
        tokio::spawn(async move {
            for definition in unqueued {
                if let Err(e) = queue_offer(&state, &game, definition).await {
                    tracing::warn!(error = %e, "queueing an approval failed; the next candidate retries");
                }
            }
        });
    }
    state.decisions.record(DecisionRecord::new(
        decision_id,
        session.info(),
        event_type,
        now,
        decision,
        &served,
        caps,
    ));
    served
}

/// The approval shape of a candidate.
pub fn definition(c: &Candidate, trigger: &str) -> OfferDefinition {
    OfferDefinition {
        definition_key: c.definition_key.clone(),
        fallback_level: c.level,
        trigger: trigger.to_owned(),
        item_ids: c.items.iter().map(|i| i.item_id.clone()).collect(),
        price_cents: c.price_cents,
        price_usd: cents_to_usd(c.price_cents),
        arm: c.arm,
    }
}

/// Teaches the L1 learner from an `offer_shown` or `purchase` event naming a single-item
/// offer (of any level), reported by `session_id`: only the session the offer was served to
/// teaches with it, so no other session (a holdout player's, say) reports another's offers.
/// The lesson comes from this node's decision log when this node served the offer; otherwise
/// from the decision record in the store (written there behind the response), read in a task
/// of its own so the event's answer never waits for it. An event that arrives on another
/// node before the record reached the store teaches nothing.
pub fn learn(
    state: &Services,
    game: &GameHandle,
    session_id: Uuid,
    offer_id: Uuid,
    purchased: bool,
) {
    let game_id = game.view().game.game_id;
    if let Some(record) = state.decisions.get(&offer_id) {
        if let Some(lesson) = &record.learning
            && record.game_id == game_id
            && record.session_id == session_id
        {
            game.learn(lesson.clone(), purchased);
        }
        return;
    }
    let (state, game) = (state.clone(), game.clone());
    tokio::spawn(async move {
        match stored_lesson(&state, game_id, session_id, offer_id).await {
            Ok(Some(lesson)) => game.learn(lesson, purchased),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "reading a decision to learn from failed"),
        }
    });
}

/// The lesson of a decision of `game_id` served to `session_id` kept in the store, if it is
/// there and taught one.
async fn stored_lesson(
    state: &Services,
    game_id: Uuid,
    session_id: Uuid,
    offer_id: Uuid,
) -> ServiceResult<Option<Lesson>> {
    /// The fields of a stored decision record that learning needs.
    #[derive(Deserialize)]
    struct Stored {
        session_id: Uuid,
        trigger: String,
        learning: Option<StoredLesson>,
    }
    /// A lesson as the record keeps it: its features by label.
    #[derive(Deserialize)]
    struct StoredLesson {
        arm: Arm,
        source: String,
        features: Vec<String>,
    }
    let Some(bytes) = state.store.get_decision(game_id, offer_id).await? else {
        return Ok(None);
    };
    let stored: Stored = decision_codec::decode(&bytes)?;
    if stored.session_id != session_id {
        return Ok(None);
    }
    Ok(stored.learning.and_then(|l| {
        Some(Lesson {
            arm: l.arm,
            source: source_of_name(&l.source)?,
            features: std::sync::Arc::new(Features::from_labels(&stored.trigger, l.features)),
        })
    }))
}
