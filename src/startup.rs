//! Building and running the application.
//!
//! actix actors and axum share one process in one shape only: a multi-thread tokio runtime
//! handed to `actix_rt::System::with_tokio_rt`; inside `block_on` the actor shards (one
//! `Arbiter` per core) are started, then the router is served on the tokio workers by the
//! HTTP edge ([`crate::server`]). [`run`] does
//! that for the binary; [`spawn`] does the same on a background thread for tests and load
//! tools, and returns the bound address.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use offer_actors::ActorSystem;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::auth::{JwtCodec, Role, dev_secret};
use crate::config::Settings;
use crate::config::StoreSettings;
use crate::metrics::Metrics;
use crate::server::{Limits, Server};
use crate::service::Services;
use crate::service::studio::keys::AuthService;
use crate::state::AppState;
use crate::store::redis::RedisStore;
use crate::store::sqlite::{Location, SqliteOptions, SqliteStore, SyncMode};
use crate::store::{SharedStore, Store};

/// Why the application could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// The store cannot be opened (Redis unreachable, the SQLite file unusable or owned by
    /// another process).
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
    limits: Limits,
    state: AppState,
    dev_token: Option<String>,
}

impl Application {
    /// Connects the store, starts the actor shards and binds the listener. Must run inside
    /// an actix `System` (see [`run`] and [`spawn`]).
    pub async fn build(settings: Settings) -> Result<Self, StartError> {
        let genres = settings.genres()?;
        let plans = settings.plans()?;
        let store: SharedStore = if settings.store.redis_url.is_empty() {
            let options = sqlite_options(&settings.store);
            let store = tokio::task::spawn_blocking(move || SqliteStore::open(&options))
                .await
                .map_err(|e| StartError::Other(format!("opening the store: {e}")))??;
            Arc::new(store)
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
        let dev = settings.auth.jwt_secret.is_empty();
        let secret = if dev {
            dev_secret::load_or_create(&settings.auth.dev_secret_file)
                .map_err(|e| StartError::Other(e.to_string()))?
        } else {
            settings.auth.jwt_secret.as_bytes().to_vec()
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
        let auth = AuthService::new(jwt, &settings.auth, store.clone());
        let shards = match settings.server.shards {
            0 => std::thread::available_parallelism().map_or(1, usize::from),
            n => n,
        };
        let actors =
            ActorSystem::start(shards, Duration::from_secs(settings.offers.session_idle_s));
        let metrics = Metrics::new().map_err(|e| StartError::Other(e.to_string()))?;
        let addr = settings.server.bind;
        let listener =
            crate::server::bind(addr).map_err(|source| StartError::Bind { addr, source })?;
        let limits = Limits::from_settings(&settings.server);
        let services = Services::new(settings, store, actors, genres, plans);
        crate::service::audit::intent::settle_pending(&*services.store, None).await?;
        crate::service::audit::operator::record_at_start(&services)
            .await
            .map_err(|e| StartError::Other(format!("recording the operator's settings: {e}")))?;
        let state = AppState::new(services, auth, metrics);
        Ok(Self {
            listener,
            limits,
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

    /// The connection limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
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
        tokio::spawn(crate::bus::follow(state.clone()));
        let decisions = tokio::spawn(crate::service::workers::decisions::persist(
            state.services.clone(),
            shutdown.clone(),
        ));
        let model = tokio::spawn(crate::service::workers::model::keep_synced(
            state.services.clone(),
            shutdown.clone(),
        ));
        tokio::spawn(crate::service::workers::retention::keep_pruning(
            state.services.clone(),
            shutdown.clone(),
        ));
        tokio::spawn(crate::service::workers::audit::keep_settling(
            state.services.clone(),
            shutdown.clone(),
        ));
        let refusals = tokio::spawn(crate::service::workers::refused_events::keep_flushing(
            state.services.clone(),
            shutdown.clone(),
        ));
        crate::service::workers::preview_build::run_workers(&state.services, &shutdown);
        let quadrants = tokio::spawn(crate::service::economy::health::refresh_schedule(
            state.services.clone(),
        ));
        let grace = Duration::from_secs(state.services.settings.server.shutdown_grace_s);
        let app = crate::http::router(
            state.clone(),
            crate::ws::routes().merge(crate::dashboard::routes()),
        );
        let server = Server::new(
            self.listener,
            app,
            self.limits,
            state.metrics.connections().clone(),
        )
        .await;
        let serving = tokio::spawn(server.run(shutdown.clone()));
        let _ = shutdown.wait_for(|stop| *stop).await;
        tracing::info!("shutting down: draining in-flight requests and sockets");
        let deadline = tokio::time::Instant::now() + grace;
        state.hub.closing.fire();
        match tokio::time::timeout_at(deadline, serving).await {
            Ok(Ok(())) => {}
            Ok(Err(join)) => tracing::error!(error = %join, "server task failed"),
            Err(_) => tracing::warn!("drain deadline passed; closing remaining connections"),
        }
        if tokio::time::timeout_at(deadline, state.hub.all_closed())
            .await
            .is_err()
        {
            tracing::warn!("sockets still closing at the drain deadline");
        }
        // The decisions served until now go to the store before the process ends.
        if tokio::time::timeout_at(deadline, decisions).await.is_err() {
            tracing::warn!("decision records still being written at the drain deadline");
        }
        // So is what the L1 model learned since its last sync.
        if tokio::time::timeout_at(deadline, model).await.is_err() {
            tracing::warn!("the L1 model still being synced at the drain deadline");
        }
        // And the refused events counted since the last flush.
        if tokio::time::timeout_at(deadline, refusals).await.is_err() {
            tracing::warn!("refused events still being counted at the drain deadline");
        }
        quadrants.abort();
        state.services.actors.stop();
        Ok(())
    }
}

/// The embedded store's options from `[store]`.
pub(crate) fn sqlite_options(settings: &StoreSettings) -> SqliteOptions {
    SqliteOptions {
        location: if settings.in_memory() {
            Location::Memory
        } else {
            Location::File(settings.path.clone())
        },
        sync: settings.sync,
        timeout: Duration::from_millis(settings.timeout_ms),
        idempotency_retention: Duration::from_secs(
            u64::from(settings.idempotency_retention_days) * 86_400,
        ),
        ledger_retention: (settings.ledger_retention_days > 0)
            .then(|| Duration::from_secs(u64::from(settings.ledger_retention_days) * 86_400)),
    }
}

/// Which store the engine uses and where its data lives, for the start-up line.
fn store_description(settings: &Settings) -> String {
    let store = &settings.store;
    if store.redis_url.is_empty() {
        if store.in_memory() {
            return "embedded SQLite in memory (store.path = \":memory:\"): nothing is kept \
                    when the process exits"
                .into();
        }
        let path = std::path::absolute(&store.path).unwrap_or_else(|_| store.path.clone());
        let safe = match store.sync {
            SyncMode::Full => "sync = full: acknowledged writes survive a power loss",
            SyncMode::Normal => {
                "sync = normal: acknowledged writes survive a crash of the engine, not a power loss"
            }
        };
        format!(
            "embedded SQLite, data kept in {} ({safe}; one engine per file)",
            path.display()
        )
    } else {
        // The target's display form never shows a password.
        let target = crate::store::redis::target::RedisTarget::parse(&settings.store.redis_url)
            .map_or_else(|_| "an unparsable address".to_owned(), |t| t.to_string());
        format!(
            "Redis at {target} with key prefix `{}`",
            settings.store.key_prefix
        )
    }
}

/// Runs `body` inside an actix `System` on a multi-thread tokio runtime, the one shape in
/// which actix actors and axum share a process. `workers` bounds the runtime's threads
/// (`None`: one per core).
fn in_actix_system<T>(
    workers: Option<usize>,
    body: impl AsyncFnOnce() -> Result<T, StartError>,
) -> Result<T, StartError> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = workers {
        builder.worker_threads(n);
    }
    let runtime = builder
        .enable_all()
        .build()
        .map_err(|e| StartError::Other(e.to_string()))?;
    actix_rt::System::with_tokio_rt(move || runtime).block_on(body())
}

/// Runs the service in this thread until SIGTERM or Ctrl-C: the binary's entry point.
pub fn run(settings: Settings) -> Result<(), StartError> {
    in_actix_system(None, async || {
        let app = Application::build(settings).await?;
        let addr = app
            .local_addr()
            .map_err(|e| StartError::Other(e.to_string()))?;
        let settings = &app.state().services.settings;
        println!(
            "offer-engine listening on http://{addr} (store: {})",
            store_description(settings)
        );
        // Whoever started the engine may have stopped reading after the first line (a closed
        // pipe): the server goes on all the same.
        let _ = writeln!(
            std::io::stdout(),
            "Dashboard: http://{addr}{} (add the first admin with `offer-engine member add`)",
            crate::dashboard::PATH
        );
        tracing::info!(
            max_connections = app.limits().max_connections,
            reserved_connections = app.limits().reserved_connections,
            "accepting at most this many connections at once, and the reserve past them for the operators"
        );
        if let Some(token) = app.dev_token() {
            println!(
                "Development mode (no auth.jwt_secret): tokens are signed with the secret kept in {}; `offer-engine token` run in this folder uses it too.",
                settings.auth.dev_secret_file.display()
            );
            println!(
                "Development admin token for studio `{}` (valid 24 h):\n{token}",
                settings.auth.dev_studio
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
            let started = tx.clone();
            let outcome = in_actix_system(Some(2), async move || {
                let app = Application::build(settings).await?;
                let addr = app
                    .local_addr()
                    .map_err(|e| StartError::Other(e.to_string()))?;
                let (stop_tx, stop_rx) = watch::channel(false);
                let _ = started.send(Ok(Running {
                    addr,
                    state: app.state().clone(),
                    shutdown: stop_tx,
                }));
                app.run_until_stopped(stop_rx)
                    .await
                    .map_err(|e| StartError::Other(e.to_string()))
            });
            if let Err(e) = outcome {
                tracing::error!(error = %e, "server failed");
                // Only heard when the failure came before the server listened.
                let _ = tx.send(Err(e));
            }
        })
        .map_err(|e| StartError::Other(e.to_string()))?;
    rx.recv()
        .map_err(|_| StartError::Other("server thread exited before starting".into()))?
}
