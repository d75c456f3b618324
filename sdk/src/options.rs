//! What the game passes to init besides the configuration JSON: where the SDK keeps its
//! files, where `svc_config.json` is, the inputs of the player id sources, and timing knobs.

use std::path::PathBuf;
use std::time::Duration;

/// Options of [`crate::Sdk::init`].
#[derive(Debug, Clone)]
pub struct InitOptions {
    /// The SDK's own directory (the cached state, the telemetry queue, the device id); made
    /// if missing. Each install needs its own.
    pub data_dir: PathBuf,
    /// The directory holding `svc_config.json`.
    pub svc_config_dir: PathBuf,
    /// The advertising id, for `player_id_source: advertising_id`.
    pub advertising_id: Option<String>,
    /// The player's token signed by the studio's backend: the player id for
    /// `player_id_source: jwt`, and sent to the engine with the session and every event batch
    /// (see [`crate::player_token`]).
    pub player_token: Option<String>,
    /// How long before the token's `exp` the SDK asks the game for a new one.
    pub token_refresh_margin: Duration,
    /// How long a token past its `exp` waits for the game's new one before it is tried anyway.
    pub token_wait: Duration,
    /// The telemetry queue's length past which each new event evicts the oldest non-money
    /// event (money events are never evicted).
    pub telemetry_capacity: usize,
    /// The most money events the telemetry queue keeps; past it, `track` refuses a money
    /// event (`TrackError::QueueFull`) and the game keeps it.
    pub money_capacity: usize,
    /// The longest wait between two reconnection or resend attempts.
    pub backoff_cap: Duration,
    /// How often queued telemetry is sent when nothing wakes the sender sooner.
    pub flush_interval: Duration,
}

impl InitOptions {
    /// The defaults (non-money events evicted past 1,000 queued events, at most 100,000 money
    /// events, a 30 s backoff cap, a flush every 5 s, a new token asked for a minute before
    /// the old one expires, an expired token waiting 10 s for it) for the given data and `svc_config.json`
    /// directories.
    pub fn new(data_dir: impl Into<PathBuf>, svc_config_dir: impl Into<PathBuf>) -> Self {
        Self {
            data_dir: data_dir.into(),
            svc_config_dir: svc_config_dir.into(),
            advertising_id: None,
            player_token: None,
            token_refresh_margin: Duration::from_secs(60),
            token_wait: Duration::from_secs(10),
            telemetry_capacity: 1_000,
            money_capacity: 100_000,
            backoff_cap: Duration::from_secs(30),
            flush_interval: Duration::from_secs(5),
        }
    }
}
