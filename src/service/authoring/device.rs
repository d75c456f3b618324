//! Device sign-in of the authoring tool, in the shape of RFC 8628: the tool starts a sign-in
//! and shows its user code; a dashboard user (developer or above) approves it for one game of
//! their studio, or denies it; the tool polls with its device code and collects an authoring
//! key, made by [`AuthService::issue_authoring`] exactly as a dashboard issuance.
//!
//! The sign-in lives in the store's short-lived documents, so any node serves any step: the
//! sign-in under the hash of its device code (collection `device_sign_ins`), and under the
//! hash of its user code a pointer to it (`device_user_codes`). Neither code is stored in
//! clear. Every change is a compare-and-swap of the sign-in, so a user code is decided once
//! and a key is handed out once, however many nodes race.
//!
//! The key is made when the tool collects it, not at approval, so that no key ever waits in
//! the store in clear; it records the user who approved. The sign-in is kept twice its
//! lifetime, so that a tool polling late hears `expired_token` rather than `invalid_grant`.

use std::time::Duration;

use chrono::{DateTime, Utc};
use offer_domain::audit::{ChangedBy, ObjectRef, Via};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::service::audit::{Audit, Watched, audited};
pub use crate::service::refusals::SignInRefusal;
use crate::service::studio::keys::{AuthService, AuthoringKey};
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};
use offer_actors::GameHandle;
use offer_wire::device_code as codes;

/// Seconds RFC 8628 adds to a sign-in's polling interval at each `slow_down`.
const SLOW_DOWN_STEP_S: u32 = 5;

/// Attempts at a compare-and-swap that others keep winning before giving up (503).
const CAS_ATTEMPTS: usize = 8;

/// Attempts at drawing a user code not in use before giving up (503): with 2.56e10 codes,
/// a second draw is already rare.
const DRAWS: usize = 5;

fn sign_ins() -> Collection {
    Collection::global("device_sign_ins")
}

fn user_codes() -> Collection {
    Collection::global("device_user_codes")
}

/// A started sign-in, as the tool receives it.
#[derive(Debug, Clone)]
pub struct Started {
    /// The secret the tool polls with.
    pub device_code: String,
    /// The code a person types, as `XXXX-XXXX`.
    pub user_code: String,
    /// Where the person types it.
    pub verification_uri: String,
    /// Seconds between polls.
    pub interval: u32,
    /// Seconds the user code can be approved.
    pub expires_in: u32,
}

/// Where a sign-in stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum State {
    Pending,
    Approved {
        game_id: Uuid,
        studio_id: String,
        approved_by: String,
        approved_at: DateTime<Utc>,
    },
    Denied {
        denied_by: String,
    },
    /// The key was handed out.
    Redeemed,
}

/// A sign-in as stored, under the hash of its device code.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SignIn {
    expires_at: DateTime<Utc>,
    /// Seconds between polls, grown by each `slow_down`.
    interval_s: u32,
    last_poll_at: Option<DateTime<Utc>>,
    #[serde(flatten)]
    state: State,
}

/// The pointer stored under the hash of a user code.
#[derive(Debug, Serialize, Deserialize)]
struct Pointer {
    device_hash: String,
}

/// Starts a sign-in.
pub async fn start(services: &Services) -> ServiceResult<Started> {
    let settings = &services.settings.device;
    let lifetime = u64::from(settings.code_ttl_s.get());
    let device_code = codes::generate_device_code();
    let device_hash = codes::hash(&device_code);
    let sign_in = SignIn {
        expires_at: Utc::now() + chrono::Duration::seconds(i64::from(settings.code_ttl_s.get())),
        interval_s: settings.poll_interval_s.get(),
        last_poll_at: None,
        state: State::Pending,
    };
    let kept = Duration::from_secs(lifetime * 2);
    if !services
        .store
        .insert_expiring(sign_ins(), &device_hash, encode(&sign_in)?, kept)
        .await?
    {
        return Err(ServiceError::Internal(
            "a device code was drawn twice".into(),
        ));
    }
    let pointer = encode(&Pointer { device_hash })?;
    for _ in 0..DRAWS {
        let user_code = codes::generate_user_code();
        if services
            .store
            .insert_expiring(
                user_codes(),
                &codes::hash(&user_code),
                pointer.clone(),
                Duration::from_secs(lifetime),
            )
            .await?
        {
            return Ok(Started {
                device_code,
                user_code: codes::display_user_code(&user_code),
                verification_uri: settings.verification_uri.clone(),
                interval: settings.poll_interval_s.get(),
                expires_in: settings.code_ttl_s.get(),
            });
        }
    }
    tracing::warn!("no free user code in {DRAWS} draws");
    Err(ServiceError::Unavailable)
}

