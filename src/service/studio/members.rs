//! Studio members: the people who sign in to the dashboard, each with an email (unique in the
//! deployment, so that a sign-in names one member), a password stored as an Argon2id hash
//! (`auth/password.rs`) and a role. The first admin of a studio is made with
//! `offer-engine member add`; after that an admin adds members (`POST /v1/studio/members`).
//!
//! Members live in the deployment-wide collection `members` under their lower-cased email.
//! Revoking a member's sessions stamps the member: every session opened before the stamp is
//! refused from then on (`web_sessions.rs` checks it on each request), so no list of a
//! member's sessions is needed on any backend.

use chrono::{DateTime, Utc};
use offer_domain::audit::{ChangedBy, ObjectRef};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::auth::{Role, password};
use crate::service::audit::{Audit, Watched, audited};
use crate::service::{ServiceError, ServiceResult};
use crate::store::codec::{decode, encode};
use crate::store::{Collection, Store};
use offer_domain::validation::{Errors, FieldError};

/// Longest email address (RFC 5321's path limit).
const MAX_EMAIL_LEN: usize = 254;

/// Attempts at a compare-and-swap of a member that others keep winning before giving up.
const CAS_ATTEMPTS: usize = 8;

fn members() -> Collection {
    Collection::global("members")
}

/// A stored member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// Public id (used to revoke the member's sessions).
    pub member_id: Uuid,
    /// Email, lower-cased: the sign-in name.
    pub email: String,
    /// The studio the member works in.
    pub studio_id: String,
    /// What the member may do.
    pub role: Role,
    /// Argon2id PHC string of the password.
    pub password_hash: String,
    /// When the member was added.
    pub created_at: DateTime<Utc>,
    /// Who added the member (`cli` for the command line).
    pub created_by: String,
    /// Sessions opened before this instant are refused (set by a revocation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions_revoked_at: Option<DateTime<Utc>>,
}

/// What a new member is made of.
#[derive(Debug, Clone)]
pub struct NewMember {
    /// Email address.
    pub email: String,
    /// Password in clear (hashed here, never stored).
    pub password: String,
    /// Role in the studio.
    pub role: Role,
}

/// The lower-cased, trimmed form an email is stored and looked up under.
fn normalise(email: &str) -> String {
    email.trim().to_lowercase()
}

/// Checks an email's shape: one `@` with something on each side, no spaces or controls.
fn check_email(email: &str, errors: &mut Errors) {
    let ok = email.chars().count() <= MAX_EMAIL_LEN
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && email.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !domain.contains('@')
        });
    if !ok {
        errors.push(
            "email",
            format!("an email address like name@studio.com, at most {MAX_EMAIL_LEN} characters"),
        );
    }
}

/// Checks a password's length.
fn check_password(pw: &str, errors: &mut Errors) {
    let n = pw.chars().count();
    if !(password::MIN_PASSWORD_LEN..=password::MAX_PASSWORD_LEN).contains(&n) {
        errors.push(
            "password",
            format!(
                "between {} and {} characters",
                password::MIN_PASSWORD_LEN,
                password::MAX_PASSWORD_LEN
            ),
        );
    }
}

