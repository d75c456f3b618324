//! The keys service: SDK and authoring keys are issued, listed, resolved and revoked here.
//! Only a key's SHA-256 is ever stored; each node caches resolved records briefly and hears
//! of revocations from every node over the bus.
//!
//! A key is made in one place, [`AuthService::issue`], whoever asks: the REST route, the
//! dashboard's keys page, or a device sign-in of the authoring tool (through
//! [`AuthService::issue_authoring`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration as StdDuration, Instant};

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use offer_domain::audit::{ChangedBy, ObjectRef};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::revocation::{RevocationWatch, Revocations};
use crate::auth::clock::Clock;
use crate::config::AuthSettings;
use crate::service::audit::{Audit, Watched, audited};
use crate::service::{ServiceError, ServiceResult};
use crate::store::codec::{decode, encode};
use crate::store::{Collection, SharedStore};
use offer_wire::bus::BusMessage;
use offer_wire::jwt::JwtCodec;
use offer_wire::key_token as keys;
pub use offer_wire::key_token::KeyKind;

/// How long a node trusts a cached key record before re-reading it; bounds the effect of a
/// lost revocation message (Redis pub/sub delivers at most once).
pub(super) const KEY_CACHE_TTL: StdDuration = StdDuration::from_secs(30);

/// A stored key (the key itself is never stored, only its hash).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// Public id, used to revoke it.
    pub key_id: Uuid,
    /// SDK (with its environment) or authoring.
    #[serde(flatten)]
    pub kind: KeyKind,
    /// The one game it works for.
    pub game_id: Uuid,
    /// The studio owning that game.
    pub studio_id: String,
    /// SHA-256 of the key.
    pub key_hash: String,
    /// Issue time.
    pub created_at: DateTime<Utc>,
    /// End of validity (authoring keys).
    pub expires_at: Option<DateTime<Utc>>,
    /// Revocation time: a revoked key is refused at once.
    pub revoked_at: Option<DateTime<Utc>>,
    /// The dashboard user who issued it (or approved the device sign-in that did); absent
    /// on records written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_by: Option<String>,
}

/// A new key: the key itself (shown once) and its record.
#[derive(Debug)]
pub struct IssuedKey {
    /// The key.
    pub token: String,
    /// Its stored record.
    pub record: KeyRecord,
}

/// A new authoring key: the key itself (shown once), its record and its expiry.
#[derive(Debug)]
pub struct AuthoringKey {
    /// The key.
    pub token: String,
    /// Its stored record.
    pub record: KeyRecord,
    /// The end of its validity.
    pub expires_at: DateTime<Utc>,
}

/// Verifies credentials and caches key records per node.
pub struct AuthService {
    jwt: JwtCodec,
    key_prefix: String,
    /// The lifetime of an authoring key (`auth.authoring_key_ttl_days`).
    authoring_ttl_days: i64,
    store: SharedStore,
    /// Verified key records by the SHA-256 of their key (bytes, not the stored hex text, so
    /// a cached key is checked without formatting or allocating).
    cache: DashMap<[u8; 32], (Arc<KeyRecord>, Instant)>,
    /// Keys revoked while this node runs, watched by the sockets opened with them.
    revocations: Revocations,
    /// Moves on whenever this node forgets a key (revoked here or on another node): a key a
    /// kept-alive connection remembers ([`super::connection_keys`]) is checked again once
    /// it moved.
    epoch: AtomicU64,
    /// The time keys are issued and checked at.
    clock: Clock,
}

impl AuthService {
    /// A service over this codec, the key settings (prefix, authoring key lifetime) and the
    /// store.
    pub fn new(jwt: JwtCodec, settings: &AuthSettings, store: SharedStore) -> Self {
        Self {
            jwt,
            key_prefix: settings.key_prefix.clone(),
            authoring_ttl_days: settings.authoring_key_ttl_days,
            store,
            cache: DashMap::new(),
            revocations: Revocations::default(),
            epoch: AtomicU64::new(0),
            clock: Clock::default(),
        }
    }

    /// The time keys are issued and checked at (a test advances it to live through a key's
    /// lifetime).
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// The JWT codec (the CLI and the development token use it).
    pub fn jwt(&self) -> &JwtCodec {
        &self.jwt
    }

    /// Drops a key (by its stored hex hash) from this node's cache, so its record is read
    /// again on next use.
    pub fn forget(&self, key_hash: &str) {
        self.epoch.fetch_add(1, Ordering::AcqRel);
        match keys::digest_of_hex(key_hash) {
            Some(digest) => {
                self.cache.remove(&digest);
            }
            // Never a stored hash; drop every cached key rather than keep a revoked one.
            None => self.cache.clear(),
        }
    }

    /// Where the forgetting stands: a key verified at this epoch is still as verified while
    /// it has not moved.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// A key was revoked (here or on another node, bus message `key_revoked`): forget it and
    /// wake every socket opened with it, so they close at once.
    pub fn revoked(&self, key_hash: &str) {
        self.forget(key_hash);
        self.revocations.revoke(key_hash);
    }

    /// A watch that resolves when the key is revoked on this node, for a socket opened with
    /// it (at once when it already was).
    pub fn watch_revocation(&self, key_hash: &str) -> RevocationWatch {
        self.revocations.watch(key_hash)
    }

