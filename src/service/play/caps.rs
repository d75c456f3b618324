//! Frequency-cap counters across nodes: each session's counters (offers shown, time of the
//! last one) are kept in the store beside its session, so a session that moves to another
//! node, or outlives a restart, keeps its caps instead of starting again at 0.
//!
//! The offer path never touches the store: the counters live in the session, and the
//! task that writes decision records behind the answers ([`crate::service::workers::decisions`]) first writes
//! the current counters of every session that was served an offer in its batch (one store
//! call per game). A session's decision record is therefore in the store only once its
//! counters are. A node that starts a session (on open, or when a request finds it not open
//! on this node) merges the stored counters into the new session's
//! ([`OfferCounters::merge`], which never lowers a count).
//!
//! Only the counters of a game with a frequency cap are written: without one nothing reads
//! them, and writing every served session's counters cost the node as much store work as
//! the decision records themselves. A cap set later counts from the counters this node
//! holds, or from 0 for a session that moves or outlives a restart before its next offer.
//!
//! A session lives on one node at a time, so the last write wins; should two nodes serve
//! one session at the same moment, the store may keep the smaller count until the next
//! offer.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::DateTime;
use offer_actors::{OfferCounters, SessionInfo, SessionKey};
use offer_domain::environment::Environment;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::service::play::decision_log::DecisionRecord;
use crate::service::{ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// A session's counters as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stored {
    /// Offers served in the session.
    shown: u32,
    /// Unix milliseconds of the last one, 0 when none.
    last_ms: i64,
}

/// The collection of a game's session counters.
fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "session_caps")
}

/// A session's document id: its environment's tag and its id.
fn id(env: Environment, session_id: Uuid) -> String {
    format!("{}:{session_id}", env.tag())
}

/// Deletes the stored counters of the given sessions of a game's environment (their
/// player's erasure).
pub async fn forget(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    sessions: &[Uuid],
) -> ServiceResult<()> {
    for session_id in sessions {
        state
            .store
            .delete(collection(game_id), &id(env, *session_id))
            .await?;
    }
    Ok(())
}

/// Writes the live counters of every session of `batch` that was served an offer under a
/// frequency cap (a session no longer on this node is skipped: its counters were written
/// with its offers).
pub async fn save(state: &Services, batch: &[Arc<DecisionRecord>]) {
    let mut by_game: HashMap<Uuid, HashMap<String, Vec<u8>>> = HashMap::new();
    for record in batch
        .iter()
        .filter(|r| r.capped && r.fallback_level.is_some())
    {
        let key = SessionKey {
            game_id: record.game_id,
            env: record.env,
            session_id: record.session_id,
        };
        let Some(session) = state.actors.session(&key) else {
            continue;
        };
        let counters = session.counters();
        let stored = Stored {
            shown: counters.shown(),
            last_ms: counters.last().map_or(0, |t| t.timestamp_millis()),
        };
        match encode(&stored) {
            Ok(bytes) => {
                by_game
                    .entry(record.game_id)
                    .or_default()
                    .insert(id(record.env, record.session_id), bytes);
            }
            Err(err) => tracing::warn!(error = %err, "session counters cannot be stored"),
        }
    }
    for (game_id, entries) in by_game {
        let count = entries.len();
        let entries = entries.into_iter().collect();
        if let Err(err) = state.store.put_all(collection(game_id), entries).await {
            tracing::warn!(error = %err, %game_id, count,
                "session counters not stored: a session moving now restarts its caps");
        }
    }
}

/// Merges the stored counters of `session` into `counters` (a session starting on this
/// node).
pub async fn restore(
    state: &Services,
    session: &SessionInfo,
    counters: &OfferCounters,
) -> ServiceResult<()> {
    let stored = state
        .store
        .get(
            collection(session.game_id),
            &id(session.env, session.session_id),
        )
        .await?;
    if let Some(bytes) = stored {
        let stored: Stored = decode(&bytes)?;
        let last = (stored.last_ms != 0)
            .then(|| DateTime::from_timestamp_millis(stored.last_ms))
            .flatten();
        counters.merge(stored.shown, last);
    }
    Ok(())
}
