//! The SDK's errors: why `init` refused to start, and why an event was not queued.

use std::path::PathBuf;

/// Why [`crate::Sdk::init`] refused to start. Every check is local (the configuration, the
/// key's kind, `svc_config.json`, the player id's source): no error here comes from the
/// network, which init never waits on.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The configuration JSON could not be read.
    #[error("the SDK configuration is not valid JSON of the expected shape: {0}")]
    Config(#[source] serde_json::Error),
    /// The API key is not an SDK key (`..._live_sk_...` or `..._test_sk_...`).
    #[error(
        "api_key is not an SDK key: expected `_live_sk_` (production) or `_test_sk_` (sandbox) in it"
    )]
    NotAnSdkKey,
    /// The key's kind and the configured environment disagree.
    #[error("api_key is a {key} key but environment is {configured}")]
    EnvironmentMismatch {
        /// The environment the key belongs to.
        key: &'static str,
        /// The environment the configuration names.
        configured: &'static str,
    },
    /// `base_url` is not an `http` or `https` URL.
    #[error("base_url must start with http:// or https://, got {0:?}")]
    BaseUrl(String),
    /// `svc_config.json` could not be read or parsed.
    #[error("cannot read {path}: {message}")]
    SvcConfig {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The player id source needs an input the game did not pass.
    #[error("player_id_source {source_name} needs {needed}, which the game did not pass")]
    MissingPlayerInput {
        /// The configured source.
        source_name: &'static str,
        /// What the game must pass.
        needed: &'static str,
    },
    /// The player token is missing (source `jwt`) or unreadable.
    #[error("{0}")]
    PlayerToken(#[from] crate::player_token::TokenError),
    /// The SDK's data directory or a file in it could not be used.
    #[error("the SDK data directory {path} is not usable: {source}")]
    DataDir {
        /// The directory or file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The background thread could not be started.
    #[error("cannot start the SDK's background thread: {0}")]
    Thread(#[source] std::io::Error),
}

/// Why [`crate::Sdk::track`] did not queue an event.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TrackError {
    /// The kill switch is at level 3 (SDK off): telemetry is stopped.
    #[error("the SDK is switched off (kill switch level 3): telemetry is stopped")]
    SdkOff,
    /// The event, as JSON, is longer than the engine reads in one request: it could never be
    /// sent, so it is not queued.
    #[error("the event is {bytes} bytes of JSON; the engine takes events of at most {limit}")]
    TooLarge {
        /// The event's length as JSON.
        bytes: usize,
        /// The longest event the engine takes (see `limits::MAX_EVENT_BYTES`).
        limit: usize,
    },
    /// `capacity` money events wait for the engine already (a long outage): the event was not
    /// queued, and the game keeps it to track later. Money events are never evicted.
    #[error("{capacity} money events wait for the engine already: the queue takes no more")]
    QueueFull {
        /// The most money events the queue keeps.
        capacity: usize,
    },
    /// The event could not be encoded as JSON.
    #[error("the event cannot be encoded as JSON: {0}")]
    Unencodable(String),
}