/// Who decides a sign-in.
#[derive(Debug, Clone, Copy)]
pub struct Decider<'a> {
    /// The user's studio.
    pub studio_id: &'a str,
    /// The user.
    pub sub: &'a str,
    /// Where the decision is made (the REST API or the dashboard).
    pub via: Via,
}

/// Approves the sign-in of `user_code` for `game`, which the caller loaded in the decider's
/// studio ([`crate::service::access::for_studio`]); the caller has checked the role.
pub async fn approve(
    services: &Services,
    by: Decider<'_>,
    user_code: &str,
    game: &GameHandle,
) -> ServiceResult<()> {
    let game_id = game.view().game.game_id;
    let audit = (Some(game_id), "device_sign_in.approve");
    decide(services, by, audit, user_code, |_| State::Approved {
        game_id,
        studio_id: by.studio_id.to_owned(),
        approved_by: by.sub.to_owned(),
        approved_at: Utc::now(),
    })
    .await
}

/// Denies the sign-in of `user_code`. The caller has checked the role.
pub async fn deny(services: &Services, by: Decider<'_>, user_code: &str) -> ServiceResult<()> {
    decide(
        services,
        by,
        (None, "device_sign_in.deny"),
        user_code,
        |_| State::Denied {
            denied_by: by.sub.to_owned(),
        },
    )
    .await
}

