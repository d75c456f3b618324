//! This node's rate limits, kept in memory and shared by the transports: the device sign-in
//! of the authoring tool (REST) and the dashboard's sign-in form, both on one keyed limiter.
//! The state holds them; neither transport owns them.

pub mod device;
pub mod keyed;
pub mod sign_in;
