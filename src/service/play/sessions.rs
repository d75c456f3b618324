//! SDK sessions and player profiles.
//!
//! A session record is written when a session opens so that any node can resume it (the
//! first request on another node reads it once, then that node's session serves from
//! memory). A player profile keeps what outlives a session: lifetime real-money spend, which
//! places the player in an L1 segment; the money step keeps it atomically with the purchase.

use chrono::{DateTime, Utc};
use offer_actors::{SessionHandle, SessionInfo, SessionKey};
use offer_domain::environment::Environment;
use offer_domain::pipeline::PlayerContext;
use offer_domain::schema::{CountryCode, PlayerIdText};
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

use crate::service::economy::population::{self, PlayerEntry};
use crate::service::game::{games, player_auth};
use crate::service::{ServiceError, ServiceResult, Services, access};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// A session the game asks to open, over REST or as the WebSocket's `hello`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenSession {
    /// Client-chosen UUID; opening it again for the same player resumes it.
    pub session_id: Uuid,
    /// The studio's player id, not blank, at most 128 characters.
    #[schema(value_type = PlayerIdText)]
    pub player_id: String,
    /// Free attributes (country, platform, app_version, level, ...).
    #[serde(default)]
    #[schema(schema_with = attributes_schema)]
    pub attributes: serde_json::Map<String, serde_json::Value>,
    /// The player token the studio's backend signed for this player (a JWT: `sub` the
    /// player id, `aud` the game id, `exp` at most 24 hours ahead, `iat`); needed when the
    /// game's player identity is `required`, ignored otherwise.
    #[serde(default)]
    pub player_token: Option<String>,
}

/// Deepest nesting of arrays and objects inside one attribute value. Attributes are a
/// player's facts (country, platform, level, ...), flat in practice; the bound keeps the
/// stored session well inside what every document may nest.
const MAX_ATTRIBUTE_DEPTH: usize = 8;

/// Most attributes a session may carry.
const MAX_ATTRIBUTES: usize = 32;
/// Largest JSON encoding of a session's attributes.
const MAX_ATTRIBUTES_BYTES: usize = 4096;
/// Longest `platform` attribute, in characters.
const MAX_PLATFORM_LEN: usize = 32;

/// The schema of the attributes: what [`check_attributes`] enforces, but for their encoded
/// size, which JSON Schema cannot bound (the description says it).
fn attributes_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "Free attributes (country, platform, app_version, level, ...): at most 32, at most \
             4 KiB as JSON (422 beyond). `country` and `platform` segment the AI: `country` is \
             an ISO 3166-1 alpha-2 code and `platform` a text of 1 to 32 characters.",
        ))
        .max_properties(Some(MAX_ATTRIBUTES))
        .property("country", CountryCode::schema())
        .property(
            "platform",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(MAX_PLATFORM_LEN)),
        )
}

/// Validates session attributes: bounded in number, size and nesting, and country/platform
/// well formed.
fn check_attributes(attrs: &serde_json::Map<String, serde_json::Value>) -> ServiceResult<()> {
    if attrs.len() > MAX_ATTRIBUTES {
        return Err(ServiceError::invalid("attributes", "at most 32 attributes"));
    }
    if let Some((name, _)) = attrs
        .iter()
        .find(|(_, v)| nests_deeper_than(v, MAX_ATTRIBUTE_DEPTH))
    {
        return Err(ServiceError::invalid(
            &format!("attributes.{name}"),
            format!("arrays and objects nested at most {MAX_ATTRIBUTE_DEPTH} levels deep"),
        ));
    }
    if serde_json::to_vec(attrs).map_or(usize::MAX, |v| v.len()) > MAX_ATTRIBUTES_BYTES {
        return Err(ServiceError::invalid("attributes", "at most 4 KiB"));
    }
    if let Some(c) = attrs.get("country")
        && !c
            .as_str()
            .is_some_and(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_alphabetic()))
    {
        return Err(ServiceError::invalid(
            "attributes.country",
            "an ISO 3166-1 alpha-2 code",
        ));
    }
    if let Some(p) = attrs.get("platform")
        && !p
            .as_str()
            .is_some_and(|p| !p.is_empty() && p.chars().count() <= MAX_PLATFORM_LEN)
    {
        return Err(ServiceError::invalid(
            "attributes.platform",
            "a string of at most 32 characters",
        ));
    }
    Ok(())
}

