//! The integration tests: one binary, each test with its own server on port 0 (and its own
//! Redis key space where it uses Redis).

mod auth;
mod bad_input;
mod catalogue;
mod helpers;
mod offers;
mod ops;
mod process;
mod redis_harness;
mod store_conformance;
mod ws;
