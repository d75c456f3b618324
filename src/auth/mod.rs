//! Credentials: dashboard JWTs, SDK keys and authoring keys, and the extractors that turn an
//! `Authorization: Bearer` header into a typed caller.
//!
//! Each extractor accepts exactly the credential kinds its routes take, so a route cannot
//! forget a check: a dashboard route takes [`Dashboard`], an SDK route [`SdkCaller`], the
//! catalogue read path [`CatalogueReader`]. Object-level checks (the game belongs to the
//! caller's studio) happen where the game is loaded, in `repo::games`.

pub mod jwt;
pub mod keys;

use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant};

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use chrono::{DateTime, Utc};
use dashmap::DashMap;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::{BusMessage, Collection, Environment, SharedStore};
pub use jwt::{JwtCodec, Role};
use keys::KeyType;

/// How long a node trusts a cached key record before re-reading it; bounds the effect of a
/// lost revocation message (Redis pub/sub delivers at most once).
const KEY_CACHE_TTL: StdDuration = StdDuration::from_secs(30);

/// Kind of a stored key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyKind {
    /// `/v1/sdk/*` and the WebSocket.
    Sdk,
    /// Custom-page authoring.
    Authoring,
}

/// A stored key (the key itself is never stored, only its hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Public id, used to revoke it.
    pub key_id: Uuid,
    /// SDK or authoring.
    pub kind: KeyKind,
    /// The one game it works for.
    pub game_id: Uuid,
    /// The studio owning that game.
    pub studio_id: String,
    /// Production or sandbox (SDK keys).
    pub environment: Option<Environment>,
    /// SHA-256 of the key.
    pub key_hash: String,
    /// Issue time.
    pub created_at: DateTime<Utc>,
    /// End of validity (authoring keys).
    pub expires_at: Option<DateTime<Utc>>,
    /// Revocation time: a revoked key is refused at once.
    pub revoked_at: Option<DateTime<Utc>>,
}

/// Verifies credentials and caches key records per node.
pub struct AuthService {
    jwt: JwtCodec,
    key_prefix: String,
    store: SharedStore,
    cache: DashMap<String, (Arc<KeyRecord>, Instant)>,
    /// Hashes of keys revoked while this node runs, so open sockets authenticated with
    /// them are closed on their next message or heartbeat.
    revoked: DashMap<String, ()>,
}

impl AuthService {
    /// A service over this codec, key prefix and store.
    pub fn new(jwt: JwtCodec, key_prefix: String, store: SharedStore) -> Self {
        Self {
            jwt,
            key_prefix,
            store,
            cache: DashMap::new(),
            revoked: DashMap::new(),
        }
    }

    /// The JWT codec (the CLI and the development token use it).
    pub fn jwt(&self) -> &JwtCodec {
        &self.jwt
    }

    /// The deployment's key prefix.
    pub fn key_prefix(&self) -> &str {
        &self.key_prefix
    }

    /// Drops a key from this node's cache, so its record is read again on next use.
    pub fn forget(&self, key_hash: &str) {
        self.cache.remove(key_hash);
    }

    /// A key was revoked (here or on another node, bus message `key_revoked`): forget it and
    /// remember it, so sockets opened with it close.
    pub fn revoked(&self, key_hash: &str) {
        self.forget(key_hash);
        self.revoked.insert(key_hash.to_owned(), ());
    }

    /// Whether a key was revoked while this node runs.
    pub fn is_revoked(&self, key_hash: &str) -> bool {
        self.revoked.contains_key(key_hash)
    }

    /// Resolves a key token to its live record: checksum, lookup, revocation, expiry.
    pub async fn key(&self, token: &str) -> ApiResult<(KeyType, Arc<KeyRecord>)> {
        let key_type =
            keys::parse(token, &self.key_prefix).ok_or(ApiError::Unauthorized("invalid key"))?;
        let hash = keys::hash(token);
        let cached = self
            .cache
            .get(&hash)
            .filter(|e| e.1.elapsed() < KEY_CACHE_TTL)
            .map(|e| e.0.clone());
        let record = match cached {
            Some(r) => r,
            None => {
                let Some(bytes) = self
                    .store
                    .get(Collection::global("key_hashes"), &hash)
                    .await?
                else {
                    return Err(ApiError::Unauthorized("invalid key"));
                };
                let pointer: KeyPointer = decode(&bytes)?;
                let Some(bytes) = self
                    .store
                    .get(
                        Collection::game(pointer.game_id, "keys"),
                        &pointer.key_id.to_string(),
                    )
                    .await?
                else {
                    return Err(ApiError::Unauthorized("invalid key"));
                };
                let record = Arc::new(decode::<KeyRecord>(&bytes)?);
                self.cache.insert(hash, (record.clone(), Instant::now()));
                record
            }
        };
        if record.revoked_at.is_some() {
            return Err(ApiError::Unauthorized("the key has been revoked"));
        }
        if record.expires_at.is_some_and(|t| t <= Utc::now()) {
            return Err(match record.kind {
                KeyKind::Authoring => ApiError::AuthoringKeyExpired,
                KeyKind::Sdk => ApiError::Unauthorized("the key has expired"),
            });
        }
        Ok((key_type, record))
    }