/// Moves the pending sign-in of `user_code` to the state `to` makes: 404 when no live
/// sign-in has this code, 409 when it was already decided.
async fn decide(
    services: &Services,
    by: Decider<'_>,
    (game_id, action): (Option<Uuid>, &'static str),
    user_code: &str,
    to: impl Fn(&SignIn) -> State,
) -> ServiceResult<()> {
    let canonical = codes::normalize_user_code(user_code).ok_or_else(|| {
        ServiceError::invalid(
            "user_code",
            "8 letters of BCDFGHJKLMNPQRSTVWXZ, as XXXX-XXXX",
        )
    })?;
    let Some(bytes) = services
        .store
        .get_expiring(user_codes(), &codes::hash(&canonical))
        .await?
    else {
        return Err(ServiceError::NotFound("sign-in with this user code"));
    };
    let pointer: Pointer = decode(&bytes)?;
    let audit = Audit {
        studio_id: Some(by.studio_id.to_owned()),
        game_id,
        action,
        object: ObjectRef::new("device_sign_in", codes::display_user_code(&canonical)),
        watch: vec![Watched::expiring(sign_ins(), &pointer.device_hash)],
    };
    let changed_by = ChangedBy::member(by.sub, by.via);
    audited(&*services.store, &changed_by, audit, async || {
        swap_state(services, &pointer, &to).await
    })
    .await
}

/// Moves the pending sign-in `pointer` leads to into the state `to` makes (compare-and-swap,
/// retried against a concurrent change).
async fn swap_state(
    services: &Services,
    pointer: &Pointer,
    to: &impl Fn(&SignIn) -> State,
) -> ServiceResult<()> {
    for _ in 0..CAS_ATTEMPTS {
        let Some((bytes, sign_in)) = read(services, &pointer.device_hash).await? else {
            return Err(ServiceError::NotFound("sign-in with this user code"));
        };
        if sign_in.expires_at <= Utc::now() {
            return Err(ServiceError::NotFound("sign-in with this user code"));
        }
        if sign_in.state != State::Pending {
            return Err(ServiceError::Conflict(
                "this user code was already approved or denied".into(),
            ));
        }
        let decided = SignIn {
            state: to(&sign_in),
            ..sign_in
        };
        if services
            .store
            .swap_expiring(sign_ins(), &pointer.device_hash, &bytes, encode(&decided)?)
            .await?
        {
            return Ok(());
        }
    }
    Err(ServiceError::Unavailable)
}

/// The sign-in under a device-code hash, with its stored bytes (for the swap).
async fn read(services: &Services, device_hash: &str) -> ServiceResult<Option<(Vec<u8>, SignIn)>> {
    let Some(bytes) = services.store.get_expiring(sign_ins(), device_hash).await? else {
        return Ok(None);
    };
    let sign_in = decode(&bytes)?;
    Ok(Some((bytes, sign_in)))
}

/// What a poll gets: the key, or why not.
pub type Redeemed = Result<AuthoringKey, SignInRefusal>;

/// The tool polls: once the sign-in is approved, the first poll gets a new authoring key of
/// the approved game and every later one `expired_token`.
pub async fn redeem(
    services: &Services,
    auth: &AuthService,
    device_code: &str,
) -> ServiceResult<Redeemed> {
    if !codes::is_device_code(device_code) {
        return Ok(Err(SignInRefusal::InvalidGrant));
    }
    let device_hash = codes::hash(device_code);
    for _ in 0..CAS_ATTEMPTS {
        let Some((bytes, sign_in)) = read(services, &device_hash).await? else {
            return Ok(Err(SignInRefusal::InvalidGrant));
        };
        let now = Utc::now();
        let (next, answer) = match &sign_in.state {
            State::Denied { .. } => return Ok(Err(SignInRefusal::AccessDenied)),
            State::Redeemed => return Ok(Err(SignInRefusal::ExpiredToken)),
            _ if sign_in.expires_at <= now => return Ok(Err(SignInRefusal::ExpiredToken)),
            State::Approved {
                game_id,
                studio_id,
                approved_by,
                ..
            } => {
                // Claim the sign-in before making the key: one poll wins, and a key is made
                // once. Should making it fail, the sign-in is spent: the tool starts again.
                let claimed = SignIn {
                    state: State::Redeemed,
                    ..sign_in.clone()
                };
                if !services
                    .store
                    .swap_expiring(sign_ins(), &device_hash, &bytes, encode(&claimed)?)
                    .await?
                {
                    continue;
                }
                let key = auth
                    .issue_authoring(
                        *game_id,
                        studio_id,
                        &ChangedBy::member(approved_by, Via::Rest),
                    )
                    .await?;
                return Ok(Ok(key));
            }
            State::Pending => poll_pending(&sign_in, now),
        };
        if services
            .store
            .swap_expiring(sign_ins(), &device_hash, &bytes, encode(&next)?)
            .await?
        {
            return Ok(Err(answer));
        }
    }
    // Others keep polling the same code at this very moment: that is too fast.
    Ok(Err(SignInRefusal::SlowDown(
        services.settings.device.poll_interval_s.get() + SLOW_DOWN_STEP_S,
    )))
}

/// A poll of a pending sign-in: `slow_down` (and a longer interval) when it comes before
/// the interval passed since the last one, `authorization_pending` otherwise; either way
/// the poll's time is kept.
fn poll_pending(sign_in: &SignIn, now: DateTime<Utc>) -> (SignIn, SignInRefusal) {
    let too_soon = sign_in
        .last_poll_at
        .is_some_and(|last| now < last + chrono::Duration::seconds(i64::from(sign_in.interval_s)));
    let interval_s = if too_soon {
        sign_in.interval_s.saturating_add(SLOW_DOWN_STEP_S)
    } else {
        sign_in.interval_s
    };
    let next = SignIn {
        interval_s,
        last_poll_at: Some(now),
        ..sign_in.clone()
    };
    let answer = if too_soon {
        SignInRefusal::SlowDown(interval_s)
    } else {
        SignInRefusal::AuthorizationPending
    };
    (next, answer)
}
