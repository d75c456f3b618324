//! The engine's wire formats, read without the service: the SDK WebSocket protocol's
//! messages ([`socket`]), the messages between engine nodes ([`bus`]), SDK events
//! ([`event`]), strict JSON bodies ([`json`], whose structs are objects only: [`objects`]),
//! SDK and authoring key tokens ([`key_token`]), the codes of device sign-in
//! ([`device_code`]) and dashboard JWTs ([`jwt`]). Everything here is a pure function of its
//! input, so the fuzzers drive it directly, and the service's extractors only map its errors
//! to answers.

pub mod bus;
pub mod device_code;
pub mod event;
pub mod json;
pub mod jwt;
pub mod key_token;
pub mod objects;
pub mod socket;
