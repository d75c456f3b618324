//! The engine's actors, behind plain handle types.
//!
//! Every actix type stays in this crate: the HTTP and WebSocket code only sees
//! [`ActorSystem`] and [`GameHandle`], so a later change of actor library stays in one folder.
//!
//! Topology: one actix `Arbiter` (a thread with its own event loop) per shard; each
//! [`game::GameActor`] lives on the shard its `game_id` hashes to. A game actor owns every
//! change to its game's live state and publishes an immutable [`GameView`] after each one;
//! readers on the hot path load the latest view without a lock or a message round trip.

pub mod game;
pub mod registry;

pub use game::{GameHandle, GameView};
pub use registry::ActorSystem;

/// Why an actor call failed.
#[derive(Debug, thiserror::Error)]
pub enum ActorError {
    /// The actor's mailbox is closed (the actor stopped) or full.
    #[error("actor unavailable: {0}")]
    Unavailable(String),
}