    /// Issues a key for a game, storing only its hash. Returns the key (shown once) and
    /// its record.
    pub async fn issue(
        &self,
        game_id: Uuid,
        studio_id: &str,
        key_type: KeyType,
        ttl: Option<chrono::Duration>,
    ) -> ApiResult<(String, KeyRecord)> {
        let token = keys::generate(&self.key_prefix, key_type);
        let now = Utc::now();
        let record = KeyRecord {
            key_id: Uuid::new_v4(),
            kind: match key_type {
                KeyType::Sdk(_) => KeyKind::Sdk,
                KeyType::Authoring => KeyKind::Authoring,
            },
            game_id,
            studio_id: studio_id.to_owned(),
            environment: match key_type {
                KeyType::Sdk(env) => Some(env),
                KeyType::Authoring => None,
            },
            key_hash: keys::hash(&token),
            created_at: now,
            expires_at: ttl.map(|d| now + d),
            revoked_at: None,
        };
        // The record first, the pointer second: a failure in between leaves no usable key.
        self.store
            .put_all(
                Collection::game(game_id, "keys"),
                vec![(record.key_id.to_string(), encode(&record)?)],
            )
            .await?;
        let pointer = KeyPointer {
            game_id,
            key_id: record.key_id,
        };
        self.store
            .put_all(
                Collection::global("key_hashes"),
                vec![(record.key_hash.clone(), encode(&pointer)?)],
            )
            .await?;
        Ok((token, record))
    }

    /// Every key record of a game.
    pub async fn list(&self, game_id: Uuid) -> ApiResult<Vec<KeyRecord>> {
        let mut out = Vec::new();
        for (_, bytes) in self.store.list(Collection::game(game_id, "keys")).await? {
            out.push(decode::<KeyRecord>(&bytes)?);
        }
        out.sort_by_key(|k| k.created_at);
        Ok(out)
    }

    /// Revokes a key of a game and tells every node to drop it from its cache.
    pub async fn revoke(&self, game_id: Uuid, kind: KeyKind, key_id: Uuid) -> ApiResult<()> {
        let coll = Collection::game(game_id, "keys");
        let id = key_id.to_string();
        let Some(bytes) = self.store.get(coll, &id).await? else {
            return Err(ApiError::NotFound("key"));
        };
        let mut record: KeyRecord = decode(&bytes)?;
        if record.kind != kind {
            return Err(ApiError::NotFound("key"));
        }
        if record.revoked_at.is_none() {
            record.revoked_at = Some(Utc::now());
            self.store
                .put_all(coll, vec![(id, encode(&record)?)])
                .await?;
        }
        self.revoked(&record.key_hash);
        self.store
            .publish(&BusMessage::KeyRevoked {
                key_hash: record.key_hash,
            })
            .await?;
        Ok(())
    }
}

/// Where a key hash points: the record lives with its game.
#[derive(Debug, Serialize, Deserialize)]
struct KeyPointer {
    game_id: Uuid,
    key_id: Uuid,
}

/// Serialises a stored document.
pub fn encode<T: Serialize>(value: &T) -> ApiResult<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| ApiError::Internal(e.to_string()))
}

/// Reads a stored document.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> ApiResult<T> {
    serde_json::from_slice(bytes).map_err(|e| ApiError::Internal(format!("corrupt document: {e}")))
}

/// The bearer token of a request.
fn bearer(parts: &Parts) -> ApiResult<&str> {
    parts
        .headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or(ApiError::Unauthorized("missing bearer credential"))
}

/// A dashboard user (JWT).
#[derive(Debug, Clone)]
pub struct Dashboard {
    /// The user.
    pub sub: String,
    /// The user's studio.
    pub studio_id: String,
    /// The user's role.
    pub role: Role,
}

