//! The offer engine's game SDK, in Rust: the core the C ABI and the engine plugins wrap.
//!
//! [`Sdk::init`] checks the configuration and returns at once: the network work (the
//! kill-switch status, the session, the WebSocket, the telemetry) runs on a background thread
//! with its own runtime, so a game's main thread never waits on the network. The last known
//! state (kill switch, mode, configuration, published custom page) is kept on disk and loaded
//! by init, so the first frame after a launch behaves as the last run ended even before the
//! engine answers ([`Sdk::state_source`] says which). Tracked events wait in a bounded queue,
//! on disk too, until the engine takes them. What the engine pushes reaches the game as
//! [`SdkCallback`]s, which the game drains on its own thread ([`Sdk::poll`]). A game whose
//! player identity is `required` gives the player's signed token at init
//! ([`InitOptions::player_token`]) and a new one when the SDK asks ([`player_token`]).
//!
//! ```no_run
//! use offer_sdk::{InitOptions, Sdk, SdkCallback};
//!
//! let config = r#"{"api_key": "ofr_live_sk_...", "game_id": "6f9c2d1e-4b7a-4c2e-9d3f-1a2b3c4d5e6f",
//!                  "environment": "production", "base_url": "https://engine.example.com"}"#;
//! let sdk = Sdk::init(config, Some("player_0".into()), None, InitOptions::new("game-data", "game-config"))
//!     .expect("a valid configuration");
//! // Each frame:
//! while let Some(callback) = sdk.poll() {
//!     if let SdkCallback::Offer(offer) = callback {
//!         println!("show {}", offer["offer_id"]);
//!     }
//! }
//! ```

mod backoff;
pub mod callback;
pub mod config;
pub mod error;
pub mod ffi;
mod flush;
pub mod identity;
mod journal;
mod limits;
mod options;
pub mod player_token;
mod protocol;
mod sdk;
mod shared;
mod sigpipe;
mod socket;
mod state;
mod storage;
pub mod svc_config;
mod telemetry;
mod worker;

pub use callback::{InventoryItem, SdkCallback};
pub use config::SdkConfig;
pub use error::{InitError, TrackError};
pub use offer_wire::event::SdkEvent;
pub use options::InitOptions;
pub use player_token::{Refusal, TokenError};
pub use sdk::Sdk;
pub use state::{GameState, StateSource};
pub use svc_config::{PlayerIdSource, SvcConfig};
