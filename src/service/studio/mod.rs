//! The studio's people, keys and secrets: members, their dashboard sessions, who is calling
//! ([`callers`]), the SDK and authoring keys of its games with the revocations open sockets
//! watch ([`keys`], [`revocation`]; a kept-alive connection's last key, [`connection_keys`]), and the secrets the engine makes for itself.

pub mod callers;
pub mod connection_keys;
pub mod keys;
pub mod members;
pub mod revocation;
pub mod secrets;
pub mod web_sessions;