/// Adds a member to `studio_id` on behalf of `by`. A taken email is a 409 naming no studio.
pub async fn add(
    store: &dyn Store,
    studio_id: &str,
    new: NewMember,
    by: &ChangedBy,
) -> ServiceResult<Member> {
    let email = normalise(&new.email);
    let mut errors = Errors::default();
    check_email(&email, &mut errors);
    check_password(&new.password, &mut errors);
    if studio_id.is_empty() {
        errors.push("studio", "must not be empty");
    }
    if !errors.0.is_empty() {
        return Err(ServiceError::Validation(errors.0));
    }
    let password = new.password;
    let password_hash = tokio::task::spawn_blocking(move || password::hash(&password))
        .await
        .map_err(|e| ServiceError::Internal(e.to_string()))?
        .map_err(ServiceError::Internal)?;
    let member = Member {
        member_id: Uuid::new_v4(),
        email: email.clone(),
        studio_id: studio_id.to_owned(),
        role: new.role,
        password_hash,
        created_at: Utc::now(),
        created_by: by.actor.name().to_owned(),
        sessions_revoked_at: None,
    };
    let audit = member_audit(studio_id, &member, "member.add");
    let bytes = encode(&member)?;
    let added = audited(store, by, audit, async || {
        Ok(store.insert_new(members(), &email, bytes).await?)
    })
    .await?;
    if added {
        Ok(member)
    } else {
        Err(ServiceError::Conflicts(vec![FieldError::new(
            "email",
            "a member with this email already exists",
        )]))
    }
}

/// The member signing in with `email`, or `None`.
pub async fn get(store: &dyn Store, email: &str) -> ServiceResult<Option<Member>> {
    match store.get(members(), &normalise(email)).await? {
        Some(bytes) => Ok(Some(decode(&bytes)?)),
        None => Ok(None),
    }
}

/// The member whose email and password these are. Either wrong reads the same, and an
/// unknown email costs the same hashing work as a wrong password.
pub async fn authenticate(store: &dyn Store, email: &str, pw: &str) -> ServiceResult<Member> {
    let member = get(store, email).await?;
    let stored = member
        .as_ref()
        .map_or_else(|| password::decoy().to_owned(), |m| m.password_hash.clone());
    let pw = pw.to_owned();
    let matches = tokio::task::spawn_blocking(move || password::verify(&pw, &stored))
        .await
        .map_err(|e| ServiceError::Internal(e.to_string()))?;
    match member {
        Some(m) if matches => Ok(m),
        _ => Err(ServiceError::Unauthorized("wrong email or password")),
    }
}

/// Every member of a studio, by email.
pub async fn list(store: &dyn Store, studio_id: &str) -> ServiceResult<Vec<Member>> {
    let mut out = Vec::new();
    for (_, bytes) in store.list(members()).await? {
        let member: Member = decode(&bytes)?;
        if member.studio_id == studio_id {
            out.push(member);
        }
    }
    out.sort_by(|a, b| a.email.cmp(&b.email));
    Ok(out)
}

/// Ends every session of a member of `studio_id` opened until now. Another studio's member
/// is a 404.
pub async fn revoke_sessions(
    store: &dyn Store,
    by: &ChangedBy,
    studio_id: &str,
    member_id: Uuid,
) -> ServiceResult<Member> {
    let found = list(store, studio_id)
        .await?
        .into_iter()
        .find(|m| m.member_id == member_id)
        .ok_or(ServiceError::NotFound("member"))?;
    let audit = member_audit(studio_id, &found, "member.revoke_sessions");
    audited(store, by, audit, async || {
        stamp_revoked(store, &found.email).await
    })
    .await
}

/// The audit of a change of `member` of `studio_id`.
fn member_audit(studio_id: &str, member: &Member, action: &'static str) -> Audit {
    Audit {
        studio_id: Some(studio_id.to_owned()),
        game_id: None,
        action,
        object: ObjectRef::new("member", member.member_id),
        watch: vec![Watched::new(members(), &member.email)],
    }
}

/// Stamps the member signing in with `email` as having every session until now revoked.
async fn stamp_revoked(store: &dyn Store, email: &str) -> ServiceResult<Member> {
    for _ in 0..CAS_ATTEMPTS {
        let Some(before) = store.get(members(), email).await? else {
            return Err(ServiceError::NotFound("member"));
        };
        let mut member: Member = decode(&before)?;
        member.sessions_revoked_at = Some(Utc::now());
        if store
            .compare_and_swap(members(), &member.email, Some(&before), encode(&member)?)
            .await?
        {
            return Ok(member);
        }
    }
    Err(ServiceError::Unavailable)
}
