//! Typed persistence on top of the [`Store`](crate::store::Store): games, catalogue items and
//! assets. Each write goes to the store first and then to the game's actor, so the live view
//! never shows something the store has not confirmed; other nodes learn of the change over
//! the bus and reload.

pub mod approvals;
pub mod assets;
pub mod games;
pub mod items;
pub mod offer_config;
pub mod sessions;
