//! The service layer's one error type. Services never build HTTP answers: the transport maps
//! each variant to a status and a stable code in one place.

use offer_domain::template::Validation;
use offer_domain::validation::FieldError;

use crate::store::StoreError;

/// Why a use case failed.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// No credential, or one that is malformed, unknown, revoked or expired.
    #[error("{0}")]
    Unauthorized(&'static str),
    /// A session of a game that requires player tokens, without a valid one for its player.
    #[error("{0}")]
    PlayerToken(super::refusals::PlayerTokenRefusal),
    /// A store notification that does not prove it comes from the store for this game: a
    /// signature, certificate chain, app or token that does not check out, or a game with
    /// nothing to check it against. The message says which.
    #[error("{0}")]
    NotificationInvalid(String),
    /// An authoring key past its 90 days: the tool must sign in again.
    #[error("the authoring key has expired: sign in again or re-export")]
    AuthoringKeyExpired,
    /// A valid credential whose role does not allow the action.
    #[error("{0}")]
    Forbidden(&'static str),
    /// A valid credential of the wrong kind for this surface.
    #[error("{0}")]
    WrongCredential(&'static str),
    /// Absent, or owned by another studio: both read the same so that no caller learns
    /// what exists outside its studio.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The request contradicts the current state (a duplicate id, a decided approval).
    #[error("{0}")]
    Conflict(String),
    /// Entries of a list that contradict the current state, each with its index and why
    /// (a bulk upsert naming deleted items).
    #[error("conflicts with the current state")]
    Conflicts(Vec<FieldError>),
    /// More entries in one call than the operation takes.
    #[error("{0}")]
    PayloadTooLarge(String),
    /// Content of a kind the operation does not take (an upload that is not an image).
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// Well-formed but invalid, with every field error found.
    #[error("validation failed")]
    Validation(Vec<FieldError>),
    /// A custom page's version that the validator blocks, so it is neither queued for
    /// approval nor published; the validator's whole answer goes with it.
    #[error("the version does not pass validation ({} blocker(s)): nothing was queued or published", .0.blockers.len())]
    PageInvalid(Box<Validation>),
    /// Too many attempts from this caller (or on this node): retry after this many seconds.
    #[error("too many requests: retry in {0} s")]
    RateLimited(u64),
    /// The SDK key opened sessions for as many new player ids this minute as it may (on this
    /// node): retry after this many seconds.
    #[error("too many new players for this key: retry in {0} s")]
    NewPlayerRateLimited(u64),
    /// A device sign-in poll with no key to hand out (yet); the refusal says why.
    #[error("{}", .0.message())]
    SignIn(super::refusals::SignInRefusal),
    /// A call an authoring run refuses (not confirmed, a limit reached), or a confirmation
    /// it refuses (by the member who approved its key).
    #[error("{}", .0.message())]
    Run(super::refusals::RunRefusal),
    /// The game's kill switch has the SDK off.
    #[error("the SDK is disabled for this game (kill switch level 3)")]
    SdkDisabled,
    /// This node's preview queue is full (`authoring.preview_queue` builds wait for a
    /// worker already); the call is safe to retry.
    #[error("the preview queue of this node is full: retry after Retry-After seconds")]
    PreviewQueueFull,
    /// The game, or the key or user asking, already has its share of this node's preview
    /// queue queued or building (`authoring.preview_per_game`, `authoring.preview_per_key`);
    /// the call is safe to retry once one of them is built.
    #[error(
        "this {0} already has {1} previews queued or building on this node, its share: retry \
         after Retry-After seconds, once one is built"
    )]
    PreviewShareFull(super::refusals::ShareScope, usize),
    /// The store or an actor is down or slow; the call is safe to retry.
    #[error("service unavailable, retry shortly")]
    Unavailable,
    /// Stored data this build cannot read, or a broken invariant: a bug, never the caller's.
    #[error("internal error")]
    Internal(String),
}

impl ServiceError {
    /// A validation failure with one field error.
    pub fn invalid(field: &str, reason: impl Into<String>) -> Self {
        Self::Validation(vec![FieldError::new(field, reason)])
    }
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(_) => {
                tracing::warn!(error = %e, "store unavailable");
                Self::Unavailable
            }
            StoreError::Corrupt(msg) => Self::Internal(msg),
            // Only a caller's input can be too deep or too large to store.
            StoreError::Unstorable(reason) => Self::invalid("body", reason),
        }
    }
}

impl From<offer_actors::ActorError> for ServiceError {
    fn from(e: offer_actors::ActorError) -> Self {
        // A stopped actor happens only while the node shuts down: retry elsewhere.
        tracing::warn!(error = %e, "actor call failed");
        Self::Unavailable
    }
}

/// Result of a use case.
pub type ServiceResult<T> = Result<T, ServiceError>;
