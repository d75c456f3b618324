//! The shared application state every handler receives.

use std::ops::Deref;
use std::sync::Arc;

use dashmap::DashMap;
use offer_actors::ActorSystem;
use offer_domain::game::GenreTable;
use tokio::sync::{Mutex, watch};
use uuid::Uuid;

use crate::auth::AuthService;
use crate::config::Settings;
use crate::metrics::Metrics;
use crate::offers::DecisionLog;
use crate::store::SharedStore;

/// Cheap to clone: one `Arc` around everything.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

/// What [`AppState`] holds.
pub struct Inner {
    /// The validated configuration.
    pub settings: Settings,
    /// The storage backend.
    pub store: SharedStore,
    /// Credential checks and key cache.
    pub auth: AuthService,
    /// Game and session actors.
    pub actors: ActorSystem,
    /// Genre calibration.
    pub genres: GenreTable,
    /// Request counters and histograms.
    pub metrics: Metrics,
    /// This process's id on the bus, so it can tell its own messages.
    pub node_id: Uuid,
    /// Recent decisions and shadow counts.
    pub decisions: DecisionLog,
    /// Turns true when the node shuts down: every socket writes what is queued and closes
    /// with 1001. Shutdown waits (bounded) until every socket task dropped its receiver.
    pub closing: watch::Sender<bool>,
    /// Per game, a checksum of the configuration this node's sockets were last told about,
    /// so `config` is pushed only for changes a client can see.
    pub announced_config: DashMap<Uuid, u32>,
    /// One writer at a time per game on this node, so a catalogue read-modify-write (values
    /// depend on every item) never loses a concurrent change. Readers never take it.
    write_locks: DashMap<Uuid, Arc<Mutex<()>>>,
}

impl AppState {
    /// Wraps the parts.
    pub fn new(
        settings: Settings,
        store: SharedStore,
        auth: AuthService,
        actors: ActorSystem,
        genres: GenreTable,
        metrics: Metrics,
    ) -> Self {
        let settings_capacity = settings.offers.decision_log_capacity;
        Self(Arc::new(Inner {
            settings,
            store,
            auth,
            actors,
            genres,
            metrics,
            node_id: Uuid::new_v4(),
            decisions: DecisionLog::new(settings_capacity),
            closing: watch::channel(false).0,
            announced_config: DashMap::new(),
            write_locks: DashMap::new(),
        }))
    }

    /// The write lock of one game.
    pub fn write_lock(&self, game_id: Uuid) -> Arc<Mutex<()>> {
        self.write_locks.entry(game_id).or_default().clone()
    }
}

impl Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}
