//! SDK sessions and player profiles.
//!
//! A session record is written when a session opens so that any node can resume it (the
//! first request on another node reads it once, then that node's session actor serves from
//! memory). A player profile keeps what outlives a session: lifetime real-money spend, which
//! places the player in an L1 segment; the money step keeps it atomically with the purchase.

use chrono::{DateTime, Utc};
use offer_actors::{SessionHandle, SessionInfo, SessionKey};
use offer_domain::pipeline::PlayerContext;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::{decode, encode};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::{Collection, Environment};

/// A stored session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Client-chosen id.
    pub session_id: Uuid,
    /// The player.
    pub player_id: String,
    /// Attributes sent at open (country, platform, ...).
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// Open time.
    pub created_at: DateTime<Utc>,
}

/// What outlives a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlayerProfile {
    /// Lifetime real-money spend in cents (kept by the atomic money step).
    pub spend_cents: i64,
}

fn sessions(game_id: Uuid, env: Environment) -> Collection {
    Collection::game(
        game_id,
        match env {
            Environment::Production => "sessions_production",
            Environment::Sandbox => "sessions_sandbox",
        },
    )
}

/// Builds the player's features from a session record and profile.
pub fn player_context(
    game_id: Uuid,
    record: &SessionRecord,
    profile: &PlayerProfile,
) -> PlayerContext {
    let mut p = PlayerContext::new(record.player_id.clone(), game_id);
    let mut attributes = record.attributes.clone();
    p.country = attributes
        .remove("country")
        .and_then(|v| v.as_str().map(str::to_ascii_uppercase));
    p.platform = attributes
        .remove("platform")
        .and_then(|v| v.as_str().map(str::to_ascii_lowercase));
    p.attributes = attributes.into_iter().collect();
    p.spend_cents = profile.spend_cents;
    p
}

/// Stores a new session; an existing id is returned as is when it belongs to the same
/// player (a retried open), and refused with 409 otherwise.
pub async fn open(
    state: &AppState,
    game_id: Uuid,
    env: Environment,
    record: SessionRecord,
) -> ApiResult<(SessionHandle, bool)> {
    let coll = sessions(game_id, env);
    let id = record.session_id.to_string();
    let created = state.store.insert_new(coll, &id, encode(&record)?).await?;
    let record = if created {
        record
    } else {
        let stored: SessionRecord = decode(
            &state
                .store
                .get(coll, &id)
                .await?
                .ok_or_else(|| ApiError::Internal("session vanished".into()))?,
        )?;
        if stored.player_id != record.player_id {
            return Err(ApiError::Conflict(
                "this session_id belongs to another player".into(),
            ));
        }
        stored
    };
    Ok((activate(state, game_id, env, &record).await?, created))
}

/// The open session, from this node's actors or (after a move between nodes) the store.
/// A session of another game or environment is a 404.
pub async fn resolve(
    state: &AppState,
    game_id: Uuid,
    env: Environment,
    session_id: Uuid,
) -> ApiResult<SessionHandle> {
    let key = SessionKey {
        game_id,
        sandbox: env == Environment::Sandbox,
        session_id,
    };
    if let Some(s) = state.actors.session(&key) {
        return Ok(s);
    }
    let bytes = state
        .store
        .get(sessions(game_id, env), &session_id.to_string())
        .await?
        .ok_or(ApiError::NotFound("session"))?;
    let record: SessionRecord = decode(&bytes)?;
    activate(state, game_id, env, &record).await
}

async fn activate(
    state: &AppState,
    game_id: Uuid,
    env: Environment,
    record: &SessionRecord,
) -> ApiResult<SessionHandle> {
    let profile = profile(state, game_id, env, &record.player_id).await?;
    let info = SessionInfo {
        session_id: record.session_id,
        game_id,
        sandbox: env == Environment::Sandbox,
        player_id: record.player_id.clone(),
    };
    Ok(state
        .actors
        .open_session(info, player_context(game_id, record, &profile)))
}

/// What outlives a session, read from the store's money aggregates.
pub async fn profile(
    state: &AppState,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
) -> ApiResult<PlayerProfile> {
    Ok(PlayerProfile {
        spend_cents: state.store.spend_cents(game_id, env, player_id).await?,
    })
}
