//! Credentials: the time they are checked against ([`clock`]), the development secret
//! ([`dev_secret`]), the key store that issues, resolves and revokes SDK and authoring keys
//! ([`key_store`]), the revocations open sockets watch ([`revocation`]), and the extractors
//! that turn a bearer credential into a typed caller ([`callers`]). The formats themselves (key tokens, dashboard JWTs) are read by the
//! `offer-wire` crate.

pub mod callers;
pub mod clock;
pub mod dev_secret;
pub mod key_store;
pub mod password;
pub mod revocation;

pub use callers::{AnyGameCaller, CatalogueReader, Dashboard, GameCaller, SdkCaller};
pub use key_store::{AuthService, AuthoringKey, KeyRecord};
pub use offer_wire::jwt::{JwtCodec, Role};
pub use offer_wire::key_token::KeyKind;
pub use revocation::RevocationWatch;
