//! The offer engine service: an actor-based real-time engine that picks, prices and serves
//! in-game offers through a five-level fallback pipeline.
//!
//! Layers, each depending only on those below it (`docs/architecture.md` draws them):
//!
//! - transport: [`http`] (REST routes, extractors, the OpenAPI document), [`ws`] (the
//!   WebSocket gateway and its hub), [`bus`] (what other nodes publish), [`state`] (what
//!   handlers receive), [`error`] (the one HTTP error type), [`server`] (the HTTP edge:
//!   connections, their limits and deadlines) and [`startup`] (bootstrap, serving, graceful
//!   shutdown);
//! - [`service`]: the use cases, one module per resource, with their own error type;
//!   [`auth`] checks credentials at the same level;
//! - [`store`]: the storage interface and its embedded (SQLite) and Redis backends; the
//!   actors live in the `offer-actors` crate (`actors/`);
//! - the pure rules in the `offer-domain` crate (`domain/`).
//!
//! Beside them: [`config`] (typed, layered configuration), [`metrics`] (Prometheus),
//! [`signal`] (the one-way signal socket tasks wait on), [`cli`] (the command line),
//! [`member_add`] (a studio member added from it), [`dashboard`] (the web console, a
//! transport beside [`http`]) and [`throttle`] (this node's rate limits, which both
//! transports use and the state holds).

pub mod auth;
pub mod bus;
pub mod cli;
pub mod config;
pub mod dashboard;
pub mod error;
pub mod export;
pub mod http;
pub mod member_add;
pub mod metrics;
pub mod server;
pub mod service;
pub mod signal;
pub mod startup;
pub mod state;
pub mod store;
pub mod throttle;
pub mod ws;
