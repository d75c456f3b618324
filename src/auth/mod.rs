//! Credentials, and nothing that uses them: the roles of dashboard users, the hashing of
//! members' passwords ([`password`]), the dashboard JWTs ([`JwtCodec`]), the development
//! secret they are signed with when none is configured ([`dev_secret`]), and the time
//! credentials are checked against ([`clock`]). The formats themselves (key tokens,
//! dashboard JWTs) are read by the `offer-wire` crate.
//!
//! The keys service (issuing, resolving and revoking SDK and authoring keys) belongs to the
//! service layer, the extractors that read a request's credential to the transport.

pub mod clock;
pub mod dev_secret;
pub mod password;

pub use offer_wire::jwt::{JwtCodec, Role};
