//! The SDK's background thread: its own single-threaded tokio runtime, which fetches the
//! kill-switch state, opens the session and keeps the WebSocket ([`crate::socket`]),
//! reconnecting with backoff, beside the telemetry sender ([`crate::flush`]). Nothing here
//! runs on the game's thread; the game only sees the callbacks it drains.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use offer_domain::game::Mode;
use offer_domain::offer::KillSwitch;
use reqwest::StatusCode;
use serde::Deserialize;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::sync::{Notify, oneshot, watch};
use uuid::Uuid;

use crate::backoff::Backoff;
use crate::callback::SdkCallback;
use crate::config::SdkConfig;
use crate::journal::Journal;
use crate::state::{GameState, SharedState};
use crate::telemetry::TelemetryQueue;
use crate::{flush, sigpipe, socket};

/// How long one HTTP request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
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

/// Starts the background thread, which takes the offer requests `requests` receives;
/// dropping the returned sender (or sending on it) stops it.
pub fn spawn(
    shared: Arc<Shared>,
    requests: UnboundedReceiver<String>,
) -> std::io::Result<(oneshot::Sender<()>, std::thread::JoinHandle<()>)> {
    let (stop, stopped) = oneshot::channel();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let thread = std::thread::Builder::new()
        .name("offer-sdk".into())
        .spawn(move || {
            // Before any socket exists, so no write of this thread (or of the threads its
            // runtime starts, which inherit the mask) can raise SIGPIPE in the game.
            if let Err(e) = sigpipe::block_on_this_thread() {
                shared.emit(SdkCallback::Error {
                    code: "sdk_signal_mask".into(),
                    message: format!("cannot block SIGPIPE on the SDK's thread: {e}"),
                });
            }
            runtime.block_on(async move {
                tokio::select! {
                    _ = stopped => {}
                    () = run(shared, requests) => {}
                }
            });
        })?;
    Ok((stop, thread))
}

/// The background work: the session loop and the telemetry sender, side by side.
async fn run(shared: Arc<Shared>, mut requests: UnboundedReceiver<String>) {
    let http = match reqwest::Client::builder().timeout(REQUEST_TIMEOUT).build() {
        Ok(http) => http,
        Err(e) => {
            shared.emit(SdkCallback::Error {
                code: "sdk_http_client".into(),
                message: format!("cannot build the HTTP client: {e}"),
            });
            return;
        }
    };
    tokio::join!(
        session_loop(&shared, &http, &mut requests),
        flush::run(&shared, &http)
    );
}

/// Waits for the player id, then connects and reconnects for the life of the SDK.
async fn session_loop(
    shared: &Shared,
    http: &reqwest::Client,
    requests: &mut UnboundedReceiver<String>,
) {
    let mut player = shared.player.subscribe();
    let player_id = loop {
        if let Some(id) = player.borrow_and_update().clone() {
            break id;
        }
        if player.changed().await.is_err() {
            return;
        }
    };
    let mut backoff = Backoff::new(BACKOFF_BASE, shared.timing.backoff_cap);
    let mut position = socket::Position::default();
    let mut last_reported = String::new();
    loop {
        if let Err(e) = connect_once(
            shared,
            http,
            &player_id,
            &mut position,
            &mut backoff,
            requests,
        )
        .await
        {
            // An outage repeats the same failure at every attempt: the game hears it once.
            let message = e.to_string();
            if message != last_reported {
                shared.emit(SdkCallback::Error {
                    code: e.code().into(),
                    message: message.clone(),
                });
                last_reported = message;
            }
        }
        // A write to the lost connection may have left a (blocked) SIGPIPE on this thread.
        sigpipe::discard_pending();
        tokio::time::sleep(backoff.next_delay()).await;
    }
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
}

impl ConnectionError {
    /// The callback's code for this failure.
    fn code(&self) -> &'static str {
        match self {
            Self::SdkOff => "sdk_disabled",
            Self::Closed => "sdk_disconnected",
            _ => "sdk_unreachable",
        }
    }
}

/// `GET /v1/sdk/status/{game_id}`, the parts the SDK keeps.
#[derive(Debug, Deserialize)]
struct Status {
    kill_switch: KillSwitch,
    mode: Mode,
    config_version: u64,
    #[serde(default)]
    custom_page: Option<serde_json::Value>,
}

/// `POST /v1/sdk/sessions`, the parts the SDK keeps.
#[derive(Debug, Deserialize)]
struct Session {
    kill_switch: KillSwitch,
    mode: Mode,
    config_version: u64,
}

/// One connection: status, session, then the socket until it closes.
async fn connect_once(
    shared: &Shared,
    http: &reqwest::Client,
    player_id: &str,
    position: &mut socket::Position,
    backoff: &mut Backoff,
    requests: &mut UnboundedReceiver<String>,
) -> Result<(), ConnectionError> {
    let config = &shared.config;
    let status = http
        .get(config.url(&format!("/v1/sdk/status/{}", config.game_id)))
        .bearer_auth(&config.api_key)
        .send()
        .await?;
    if !status.status().is_success() {
        return Err(ConnectionError::Refused(
            status.status(),
            "the status request",
        ));
    }
    let status: Status = status.json().await?;
    shared.apply(
        |s| {
            s.kill_switch = status.kill_switch;
            s.mode = status.mode;
            s.config_version = status.config_version;
            s.custom_page = status.custom_page;
        },
        true,
    );
    if !shared.state.kill_level().allows_sdk() {
        return Err(ConnectionError::SdkOff);
    }
    let opened = http
        .post(config.url("/v1/sdk/sessions"))
        .bearer_auth(&config.api_key)
        .json(&serde_json::json!({"session_id": shared.session_id, "player_id": player_id}))
        .send()
        .await?;
    if !opened.status().is_success() {
        return Err(ConnectionError::Refused(
            opened.status(),
            "the session request",
        ));
    }
    let session: Session = opened.json().await?;
    shared.apply(
        |s| {
            s.kill_switch = session.kill_switch;
            s.mode = session.mode;
            s.config_version = session.config_version;
        },
        true,
    );
    shared.session_open.store(true, Ordering::SeqCst);
    shared.flush.notify_one();
    socket::serve(shared, player_id, position, backoff, requests).await
}

/// The queue (or the journal), whether or not a thread panicked while holding it.
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
