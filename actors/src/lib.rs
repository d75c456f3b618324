//! The engine's actors, behind plain handle types.
//!
//! Every actix type stays in this crate: the HTTP and WebSocket code only sees
//! [`ActorSystem`], [`GameHandle`] and [`SessionHandle`], so a later change of actor
//! library stays in one folder.
//!
//! Topology: one actix `Arbiter` (a thread with its own event loop) per shard; each
//! [`game::GameActor`] lives on the shard its id hashes to. A game actor owns every change
//! to its game's live state and publishes an immutable [`GameView`] after each one. A
//! session ([`SessionHandle`]) is no actor: it holds its player's live features and its
//! socket's outbound queue behind its handle, and the registry forgets it when it idles.
//! Readers on the hot path load the latest published state without a lock or a message
//! round trip.

pub mod game;
mod open_sessions;
pub mod registry;
pub mod session;

pub use game::{GameChange, GameConfig, GameHandle, GameView, Learned};
pub use open_sessions::SessionKey;
pub use registry::ActorSystem;
pub use session::{
    Attached, Body, Delivery, Detached, OfferCounters, Outbound, OutboundMessage, PushResult,
    ResumePoint, Sequenced, SessionHandle, SessionInfo, SocketQueue,
};

/// Why an actor call failed.
#[derive(Debug, thiserror::Error)]
pub enum ActorError {
    /// The actor's mailbox is closed (the actor stopped) or full.
    #[error("actor unavailable: {0}")]
    Unavailable(String),
}
