//! SDK events (`POST /v1/sdk/events` and the WebSocket `event` message): one entry point,
//! [`receive`], for both transports. It checks the whole batch ([`validate`]: size, every
//! event, then the kill switch), so a malformed batch changes nothing, then applies each
//! event on its own (the `apply` module, one function per kind of event), a refused one not
//! stopping the rest; [`outcome`] holds what that did.
//!
//! Telemetry events feed the session's live features and the L1 model; money events go
//! through the store's atomic wallet step (idempotent by `tx_id`). Currency enters wallets
//! only through `currency_earned`; `purchase` (the `purchase` module: store receipts, what it
//! grants and counts) records real-money revenue and puts its non-currency items in the
//! player's inventory, which `item_used` takes them out of.
//!
//! A batch with an accepted event beyond `session_start` counts its player as playing today
//! (monthly players, the plan, the holdout groups): opening a session alone counts no one.
//!
//! A purchase's items go through the inventory step after its wallet step, under the same
//! `tx_id`, when the wallet step applied it or recognised it as a replay: each step is
//! idempotent on its own, so a purchase retried after a failure between the two adds its
//! items exactly once, and a replay adds nothing. Each granted non-currency item adds its
//! catalogue `quantity` units (1 when it has none); currency packs and ids that are no
//! catalogue item add nothing.

mod apply;
mod context;
#[cfg(test)]
mod fixtures;
pub mod outcome;
mod purchase;
pub mod validate;

use offer_actors::{GameHandle, SessionHandle};
use offer_domain::environment::Environment;
use offer_wire::event::SdkEvent;
use uuid::Uuid;

use crate::service::economy::population;
use crate::service::{ServiceError, ServiceResult, Services};
use context::{Context, Origin};
pub use outcome::{Applied, Balance, BatchOutcome, Refusal, Rejected};
pub use validate::validate_fields;

/// Most events one call may carry.
pub const MAX_BATCH: usize = 100;

/// Whose events these are, and how they came.
#[derive(Clone, Copy)]
pub enum Sender<'a> {
    /// The open session's own socket, which is answered with the balance and inventory an
    /// event leaves (the player's other sessions hear of an inventory change).
    Socket(&'a SessionHandle),
    /// `POST /v1/sdk/events`, naming its session: every session of the player hears of the
    /// changes, this one included. A game that requires player identity also needs the
    /// session's player's token on every call, since a session id alone proves nothing.
    Rest {
        /// The session named.
        session_id: Uuid,
        /// The player token sent with the call, if any.
        player_token: Option<&'a str>,
    },
}

/// Receives a batch of a session's events: the one way events are applied. The whole batch
/// is checked first (size, then every event, then the kill switch), so a malformed batch
/// changes nothing; after that each event stands alone and a refused one does not stop the
/// rest. Answers what each event did, in order.
pub async fn receive(
    state: &Services,
    game: &GameHandle,
    env: Environment,
    sender: Sender<'_>,
    events: &[SdkEvent],
) -> ServiceResult<Vec<Applied>> {
    if events.len() > MAX_BATCH {
        return Err(ServiceError::PayloadTooLarge(format!(
            "at most {MAX_BATCH} events per call"
        )));
    }
    {
        let view = game.view();
        validate::validate_all(&view.game, &view.items, events)?;
        if !view.kill_switch.level.allows_sdk() {
            return Err(ServiceError::SdkDisabled);
        }
    }
    let resolved;
    let (session, origin) = match sender {
        Sender::Socket(session) => (session, Origin::Socket),
        Sender::Rest {
            session_id,
            player_token,
        } => {
            let game_id = game.view().game.game_id;
            resolved =
                crate::service::play::sessions::resolve(state, game_id, env, session_id).await?;
            crate::service::game::player_auth::prove_session(game, &resolved, player_token)?;
            (&resolved, Origin::Rest)
        }
    };
    let cx = Context {
        state,
        game,
        session,
        env,
        origin,
    };
    let mut applied = Vec::with_capacity(events.len());
    let game_id = game.view().game.game_id;
    for event in events {
        let outcome = apply::apply(&cx, event).await?;
        if let Applied::Rejected(refusal) = &outcome {
            state.refusals.add(game_id, env, refusal.code());
        }
        applied.push(outcome);
    }
    let played = events.iter().zip(&applied).any(|(e, a)| {
        !matches!(e, SdkEvent::SessionStart { .. }) && !matches!(a, Applied::Rejected(_))
    });
    if played {
        // The events are applied whatever happens here: a store failure leaves the player
        // uncounted until its next batch, which tries again, rather than answering an error
        // for events that took effect.
        let player = session.player(false);
        if let Err(e) = population::count_played(
            state,
            game_id,
            env,
            &session.info().player_id,
            chrono::Utc::now().date_naive(),
            player.platform.as_deref(),
        )
        .await
        {
            tracing::warn!(error = %e, "counting a player that played failed; its next batch retries");
        }
    }
    Ok(applied)
}
