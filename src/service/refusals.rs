//! The refusals a service answers with a reason of its own, which [`ServiceError`] carries:
//! a device sign-in's poll, a call in an authoring run, a preview past its share of the
//! queue, a session's player token. They live apart from the services that decide them, so that the error type
//! imports none of those services.
//!
//! [`ServiceError`]: super::ServiceError

use std::fmt;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Why a poll has no key to hand out: the error codes of RFC 8628 section 3.5 (and
/// `invalid_grant` of RFC 6749 for a device code that names nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignInRefusal {
    /// No one has approved or denied it yet: poll again after the interval.
    AuthorizationPending,
    /// Polled before the interval passed: the interval is now this many seconds.
    SlowDown(u32),
    /// Past its lifetime, or its key was already handed out: start a new sign-in.
    ExpiredToken,
    /// A dashboard user denied it.
    AccessDenied,
    /// Not a device code this deployment issued (or one long gone).
    InvalidGrant,
}

impl SignInRefusal {
    /// The stable code of the refusal.
    pub fn code(self) -> &'static str {
        match self {
            Self::AuthorizationPending => "authorization_pending",
            Self::SlowDown(_) => "slow_down",
            Self::ExpiredToken => "expired_token",
            Self::AccessDenied => "access_denied",
            Self::InvalidGrant => "invalid_grant",
        }
    }

    /// What a person reads.
    pub fn message(self) -> String {
        match self {
            Self::AuthorizationPending => {
                "the sign-in is not approved yet: poll again after the interval".into()
            }
            Self::SlowDown(s) => format!("polling too fast: wait at least {s} s between polls"),
            Self::ExpiredToken => {
                "the sign-in has expired or its key was already handed out: sign in again".into()
            }
            Self::AccessDenied => "the sign-in was denied".into(),
            Self::InvalidGrant => "unknown device code".into(),
        }
    }
}

/// What a call in a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CallKind {
    /// `POST .../custom-pages/validate`: limited to `runs::MAX_VALIDATIONS` per run.
    Validate,
    /// `POST .../custom-pages/draft`: recorded, not limited.
    Draft,
    /// `POST .../custom-pages/preview`: recorded, not limited.
    Preview,
    /// `POST .../custom-pages/runs/{run_id}/comparisons`: limited to `runs::MAX_COMPARISONS`.
    Comparison,
}

/// Why a call in a run is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunRefusal {
    /// A cloud run not confirmed yet (409 `run_not_confirmed`).
    NotConfirmed,
    /// The run took all the calls of this kind it may (409 `run_limit_reached`).
    LimitReached {
        /// The kind refused, or `None` for the run's total of calls.
        kind: Option<CallKind>,
        /// How many the run takes.
        max: u32,
    },
    /// A cloud run confirmed by the member who approved its key (403
    /// `second_member_required`).
    SameMember,
    /// A cloud run whose key's approver is not known, so no second member can be told apart
    /// (403 `second_member_required`).
    ApproverUnknown,
}

impl RunRefusal {
    /// The stable error code.
    pub fn code(self) -> &'static str {
        match self {
            Self::NotConfirmed => "run_not_confirmed",
            Self::LimitReached { .. } => "run_limit_reached",
            Self::SameMember | Self::ApproverUnknown => "second_member_required",
        }
    }

    /// The explanation.
    pub fn message(self) -> String {
        match self {
            Self::NotConfirmed => "this cloud run is not confirmed yet: a developer other than the one who approved the authoring key must confirm it (POST .../custom-pages/runs/{run_id}/confirm)".into(),
            Self::LimitReached { kind: Some(CallKind::Validate), max } => format!(
                "this run took its {max} validations (the first and {} fix attempts): open a new run", max - 1
            ),
            Self::LimitReached { kind: Some(kind), max } => format!(
                "this run took its {max} {} calls: open a new run", kind_name(kind)
            ),
            Self::LimitReached { kind: None, max } => {
                format!("this run recorded its {max} calls: open a new run")
            }
            Self::SameMember => "a cloud run must be confirmed by a studio member other than the one who approved its authoring key".into(),
            Self::ApproverUnknown => "the member who approved this run's authoring key is not known, so no second member can confirm it: issue a new key and open a new run".into(),
        }
    }

    /// The answer's `details`: which limit and its size, for a limit.
    pub fn details(self) -> serde_json::Value {
        match self {
            Self::LimitReached { kind, max } => serde_json::json!({
                "limit": kind.map_or("calls", kind_name),
                "max": max,
            }),
            _ => serde_json::json!({}),
        }
    }
}

/// A call kind's name, as its endpoint says it.
pub fn kind_name(kind: CallKind) -> &'static str {
    match kind {
        CallKind::Validate => "validate",
        CallKind::Draft => "draft",
        CallKind::Preview => "preview",
        CallKind::Comparison => "comparison",
    }
}

/// Which share a refused request had used up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareScope {
    /// The game's (`authoring.preview_per_game`).
    Game,
    /// The authoring key's (`authoring.preview_per_key`).
    Key,
    /// The dashboard user's (`authoring.preview_per_key`).
    User,
}

impl fmt::Display for ShareScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Game => "game",
            Self::Key => "authoring key",
            Self::User => "user",
        })
    }
}

/// Why a session may not open as the player it names, in a game that requires player tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlayerTokenRefusal {
    /// No `player_token` was sent.
    Required,
    /// Not a JWT.
    Malformed,
    /// Signed with an algorithm no key of the game uses (`none`, HMAC, ...).
    Algorithm,
    /// No key of the game verifies its signature.
    UnknownKey,
    /// Its `exp` has passed.
    Expired,
    /// Its `exp` is more than a day ahead.
    TooLongLived,
    /// Its `iat` is in the future.
    NotYetValid,
    /// Its `aud` is not this game.
    OtherGame,
    /// A valid token of another player.
    OtherPlayer,
}

impl PlayerTokenRefusal {
    /// The stable code of the refusal.
    pub fn code(self) -> &'static str {
        match self {
            Self::Required => "player_token_required",
            Self::OtherPlayer => "player_token_mismatch",
            _ => "player_token_invalid",
        }
    }

    /// The reason, as a stable word a client can act on (`expired`: ask the studio's backend
    /// for a fresh token), answered as `details.reason`.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Malformed => "malformed",
            Self::Algorithm => "algorithm",
            Self::UnknownKey => "unknown_key",
            Self::Expired => "expired",
            Self::TooLongLived => "too_long_lived",
            Self::NotYetValid => "not_yet_valid",
            Self::OtherGame => "wrong_audience",
            Self::OtherPlayer => "other_player",
        }
    }

    /// What a person reads: the reason, named.
    pub fn message(self) -> &'static str {
        match self {
            Self::Required => {
                "this game requires a player_token signed by the studio to open a session"
            }
            Self::Malformed => {
                "player_token invalid (malformed): not a JWT with sub, aud, exp and iat"
            }
            Self::Algorithm => {
                "player_token invalid (algorithm): only ES256 and RS256 are accepted"
            }
            Self::UnknownKey => {
                "player_token invalid (unknown_key): no key of the game verifies it"
            }
            Self::Expired => "player_token invalid (expired)",
            Self::TooLongLived => {
                "player_token invalid (too_long_lived): exp is more than 24 hours ahead"
            }
            Self::NotYetValid => "player_token invalid (not_yet_valid): iat is in the future",
            Self::OtherGame => "player_token invalid (wrong_audience): aud is not this game",
            Self::OtherPlayer => "player_token is for another player than player_id",
        }
    }
}

impl fmt::Display for PlayerTokenRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}
