//! [`Sdk`], the handle the game holds: init, login, track, the state and the callbacks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use offer_wire::event::SdkEvent;
use tokio::sync::{Notify, oneshot, watch};
use uuid::Uuid;

use crate::callback::SdkCallback;
use crate::config::SdkConfig;
use crate::error::{InitError, TrackError};
use crate::identity::{self, PlayerInputs};
use crate::options::InitOptions;
use crate::player_token::{PlayerToken, Refusal, TokenError, Tokens};
use crate::shared::{Shared, Timing, lock};
use crate::state::{GameState, SharedState, StateSource};
use crate::svc_config::SvcConfig;
use crate::telemetry::{self, TelemetryQueue};
use crate::worker;
use crate::{flush, socket};

/// A running SDK. Dropping it stops the background thread and writes what is still queued to
/// disk for the next run.
#[derive(Debug)]
pub struct Sdk {
    shared: Arc<Shared>,
    svc_config: SvcConfig,
    callbacks: Mutex<Receiver<SdkCallback>>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sdk {
    /// Starts the SDK and returns at once. On the caller's thread it only checks the
    /// configuration (the key's kind against `environment`), reads `svc_config.json`, resolves
    /// the player id when `auto_login` is set (see [`crate::identity`]; `player_id` is the
    /// game's own id, used by the `custom` source) and loads the cached state and telemetry
    /// from `options.data_dir`. Everything on the network happens on the SDK's thread.
    /// `session_id` is generated when `None`.
    pub fn init(
        config_json: &str,
        player_id: Option<String>,
        session_id: Option<Uuid>,
        options: InitOptions,
    ) -> Result<Self, InitError> {
        let config = SdkConfig::parse(config_json)?;
        let svc_config = SvcConfig::read(&options.svc_config_dir)?;
        std::fs::create_dir_all(&options.data_dir).map_err(|source| InitError::DataDir {
            path: options.data_dir.clone(),
            source,
        })?;
        let token = options
            .player_token
            .as_deref()
            .map(PlayerToken::read)
            .transpose()?;
        let player = if svc_config.auto_login {
            Some(identity::resolve(
                svc_config.player_id_source,
                PlayerInputs {
                    custom: player_id.as_deref(),
                    advertising_id: options.advertising_id.as_deref(),
                    token: token.as_ref(),
                },
                &options.data_dir,
            )?)
        } else {
            None
        };
        if let (Some(player), Some(token)) = (&player, &token)
            && player != token.subject()
        {
            return Err(TokenError::OtherPlayer.into());
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        let (offer_requests, requests) = tokio::sync::mpsc::unbounded_channel();
        let (queue, journal) = TelemetryQueue::open(
            &options.data_dir,
            options.telemetry_capacity,
            options.money_capacity,
        );
        let shared = Arc::new(Shared {
            config,
            session_id: session_id.unwrap_or_else(Uuid::new_v4),
            state: SharedState::load(&options.data_dir),
            queue: Mutex::new(queue),
            journal: Mutex::new(journal),
            callbacks: sender,
            player: watch::channel(player).0,
            tokens: Tokens::new(token, options.token_refresh_margin, options.token_wait),
            flush: Notify::new(),
            session_open: AtomicBool::new(false),
            connected: AtomicBool::new(false),
            offer_requests,
            timing: Timing {
                backoff_cap: options.backoff_cap,
                flush_interval: options.flush_interval,
            },
        });
        let (stop, thread) =
            worker::spawn(Arc::clone(&shared), requests).map_err(InitError::Thread)?;
        Ok(Self {
            shared,
            svc_config,
            callbacks: Mutex::new(receiver),
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// Opens the session for `player_id` when `svc_config.json` has `auto_login: false`
    /// (returns at once; the session opens in the background). Returns false, changing
    /// nothing, when a player is already logged in: a session belongs to one player.
    pub fn login(&self, player_id: impl Into<String>) -> bool {
        let player_id = player_id.into();
        self.shared.player.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            *current = Some(player_id);
            true
        })
    }

    /// Opens the session for the player `token` names (its `sub`), sending `token` with it,
    /// when `svc_config.json` has `auto_login: false`. Refused, changing nothing, when the
    /// token does not read ([`TokenError`]); `Ok(false)` when a player is already logged in.
    pub fn login_with_token(&self, token: &str) -> Result<bool, TokenError> {
        let token = PlayerToken::read(token)?;
        let player_id = token.subject().to_owned();
        if self.shared.player.borrow().is_some() {
            return Ok(false);
        }
        self.shared.tokens.set(token, None)?;
        Ok(self.login(player_id))
    }

    /// Gives the SDK the player's new token, the answer to
    /// [`SdkCallback::PlayerTokenNeeded`] (or ahead of it): what waited for a token (the
    /// session, a batch of events) resumes with it. Refused, changing nothing, when it does not
    /// read or names another player than the logged-in one.
    pub fn set_player_token(&self, token: &str) -> Result<(), TokenError> {
        let token = PlayerToken::read(token)?;
        let player = self.shared.player.borrow().clone();
        self.shared.tokens.set(token, player.as_deref())?;
        self.shared.flush.notify_one();
        Ok(())
    }

    /// The engine's refusal of the player token the SDK holds, until the game gives another:
    /// while refused, no session opens and no event is sent.
    pub fn player_token_refusal(&self) -> Option<Refusal> {
        self.shared.tokens.refusal()
    }

    /// Whether a socket to the engine is up now.
    pub fn connected(&self) -> bool {
        self.shared.connected.load(Ordering::SeqCst)
    }

    /// Queues an event for the engine (a money event without `tx_id` gets one), in memory:
    /// the SDK's thread writes it to disk and sends it. The cost is the event's own encoding,
    /// whatever the queue holds. Refused while the kill switch is at level 3, when the engine
    /// refuses events anyway; when the event, as JSON, is longer than the engine takes
    /// ([`TrackError::TooLarge`]); and, for a money event, when the queue holds its most money
    /// events ([`TrackError::QueueFull`]). Past the queue's capacity, the oldest non-money
    /// event is evicted, and the game hears of it as an `sdk_events_dropped` error.
    pub fn track(&self, event: SdkEvent) -> Result<(), TrackError> {
        if !self.shared.state.kill_level().allows_sdk() {
            return Err(TrackError::SdkOff);
        }
        let prepared = telemetry::prepare(event)?;
        lock(&self.shared.queue).push(prepared)?;
        self.shared.flush.notify_one();
        Ok(())
    }

    /// Asks the engine for an offer for the moment `event_type` (for example `first_loss`,
    /// `currency_low`, `boss_raid`); returns at once. The answer comes as
    /// [`SdkCallback::Offer`] or [`SdkCallback::NoOffer`]; with no socket up it is
    /// `NoOffer { outcome: "offline" }` at once, since an offer for a moment that passed is
    /// no use later.
    pub fn request_offer(&self, event_type: &str) {
        let sent = self.shared.connected.load(Ordering::SeqCst)
            && self
                .shared
                .offer_requests
                .send(event_type.to_owned())
                .is_ok();
        if !sent {
            let _ = self.shared.callbacks.send(SdkCallback::NoOffer {
                outcome: socket::OFFLINE.into(),
            });
        }
    }

    /// The game's state as the SDK knows it now.
    pub fn state(&self) -> GameState {
        self.shared.state.get().0
    }

    /// Where that state came from: the engine in this run, the cache of an earlier run, or
    /// the defaults.
    pub fn state_source(&self) -> StateSource {
        self.shared.state.get().1
    }

    /// The session's id.
    pub fn session_id(&self) -> Uuid {
        self.shared.session_id
    }

    /// The player id, once resolved (at init with `auto_login`, at [`Sdk::login`] otherwise).
    pub fn player_id(&self) -> Option<String> {
        self.shared.player.borrow().clone()
    }

    /// The settings read from `svc_config.json`.
    pub fn svc_config(&self) -> &SvcConfig {
        &self.svc_config
    }

    /// Events tracked and not yet acknowledged by the engine.
    pub fn pending_events(&self) -> usize {
        lock(&self.shared.queue).len()
    }

    /// The next callback, if one is waiting; never blocks (call it each frame).
    pub fn poll(&self) -> Option<SdkCallback> {
        self.callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .try_recv()
            .ok()
    }

    /// The next callback, waiting at most `timeout` for one (for tools and tests; a game's
    /// frame loop uses [`Sdk::poll`]).
    pub fn wait(&self, timeout: Duration) -> Option<SdkCallback> {
        self.callbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv_timeout(timeout)
            .ok()
    }
}

impl Drop for Sdk {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // What was tracked since the SDK's thread last wrote the queue, for the next run.
        flush::keep(&self.shared);
    }
}
