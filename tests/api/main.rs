//! The integration tests: one binary, each test with its own server on port 0 (and its own
//! SQLite file, or its own Redis key space where it uses Redis).
//!
//! The toolkit: `helpers` spawns servers and mints tokens, `http` sends requests and checks
//! their answers, `fixtures` holds the bodies and setup steps, `ws_client` speaks the SDK
//! WebSocket, `raw` writes requests byte by byte on a plain socket, `redis_harness` provides
//! Redis and Redis Clusters. The other modules are the tests (`protocol_doc` keeps
//! `docs/protocol.md` true to the server).

mod audit;
mod auth;
mod authoring_scope;
mod bad_input;
mod balance_push;
mod billing;
mod bounds;
mod catalogue;
mod cluster;
mod connection_limits;
mod crash;
mod custom_pages;
mod day_caps;
mod device;
mod economy;
mod edge;
mod erasure;
mod experiments;
mod fixtures;
mod helpers;
mod history;
mod http;
mod impersonation;
mod inventory;
mod learner;
mod ledger_export;
mod offers;
mod openapi;
mod ops;
mod page_validation;
mod player_auth;
mod player_data;
mod players_count;
mod previews;
mod process;
mod protocol_doc;
mod publish;
mod raw;
mod receipt_fixtures;
mod receipts;
mod redis_harness;
mod refunds;
mod runs;
mod shared_state;
mod simulation;
mod slow_clients;
mod statements;
mod store_conformance;
mod stores;
mod ws;
mod ws_client;
