//! This node's rate limits, kept in memory and shared by the transports: the device sign-in
//! of the authoring tool (REST), the dashboard's sign-in form, and new player ids per SDK
//! key (REST and socket), all on one keyed limiter.
//! The state holds them; neither transport owns them.

pub mod device;
pub mod keyed;
pub mod new_players;
pub mod sign_in;
