//! Building and running the application.
//!
//! actix actors and axum share one process in one shape only: a multi-thread tokio runtime
//! handed to `actix_rt::System::with_tokio_rt`; inside `block_on` the actor shards (one
//! `Arbiter` per core) are started, then axum is served on the tokio workers. [`run`] does
//! that for the binary; [`spawn`] does the same on a background thread for tests and load
//! tools, and returns the bound address.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use offer_actors::{ActorSystem, GameChange};
use offer_domain::offer::KillSwitch;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::auth::{AuthService, JwtCodec, Role};
use crate::config::Settings;
use crate::metrics::Metrics;
use crate::state::AppState;
use crate::store::embedded::EmbeddedStore;
use crate::store::redis::RedisStore;
use crate::store::{BusMessage, SharedStore, Store};
use crate::ws::protocol::ServerMessage;

/// Why the application could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// Redis unreachable at start.
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    /// The listener could not bind.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Anything else at start.
    #[error("{0}")]
    Other(String),
}

/// A built application, bound to its port, not yet serving.
pub struct Application {
    listener: TcpListener,
    state: AppState,
    dev_token: Option<String>,
}

impl Application {
    /// Connects the store, starts the actor shards and binds the listener. Must run inside
    /// an actix `System` (see [`run`] and [`spawn`]).
    pub async fn build(settings: Settings) -> Result<Self, StartError> {
        let genres = settings.genres()?;
        let store: SharedStore = if settings.store.redis_url.is_empty() {
            Arc::new(EmbeddedStore::new())
        } else {
            let store = RedisStore::connect(
                &settings.store.redis_url,
                &settings.store.key_prefix,
                Duration::from_millis(settings.store.timeout_ms),
            )
            .await?;
            store.ping().await?;
            Arc::new(store)
        };
        let (secret, dev) = if settings.auth.jwt_secret.is_empty() {
            let mut bytes = [0u8; 48];
            rand::fill(&mut bytes);
            (bytes.to_vec(), true)
        } else {
            (settings.auth.jwt_secret.as_bytes().to_vec(), false)
        };
        let jwt = JwtCodec::new(
            &secret,
            &settings.auth.jwt_issuer,
            &settings.auth.jwt_audience,
        );
        let dev_token = if dev {
            Some(
                jwt.mint(
                    "dev-admin",
                    &settings.auth.dev_studio,
                    Role::Admin,
                    chrono::Duration::hours(24),
                )
                .map_err(|e| StartError::Other(e.to_string()))?,
            )
        } else {
            None
        };
        let auth = AuthService::new(jwt, settings.auth.key_prefix.clone(), store.clone());
        let shards = match settings.server.shards {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        let actors =
            ActorSystem::start(shards, Duration::from_secs(settings.offers.session_idle_s));
        let metrics = Metrics::new().map_err(|e| StartError::Other(e.to_string()))?;
        let addr = settings.server.bind;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Bind { addr, source })?;
        let state = AppState::new(settings, store, auth, actors, genres, metrics);
        Ok(Self {
            listener,
            state,
            dev_token,
        })
    }

    /// The bound address (port 0 resolved).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The development admin token, when no JWT secret is configured.
    pub fn dev_token(&self) -> Option<&str> {
        self.dev_token.as_deref()
    }

    /// The application state (for in-process tools).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` turns true, then stops accepting, drains in-flight requests
    /// for at most `server.shutdown_grace_s`, and returns.
    pub async fn run_until_stopped(
        self,
        mut shutdown: watch::Receiver<bool>,
    ) -> std::io::Result<()> {
        let state = self.state.clone();
        tokio::spawn(follow_bus(state.clone()));
        let grace = Duration::from_secs(state.settings.server.shutdown_grace_s);
        let app = crate::http::router(state.clone());
        let mut drain = shutdown.clone();
        let server = axum::serve(
            self.listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async move {
            let _ = drain.wait_for(|stop| *stop).await;
        });
        let serving = tokio::spawn(async move { server.await });
        let _ = shutdown.wait_for(|stop| *stop).await;
        tracing::info!("shutting down: draining in-flight requests and sockets");
        let deadline = tokio::time::Instant::now() + grace;
        state.closing.send_replace(true);
        match tokio::time::timeout_at(deadline, serving).await {
            Ok(Ok(result)) => result?,
            Ok(Err(join)) => tracing::error!(error = %join, "server task failed"),
            Err(_) => tracing::warn!("drain deadline passed; closing remaining connections"),
        }
        if tokio::time::timeout_at(deadline, state.closing.closed())
            .await
            .is_err()
        {
            tracing::warn!("sockets still closing at the drain deadline");
        }
        state.actors.stop();
        Ok(())
    }
}

