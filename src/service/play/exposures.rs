//! Counting offers in their price experiment: an `offer_shown` of an offer an experiment
//! priced adds one show to its player's totals in that variant, and a purchase of it whose
//! revenue counts (applied now, and proven when the game checks receipts) adds one purchase
//! and its revenue. The totals live in the store ([`crate::store::Exposures`]), added to by
//! every node, so an experiment's results never read the ledger.
//!
//! The experiment and variant come from the offer's decision record: this node's log when it
//! served the offer, otherwise the record every node writes to the store behind its answers.
//! As for learning, only the session the offer was served to counts it. An event that arrives
//! on another node before the record reached the store is counted by a task of its own once
//! the record is there (it looks a few times, a short while apart), so the event's answer
//! never waits; a record that never appears (an unknown offer, or one past its time to live)
//! counts nothing. A store failure while counting is logged and costs that count only: the
//! event itself was applied.

use std::time::Duration;

use offer_actors::SessionInfo;
use offer_domain::environment::Environment;
use offer_domain::offer::ExperimentRef;
use serde::Deserialize;
use uuid::Uuid;

use crate::service::play::decision_codec;
use crate::service::{ServiceResult, Services};
use crate::store::{ExposureKey, ExposureTotals};

/// How often a task looks for a decision record that had not reached the store yet.
const LOOKS: u32 = 10;
/// The pause between two looks: together they outlast the decision writer's linger and a
/// batch's write.
const LOOK_EVERY: Duration = Duration::from_millis(150);

/// What an event adds, for a session of `env` reporting `offer_id`.
pub async fn count(
    state: &Services,
    session: &SessionInfo,
    env: Environment,
    offer_id: Uuid,
    delta: ExposureTotals,
) {
    let found = match state.decisions.get(&offer_id) {
        Some(record) => Found::Arm(
            (record.game_id == session.game_id && record.session_id == session.session_id)
                .then(|| record.experiment.clone())
                .flatten(),
        ),
        None => match stored_arm(state, session, offer_id).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "reading a decision to count in its experiment failed");
                return;
            }
        },
    };
    match found {
        Found::Arm(Some(arm)) => add(state, session, env, &arm, delta).await,
        Found::Arm(None) => {}
        Found::NotYet => {
            let (state, session) = (state.clone(), session.clone());
            tokio::spawn(async move {
                for _ in 0..LOOKS {
                    tokio::time::sleep(LOOK_EVERY).await;
                    match stored_arm(&state, &session, offer_id).await {
                        Ok(Found::Arm(Some(arm))) => {
                            return add(&state, &session, env, &arm, delta).await;
                        }
                        Ok(Found::Arm(None)) => return,
                        Ok(Found::NotYet) => {}
                        Err(e) => tracing::warn!(error = %e,
                            "reading a decision to count in its experiment failed"),
                    }
                }
            });
        }
    }
}

/// What the decision record says.
enum Found {
    /// The record is there: the experiment arm of the offer, if an experiment priced it and
    /// it was served to this session.
    Arm(Option<ExperimentRef>),
    /// No record in the store (yet).
    NotYet,
}

/// The experiment arm of a decision of the session's game kept in the store.
async fn stored_arm(
    state: &Services,
    session: &SessionInfo,
    offer_id: Uuid,
) -> ServiceResult<Found> {
    /// The fields of a stored decision record that counting needs.
    #[derive(Deserialize)]
    struct Stored {
        session_id: Uuid,
        #[serde(default)]
        experiment: Option<ExperimentRef>,
    }
    let Some(bytes) = state.store.get_decision(session.game_id, offer_id).await? else {
        return Ok(Found::NotYet);
    };
    let stored: Stored = decision_codec::decode(&bytes)?;
    Ok(Found::Arm(
        (stored.session_id == session.session_id)
            .then_some(stored.experiment)
            .flatten(),
    ))
}

/// Adds `delta` to the session's player's totals in `arm`.
async fn add(
    state: &Services,
    session: &SessionInfo,
    env: Environment,
    arm: &ExperimentRef,
    delta: ExposureTotals,
) {
    let key = ExposureKey {
        game_id: session.game_id,
        env,
        experiment_id: arm.experiment_id,
        variant: &arm.variant,
        player_id: &session.player_id,
    };
    if let Err(e) = state.store.add_exposure(key, delta).await {
        tracing::warn!(error = %e, game_id = %session.game_id,
            experiment_id = %arm.experiment_id, "an experiment count was not stored");
    }
}