    /// Resolves a key token to its live record: checksum, lookup, revocation, expiry.
    pub async fn key(&self, token: &str) -> ServiceResult<Arc<KeyRecord>> {
        let marked = keys::parse(token, &self.key_prefix)
            .ok_or(ServiceError::Unauthorized("invalid key"))?;
        let digest = keys::digest(token);
        let cached = self
            .cache
            .get(&digest)
            .filter(|e| e.1.elapsed() < KEY_CACHE_TTL)
            .map(|e| e.0.clone());
        let record = match cached {
            Some(r) => r,
            None => {
                let hash = keys::hex(&digest);
                let Some(bytes) = self
                    .store
                    .get(Collection::global("key_hashes"), &hash)
                    .await?
                else {
                    return Err(ServiceError::Unauthorized("invalid key"));
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
                    return Err(ServiceError::Unauthorized("invalid key"));
                };
                let record = Arc::new(decode::<KeyRecord>(&bytes)?);
                self.cache.insert(digest, (record.clone(), Instant::now()));
                record
            }
        };
        self.live(&record)?;
        // The marker in the key and its record agree unless the store was tampered with.
        if record.kind != marked {
            return Err(ServiceError::Unauthorized("invalid key"));
        }
        Ok(record)
    }

    /// Refuses a record that was revoked or has expired by now.
    pub(super) fn live(&self, record: &KeyRecord) -> ServiceResult<()> {
        if record.revoked_at.is_some() {
            return Err(ServiceError::Unauthorized("the key has been revoked"));
        }
        if record.expires_at.is_some_and(|t| t <= self.clock.now()) {
            return Err(match record.kind {
                KeyKind::Authoring => ServiceError::AuthoringKeyExpired,
                KeyKind::Sdk(_) => ServiceError::Unauthorized("the key has expired"),
            });
        }
        Ok(())
    }

    /// Issues an authoring key for a game on behalf of dashboard user `issued_by` (a device
    /// sign-in's approver): [`issue`](Self::issue) with the key's expiry at hand.
    pub async fn issue_authoring(
        &self,
        game_id: Uuid,
        studio_id: &str,
        by: &ChangedBy,
    ) -> ServiceResult<AuthoringKey> {
        let IssuedKey { token, record } = self
            .issue(game_id, studio_id, by, KeyKind::Authoring)
            .await?;
        let expires_at = record
            .expires_at
            .ok_or_else(|| ServiceError::Internal("authoring key without expiry".into()))?;
        Ok(AuthoringKey {
            token,
            record,
            expires_at,
        })
    }

    /// Issues a key of `kind` for a game on behalf of `by` (a studio member), storing only
    /// its hash: the one way a key is made, recorded in the audit trail. An SDK key never expires; an authoring key
    /// lives `auth.authoring_key_ttl_days`. Returns the key (shown once) and its record.
    pub async fn issue(
        &self,
        game_id: Uuid,
        studio_id: &str,
        by: &ChangedBy,
        kind: KeyKind,
    ) -> ServiceResult<IssuedKey> {
        let ttl = match kind {
            KeyKind::Sdk(_) => None,
            KeyKind::Authoring => Some(
                chrono::Duration::try_days(self.authoring_ttl_days).ok_or_else(|| {
                    ServiceError::Internal("authoring key lifetime out of range".into())
                })?,
            ),
        };
        let token = keys::generate(&self.key_prefix, kind);
        let now = self.clock.now();
        let record = KeyRecord {
            key_id: Uuid::new_v4(),
            kind,
            game_id,
            studio_id: studio_id.to_owned(),
            key_hash: keys::hash(&token),
            created_at: now,
            expires_at: ttl.map(|d| now + d),
            revoked_at: None,
            issued_by: Some(by.actor.name().to_owned()),
        };
        let audit = key_audit(&record, "key.issue");
        audited(&*self.store, by, audit, async || {
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
            Ok(())
        })
        .await?;
        Ok(IssuedKey { token, record })
    }

    /// Every key record of a game.
    pub async fn list(&self, game_id: Uuid) -> ServiceResult<Vec<KeyRecord>> {
        let mut out = Vec::new();
        for (_, bytes) in self.store.list(Collection::game(game_id, "keys")).await? {
            out.push(decode::<KeyRecord>(&bytes)?);
        }
        out.sort_by_key(|k| k.created_at);
        Ok(out)
    }

    /// Revokes a key of a game and tells every node to drop it from its cache. `of_kind`
    /// says which keys the caller's path revokes (another kind's id is a 404).
    pub async fn revoke(
        &self,
        by: &ChangedBy,
        game_id: Uuid,
        of_kind: fn(&KeyKind) -> bool,
        key_id: Uuid,
    ) -> ServiceResult<()> {
        let coll = Collection::game(game_id, "keys");
        let id = key_id.to_string();
        let Some(bytes) = self.store.get(coll, &id).await? else {
            return Err(ServiceError::NotFound("key"));
        };
        let mut record: KeyRecord = decode(&bytes)?;
        if !of_kind(&record.kind) {
            return Err(ServiceError::NotFound("key"));
        }
        if record.revoked_at.is_none() {
            record.revoked_at = Some(self.clock.now());
            let audit = key_audit(&record, "key.revoke");
            audited(&*self.store, by, audit, async || {
                Ok(self
                    .store
                    .put_all(coll, vec![(id, encode(&record)?)])
                    .await?)
            })
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

/// The audit of a change of the key of `record`.
fn key_audit(record: &KeyRecord, action: &'static str) -> Audit {
    Audit::of_game(
        &record.studio_id,
        record.game_id,
        action,
        ObjectRef::new("key", record.key_id),
        vec![Watched::new(
            Collection::game(record.game_id, "keys"),
            record.key_id,
        )],
    )
}

/// Where a key hash points: the record lives with its game.
#[derive(Debug, Serialize, Deserialize)]
struct KeyPointer {
    game_id: Uuid,
    key_id: Uuid,
}