/// Whether `v` nests arrays and objects more than `limit` levels deep; looks no deeper than
/// `limit + 1` levels, so a deep value costs no deep recursion.
fn nests_deeper_than(v: &serde_json::Value, limit: usize) -> bool {
    match v {
        serde_json::Value::Array(a) => {
            limit == 0 || a.iter().any(|c| nests_deeper_than(c, limit - 1))
        }
        serde_json::Value::Object(o) => {
            limit == 0 || o.values().any(|c| nests_deeper_than(c, limit - 1))
        }
        _ => false,
    }
}

/// A session opened for a game: its handle, whether this call created it (a retried open
/// of the same player's session resumes it), and the game.
pub struct Opened {
    /// The live session.
    pub session: SessionHandle,
    /// `false` when the session already existed.
    pub created: bool,
    /// The session's game.
    pub game: offer_actors::GameHandle,
}

/// Opens (or resumes) a session of the key's game and environment, which is the game's
/// `session_start`: the first one of an environment marks the game launched there. A player
/// id that never played in the environment is new: `admit_new` (the caller's limit on new
/// players per key) admits it or refuses the open. Opening counts no one as a player: its
/// first accepted event beyond `session_start` does.
pub async fn open_session(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    body: OpenSession,
    admit_new: impl FnOnce() -> ServiceResult<()>,
) -> ServiceResult<Opened> {
    if body.player_id.trim().is_empty() || body.player_id.chars().count() > 128 {
        return Err(ServiceError::invalid(
            "player_id",
            "between 1 and 128 characters",
        ));
    }
    check_attributes(&body.attributes)?;
    let game = access::load(state, game_id).await?;
    if !game.view().kill_switch.level.allows_sdk() {
        return Err(ServiceError::SdkDisabled);
    }
    player_auth::check(
        &game.view().player_auth,
        game_id,
        &body.player_id,
        body.player_token.as_deref(),
    )
    .map_err(ServiceError::PlayerToken)?;
    // Read once: it says whether the player is new, and the session's profile takes its
    // install day.
    let entry = population::entry(state, game_id, env, &body.player_id).await?;
    if entry.is_none() {
        admit_new()?;
    }
    let (session, created) = open(
        state,
        (game_id, env),
        entry,
        SessionRecord {
            session_id: body.session_id,
            player_id: body.player_id,
            attributes: body.attributes,
            created_at: Utc::now(),
        },
    )
    .await?;
    games::mark_launched(state, &game, env, Utc::now()).await?;
    Ok(Opened {
        session,
        created,
        game,
    })
}

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
    /// The day of its first session; today for a player opening its first one now.
    pub install_day: Option<chrono::NaiveDate>,
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

/// Every stored session of `player_id` in a game's environment, oldest first. It reads the
/// environment's sessions one by one: for a player's data request, not a hot path.
pub async fn of_player(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
) -> ServiceResult<Vec<SessionRecord>> {
    let mut out = Vec::new();
    for (_, bytes) in state.store.list(sessions(game_id, env)).await? {
        let record: SessionRecord = decode(&bytes)?;
        if record.player_id == player_id {
            out.push(record);
        }
    }
    out.sort_by_key(|r| r.created_at);
    Ok(out)
}

/// Deletes every stored session of `player_id` in a game's environment (its erasure) and
/// answers their ids. It reads the environment's sessions one by one, like [`of_player`].
pub async fn forget_player(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
) -> ServiceResult<Vec<Uuid>> {
    let mut forgotten = Vec::new();
    for record in of_player(state, game_id, env, player_id).await? {
        let id = record.session_id.to_string();
        state.store.delete(sessions(game_id, env), &id).await?;
        forgotten.push(record.session_id);
    }
    Ok(forgotten)
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
    p.install_day = profile.install_day;
    p
}