/// Applies bus messages from every node (this one included) to this node's state.
async fn follow_bus(state: AppState) {
    let mut rx = state.store.subscribe();
    loop {
        match rx.recv().await {
            Ok(msg) => apply_bus(&state, msg).await,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(
                    missed = n,
                    "bus lagged; reloading every game from the store"
                );
                apply_bus(&state, BusMessage::Resync).await;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}

async fn apply_bus(state: &AppState, msg: BusMessage) {
    match msg {
        BusMessage::KeyRevoked { key_hash } => state.auth.revoked(&key_hash),
        BusMessage::GameChanged { game_id, origin } => {
            // The origin already applied the change (reloading could race with its next
            // local change); its sockets still hear of it below.
            if origin != state.node_id
                && let Err(e) = crate::repo::games::reload(state, game_id).await
            {
                tracing::warn!(%game_id, error = %e, "reload after bus change failed");
            }
            if let Some(game) = state.actors.game(&game_id) {
                crate::ws::announce_config(state, &game.view());
            }
        }
        BusMessage::KillSwitch {
            game_id,
            level,
            reason,
            updated_at,
        } => {
            // A node has sessions of a game only while it serves the game.
            let Some(game) = state.actors.game(&game_id) else {
                return;
            };
            let ks = KillSwitch {
                level,
                reason,
                updated_at,
            };
            // The sending node already applied it; others learn it here. An older message
            // arriving late never undoes a newer switch, nor reaches the sockets.
            let current = game.view().kill_switch.clone();
            if ks.updated_at < current.updated_at {
                return;
            }
            if current != ks
                && let Err(e) = game.change(GameChange::KillSwitch(ks.clone())).await
            {
                tracing::warn!(%game_id, error = %e, "applying a kill switch failed");
            }
            broadcast_kill_switch(state, game_id, ks);
        }
        BusMessage::Resync => {
            for game in state.actors.games() {
                let view = game.view();
                let game_id = view.game.game_id;
                let before = view.kill_switch.clone();
                if let Err(e) = crate::repo::games::reload(state, game_id).await {
                    tracing::warn!(%game_id, error = %e, "reload after a bus gap failed");
                    continue;
                }
                let after = game.view();
                if after.kill_switch != before {
                    broadcast_kill_switch(state, game_id, after.kill_switch.clone());
                }
                crate::ws::announce_config(state, &after);
            }
        }
    }
}

fn broadcast_kill_switch(state: &AppState, game_id: uuid::Uuid, ks: KillSwitch) {
    let msg = ServerMessage::KillSwitch {
        level: ks.level,
        reason: ks.reason,
        updated_at: ks.updated_at,
    };
    crate::ws::broadcast(state, game_id, &msg);
}

/// Runs the service in this thread until SIGTERM or Ctrl-C: the binary's entry point.
pub fn run(settings: Settings) -> Result<(), StartError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| StartError::Other(e.to_string()))?;
    let system = actix_rt::System::with_tokio_rt(move || runtime);
    system.block_on(async move {
        let app = Application::build(settings).await?;
        let addr = app.local_addr().map_err(|e| StartError::Other(e.to_string()))?;
        tracing::info!(%addr, "offer engine listening");
        println!("offer-engine listening on http://{addr}");
        if let Some(token) = app.dev_token() {
            println!(
                "No auth.jwt_secret configured: development admin token for studio `{}` (valid 24 h, this run only):\n{token}",
                app.state().settings.auth.dev_studio
            );
        }
        let (tx, rx) = watch::channel(false);
        tokio::spawn(async move {
            shutdown_signal().await;
            let _ = tx.send(true);
        });
        app.run_until_stopped(rx)
            .await
            .map_err(|e| StartError::Other(e.to_string()))
    })
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

/// A service running on a background thread (tests, load tools).
pub struct Running {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its state (shared with the server).
    pub state: AppState,
    /// Set to true to stop it.
    pub shutdown: watch::Sender<bool>,
}

/// Starts the service on its own thread with the production bootstrap and returns once it
/// listens.
pub fn spawn(settings: Settings) -> Result<Running, StartError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("offer-engine".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = tx.send(Err(StartError::Other(e.to_string())));
                    return;
                }
            };
            let system = actix_rt::System::with_tokio_rt(move || runtime);
            system.block_on(async move {
                let app = match Application::build(settings).await {
                    Ok(app) => app,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let (stop_tx, stop_rx) = watch::channel(false);
                let started = app.local_addr().map(|addr| Running {
                    addr,
                    state: app.state().clone(),
                    shutdown: stop_tx,
                });
                match started {
                    Ok(running) => {
                        let _ = tx.send(Ok(running));
                        if let Err(e) = app.run_until_stopped(stop_rx).await {
                            tracing::error!(error = %e, "server failed");
                        }
                    }
                    Err(e) => {
                        let _ = tx.send(Err(StartError::Other(e.to_string())));
                    }
                }
            });
        })
        .map_err(|e| StartError::Other(e.to_string()))?;
    rx.recv()
        .map_err(|_| StartError::Other("server thread exited before starting".into()))?
}
