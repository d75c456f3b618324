//! Dashboard sessions: what a member's browser holds after signing in. The session id is 32
//! random bytes the browser keeps in its cookie; the store keeps only its SHA-256, so a read of
//! the store yields no usable session. Each session carries its own CSRF token, which every
//! form that writes must send back.
//!
//! Sessions are short-lived documents (`insert_expiring`, collection `web_sessions`), so every
//! backend forgets them at their expiry and any node resolves any session. Signing out swaps
//! the document to a closed one (`swap_expiring`); an admin ends all of a member's sessions at
//! once by stamping the member (`members::revoke_sessions`), which [`resolve`] checks on every
//! request, together with the member's current role.

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use offer_domain::audit::{ChangedBy, ObjectRef, Via};

use crate::service::audit::{Audit, Watched, audited};
use crate::service::studio::members::{self, Member};
use crate::service::{ServiceError, ServiceResult};
use crate::store::codec::{decode, encode};
use crate::store::{Collection, Store};

fn sessions() -> Collection {
    Collection::global("web_sessions")
}

/// A stored session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Stored {
    email: String,
    csrf: String,
    created_at: DateTime<Utc>,
    expires_at: DateTime<Utc>,
    closed: bool,
}

/// A live session and its member, as a request sees it.
#[derive(Debug, Clone)]
pub struct WebSession {
    /// The member, as stored now (its current role).
    pub member: Member,
    /// The token every writing form must send back.
    pub csrf: String,
    /// When the session ends by itself.
    pub expires_at: DateTime<Utc>,
}

/// A new session: the id for the cookie (shown once) and the session.
#[derive(Debug)]
pub struct Opened {
    /// The session id the browser keeps.
    pub id: String,
    /// The session.
    pub session: WebSession,
}

/// 32 random bytes, hex: a session id, a CSRF token, the sign-in form's token.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::fill(&mut bytes);
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The id a session is stored under: the SHA-256 of what the browser holds.
fn stored_id(id: &str) -> String {
    hex(&Sha256::digest(id.as_bytes()))
}

/// Opens a session for `member`, lasting `ttl`.
pub async fn open(store: &dyn Store, member: Member, ttl: Duration) -> ServiceResult<Opened> {
    let now = Utc::now();
    let expires_at =
        now + chrono::Duration::from_std(ttl).map_err(|e| ServiceError::Internal(e.to_string()))?;
    let id = random_token();
    let stored = Stored {
        email: member.email.clone(),
        csrf: random_token(),
        created_at: now,
        expires_at,
        closed: false,
    };
    let key = stored_id(&id);
    let bytes = encode(&stored)?;
    let audit = session_audit(&member, "member.sign_in", &key);
    let by = ChangedBy::member(&member.email, Via::Dashboard);
    // 256 random bits never collide; a `false` here would mean a broken random source.
    let inserted = audited(store, &by, audit, async || {
        Ok(store.insert_expiring(sessions(), &key, bytes, ttl).await?)
    })
    .await?;
    if !inserted {
        return Err(ServiceError::Internal("session id collision".into()));
    }
    Ok(Opened {
        id,
        session: WebSession {
            member,
            csrf: stored.csrf,
            expires_at,
        },
    })
}

/// The live session of this id: refused (401) when unknown, expired, signed out, opened
/// before its member's sessions were revoked, or when the member is gone.
pub async fn resolve(store: &dyn Store, id: &str) -> ServiceResult<WebSession> {
    const GONE: ServiceError = ServiceError::Unauthorized("signed out: sign in again");
    let Some(bytes) = store.get_expiring(sessions(), &stored_id(id)).await? else {
        return Err(GONE);
    };
    let stored: Stored = decode(&bytes)?;
    if stored.closed || stored.expires_at <= Utc::now() {
        return Err(GONE);
    }
    let member = members::get(store, &stored.email).await?.ok_or(GONE)?;
    if member
        .sessions_revoked_at
        .is_some_and(|at| stored.created_at <= at)
    {
        return Err(GONE);
    }
    Ok(WebSession {
        member,
        csrf: stored.csrf,
        expires_at: stored.expires_at,
    })
}

/// Signs a session out; an unknown or already closed one is left as it is.
pub async fn close(store: &dyn Store, id: &str) -> ServiceResult<()> {
    let key = stored_id(id);
    let Some(bytes) = store.get_expiring(sessions(), &key).await? else {
        return Ok(());
    };
    let mut stored: Stored = decode(&bytes)?;
    if stored.closed {
        return Ok(());
    }
    stored.closed = true;
    let Some(member) = members::get(store, &stored.email).await? else {
        return Ok(());
    };
    let audit = session_audit(&member, "member.sign_out", &key);
    let by = ChangedBy::member(&member.email, Via::Dashboard);
    let closed = encode(&stored)?;
    // Losing the swap means another sign-out closed it first (the only change a session has).
    audited(store, &by, audit, async || {
        Ok(store
            .swap_expiring(sessions(), &key, &bytes, closed)
            .await?)
    })
    .await?;
    Ok(())
}

/// The audit of a sign-in or sign-out of `member`, whose session is stored under `key` (the
/// digest of the browser's id; the record names the member, never the session).
fn session_audit(member: &Member, action: &'static str, key: &str) -> Audit {
    Audit {
        studio_id: Some(member.studio_id.clone()),
        game_id: None,
        action,
        object: ObjectRef::new("member", member.member_id),
        watch: vec![Watched::expiring(sessions(), key)],
    }
}