impl Dashboard {
    /// Refuses with 403 unless the user has at least `role`.
    pub fn require(&self, role: Role) -> ApiResult<()> {
        if self.role >= role {
            Ok(())
        } else {
            Err(ApiError::Forbidden("your role does not allow this"))
        }
    }
}

impl FromRequestParts<AppState> for Dashboard {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let token = bearer(parts)?;
        if keys::looks_like_key(token) {
            return Err(ApiError::WrongCredential(
                "this path takes a dashboard token, not an API key",
            ));
        }
        let claims = state
            .auth
            .jwt()
            .verify(token)
            .ok_or(ApiError::Unauthorized("invalid or expired token"))?;
        Ok(Self {
            sub: claims.sub,
            studio_id: claims.studio_id,
            role: claims.role,
        })
    }
}

/// An SDK client (SDK key).
#[derive(Debug, Clone)]
pub struct SdkCaller {
    /// The key's record: its game, studio and environment.
    pub key: Arc<KeyRecord>,
    /// The key's environment.
    pub env: Environment,
}

impl SdkCaller {
    /// Refuses another game's id with 404, as for any foreign object.
    pub fn check_game(&self, game_id: Uuid) -> ApiResult<()> {
        if self.key.game_id == game_id {
            Ok(())
        } else {
            Err(ApiError::NotFound("game"))
        }
    }
}

impl FromRequestParts<AppState> for SdkCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let token = bearer(parts)?;
        if !keys::looks_like_key(token) {
            return Err(ApiError::WrongCredential("this path takes an SDK key"));
        }
        let (key_type, key) = state.auth.key(token).await?;
        match key_type {
            KeyType::Sdk(env) => Ok(Self { key, env }),
            KeyType::Authoring => Err(ApiError::WrongCredential(
                "an authoring key never touches /v1/sdk",
            )),
        }
    }
}

/// Who may read a catalogue: a dashboard user of the owning studio, or an authoring key of
/// that very game.
#[derive(Debug, Clone)]
pub enum CatalogueReader {
    /// A dashboard user.
    Dashboard(Dashboard),
    /// An authoring key (its game only).
    Authoring(Arc<KeyRecord>),
}

impl CatalogueReader {
    /// The caller's studio.
    pub fn studio_id(&self) -> &str {
        match self {
            Self::Dashboard(d) => &d.studio_id,
            Self::Authoring(k) => &k.studio_id,
        }
    }

    /// Refuses an authoring key of another game with 404.
    pub fn check_game(&self, game_id: Uuid) -> ApiResult<()> {
        match self {
            Self::Authoring(k) if k.game_id != game_id => Err(ApiError::NotFound("game")),
            _ => Ok(()),
        }
    }
}

impl FromRequestParts<AppState> for CatalogueReader {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let token = bearer(parts)?;
        if !keys::looks_like_key(token) {
            return Dashboard::from_request_parts(parts, state)
                .await
                .map(Self::Dashboard);
        }
        match state.auth.key(token).await? {
            (KeyType::Authoring, key) => Ok(Self::Authoring(key)),
            (KeyType::Sdk(_), _) => Err(ApiError::WrongCredential(
                "this path takes a dashboard token or an authoring key",
            )),
        }
    }
}

/// Any credential of a game: a dashboard user of its studio or any key of that game. Item
/// art is read by game clients (SDK key) as well as by the dashboard.
#[derive(Debug, Clone)]
pub enum GameMember {
    /// A dashboard user (studio checked by the caller).
    Dashboard(Dashboard),
    /// A key, bound to one game.
    Key(Arc<KeyRecord>),
}

impl GameMember {
    /// The caller's studio.
    pub fn studio_id(&self) -> &str {
        match self {
            Self::Dashboard(d) => &d.studio_id,
            Self::Key(k) => &k.studio_id,
        }
    }

    /// Refuses a key of another game with 404.
    pub fn check_game(&self, game_id: Uuid) -> ApiResult<()> {
        match self {
            Self::Key(k) if k.game_id != game_id => Err(ApiError::NotFound("game")),
            _ => Ok(()),
        }
    }
}

impl FromRequestParts<AppState> for GameMember {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Self> {
        let token = bearer(parts)?;
        if keys::looks_like_key(token) {
            Ok(Self::Key(state.auth.key(token).await?.1))
        } else {
            Dashboard::from_request_parts(parts, state)
                .await
                .map(Self::Dashboard)
        }
    }
}
