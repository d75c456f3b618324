//! What the game's thread and the SDK's background thread share, and what the background
//! tasks (the session loop of [`crate::worker`], its socket of [`crate::socket`] and the
//! telemetry sender of [`crate::flush`]) have in common: the shared state and its lock, the
//! timing of their retries, and the error a connection attempt ends with.

use std::sync::atomic::AtomicBool;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use reqwest::StatusCode;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{Notify, watch};
use uuid::Uuid;

use crate::callback::SdkCallback;
use crate::config::SdkConfig;
use crate::journal::Journal;
use crate::player_token::{Refusal, Tokens};
use crate::state::{GameState, SharedState};
use crate::telemetry::TelemetryQueue;

/// How long a WebSocket handshake may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The first retry's ceiling.
pub const BACKOFF_BASE: Duration = Duration::from_millis(250);

/// Timing knobs of the background work.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// The longest wait between two reconnection or resend attempts.
    pub backoff_cap: Duration,
    /// How often queued telemetry is sent when nothing wakes the sender sooner.
    pub flush_interval: Duration,
}

/// What the game's thread and the SDK's thread share.
#[derive(Debug)]
pub struct Shared {
    /// The checked configuration.
    pub config: SdkConfig,
    /// The session's id.
    pub session_id: Uuid,
    /// The game's state and its source.
    pub state: SharedState,
    /// Telemetry not yet acknowledged by the engine, in memory. The game's thread takes this
    /// lock to queue one event; the SDK's thread takes it to pick a batch or the records to
    /// write, never while writing or sending.
    pub queue: Mutex<TelemetryQueue>,
    /// The queue's file, written by one thread at a time (the SDK's, or the game's at drop),
    /// without holding the queue's lock.
    pub journal: Mutex<Journal>,
    /// Callbacks for the game.
    pub callbacks: std::sync::mpsc::Sender<SdkCallback>,
    /// The player id once known (at init with `auto_login`, at login otherwise).
    pub player: watch::Sender<Option<String>>,
    /// The player's token, when the game gave one.
    pub tokens: Tokens,
    /// Wakes the telemetry sender (an event was tracked, the session opened).
    pub flush: Notify,
    /// Whether the engine has opened the session in this run.
    pub session_open: AtomicBool,
    /// Whether a socket is up (between its `ready` and its end).
    pub connected: AtomicBool,
    /// The game's offer requests, to the socket.
    pub offer_requests: UnboundedSender<String>,
    /// Timing knobs.
    pub timing: Timing,
}

impl Shared {
    /// Queues a callback; a game that dropped the SDK's receiver simply gets none.
    pub fn emit(&self, callback: SdkCallback) {
        let _ = self.callbacks.send(callback);
    }

    /// The player token to send now (see [`Tokens::for_use`]).
    pub async fn token(&self) -> crate::player_token::InUse {
        self.tokens.for_use(|callback| self.emit(callback)).await
    }

    /// Records the engine's refusal of the token `used`, asking the game for another.
    pub fn token_refused(&self, used: &crate::player_token::InUse, refusal: Refusal) {
        self.tokens
            .refused(used, refusal, |callback| self.emit(callback));
    }

    /// Applies a state the engine reported, writes the cache and tells the game what
    /// changed: the kill switch, and the configuration (version or custom page).
    pub fn apply(&self, change: impl FnOnce(&mut GameState), announce: bool) {
        let (before, written) = self.state.update(change);
        if let Err(e) = written {
            self.emit(SdkCallback::Error {
                code: "sdk_cache_write".into(),
                message: format!("cannot keep the state for the next start: {e}"),
            });
        }
        if !announce {
            return;
        }
        let (after, _) = self.state.get();
        if after.kill_switch != before.kill_switch {
            self.emit(SdkCallback::KillSwitch(after.kill_switch.clone()));
        }
        if after.config_version != before.config_version || after.custom_page != before.custom_page
        {
            self.emit(SdkCallback::Config {
                config_version: after.config_version,
                custom_page: after.custom_page,
            });
        }
    }
}

/// The queue (or the journal), whether or not a thread panicked while holding it.
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why one connection attempt ended.
#[derive(Debug, thiserror::Error)]
pub enum ConnectionError {
    /// The engine could not be reached or answered badly.
    #[error("{0}")]
    Http(#[from] reqwest::Error),
    /// The engine refused a request.
    #[error("the engine answered {0} to {1}")]
    Refused(StatusCode, &'static str),
    /// The kill switch is at level 3: no session until it comes down.
    #[error("the SDK is switched off (kill switch level 3)")]
    SdkOff,
    /// The WebSocket failed.
    #[error("WebSocket: {0}")]
    Socket(#[from] tokio_tungstenite::tungstenite::Error),
    /// The WebSocket handshake took too long.
    #[error("the WebSocket handshake timed out")]
    Timeout,
    /// The socket closed.
    #[error("the engine closed the WebSocket")]
    Closed,
    /// The engine refused the player token; the session waits for the game's next one.
    #[error("the engine refused the player token: {}", .0.message)]
    PlayerToken(Refusal),
}

impl ConnectionError {
    /// The callback's code for this failure.
    pub fn code(&self) -> &'static str {
        match self {
            Self::SdkOff => "sdk_disabled",
            Self::Closed => "sdk_disconnected",
            Self::PlayerToken(_) => "sdk_player_token",
            _ => "sdk_unreachable",
        }
    }
}
