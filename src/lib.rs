//! The offer engine service: an actor-based real-time engine that picks, prices and serves
//! in-game offers through a five-level fallback pipeline.
//!
//! Layout:
//! - [`config`]: typed, layered configuration (`config/default.toml`).
//! - [`startup`]: the actix-in-tokio bootstrap, the server, graceful shutdown.
//! - [`http`]: the REST surface (router, extractors, handlers, OpenAPI).
//! - [`auth`]: dashboard JWTs, SDK and authoring keys, caller extractors.
//! - [`repo`]: typed persistence of games, items and assets.
//! - [`store`]: the storage interface and its embedded and Redis backends.
//! - [`error`]: the one HTTP error type.
//! - [`events`]: SDK events and what each changes (features, wallets, the L1 model).
//! - [`metrics`]: Prometheus metrics.
//! - [`offers`]: serving offers (decision, effects, decision log).
//! - [`state`]: the shared application state.
//! - [`ws`]: the WebSocket gateway (`/v1/sdk/ws`): protocol, per-socket task, broadcast.
//!
//! The pure decision logic lives in the `offer-domain` crate (`domain/`); the actors in
//! `offer-actors` (`actors/`).

pub mod auth;
pub mod cli;
pub mod config;
pub mod error;
pub mod events;
pub mod http;
pub mod metrics;
pub mod offers;
pub mod repo;
pub mod startup;
pub mod state;
pub mod store;
pub mod ws;