/// Stores a new session; an existing id is returned as is when it belongs to the same
/// player (a retried open), and refused with 409 otherwise. `entry` is the player's
/// population entry, as the caller read it.
async fn open(
    state: &Services,
    (game_id, env): (Uuid, Environment),
    entry: Option<PlayerEntry>,
    record: SessionRecord,
) -> ServiceResult<(SessionHandle, bool)> {
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
                .ok_or_else(|| ServiceError::Internal("session vanished".into()))?,
        )?;
        if stored.player_id != record.player_id {
            return Err(ServiceError::Conflict(
                "this session_id belongs to another player".into(),
            ));
        }
        stored
    };
    let session = activate(state, (game_id, env), &record, entry.as_ref()).await?;
    Ok((session, created))
}

/// The open session, from this node's registry or (after a move between nodes) the store.
/// A session of another game or environment is a 404.
pub async fn resolve(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    session_id: Uuid,
) -> ServiceResult<SessionHandle> {
    let key = SessionKey {
        game_id,
        env,
        session_id,
    };
    if let Some(s) = state.actors.session(&key) {
        return Ok(s);
    }
    let bytes = state
        .store
        .get(sessions(game_id, env), &session_id.to_string())
        .await?
        .ok_or(ServiceError::NotFound("session"))?;
    let record: SessionRecord = decode(&bytes)?;
    let entry = population::entry(state, game_id, env, &record.player_id).await?;
    activate(state, (game_id, env), &record, entry.as_ref()).await
}

/// Starts the session of `record` on this node, its player's population `entry` given.
async fn activate(
    state: &Services,
    (game_id, env): (Uuid, Environment),
    record: &SessionRecord,
    entry: Option<&PlayerEntry>,
) -> ServiceResult<SessionHandle> {
    let profile = profile(state, game_id, env, &record.player_id, entry).await?;
    let info = SessionInfo {
        session_id: record.session_id,
        game_id,
        env,
        player_id: record.player_id.clone(),
    };
    let session = state
        .actors
        .open_session(info.clone(), player_context(game_id, record, &profile));
    crate::service::play::caps::restore(state, &info, session.counters()).await?;
    Ok(session)
}

/// What outlives a session: the spend from the store's money aggregates, the install day
/// from the player's population `entry` (today for a player that never played).
async fn profile(
    state: &Services,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
    entry: Option<&PlayerEntry>,
) -> ServiceResult<PlayerProfile> {
    let install_day = entry.map_or_else(|| Utc::now().date_naive(), |e| e.install_day);
    Ok(PlayerProfile {
        spend_cents: state.store.spend_cents(game_id, env, player_id).await?,
        install_day: Some(install_day),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::*;

    /// Attributes with one value `levels` arrays deep.
    fn deep(levels: usize) -> Map<String, Value> {
        let value = (0..levels).fold(json!("x"), |inner, _| json!([inner]));
        let mut attrs = Map::new();
        attrs.insert("deep".into(), value);
        attrs
    }

    #[test]
    fn attribute_values_nest_at_most_the_limit() {
        assert!(check_attributes(&deep(MAX_ATTRIBUTE_DEPTH)).is_ok());
        for levels in [MAX_ATTRIBUTE_DEPTH + 1, 200] {
            let Err(ServiceError::Validation(errors)) = check_attributes(&deep(levels)) else {
                panic!("{levels} levels are refused");
            };
            assert_eq!(errors[0].field, "attributes.deep");
        }
    }

    #[test]
    fn objects_count_like_arrays() {
        assert!(!nests_deeper_than(&json!({"a": {"b": 1}}), 2));
        assert!(nests_deeper_than(&json!({"a": {"b": {}}}), 2));
        assert!(nests_deeper_than(&json!([[], [[]]]), 2));
        assert!(!nests_deeper_than(&json!("scalar"), 0));
    }
}
