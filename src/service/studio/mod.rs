//! The studio's people and secrets: members, their dashboard sessions, and the secrets the engine
//! makes for itself.

pub mod members;
pub mod secrets;
pub mod web_sessions;
