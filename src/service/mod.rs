//! The use cases: one module per resource. Services validate with the domain's rules, read
//! and write the [`Store`](crate::store::Store), drive the actors and tell the other nodes
//! over the bus. They know nothing of HTTP or WebSocket: they take typed inputs and return
//! [`ServiceResult`], which the transport maps to answers in one place.
//!
//! Every change to a game goes through [`Services::commit`], so the sequence "take the
//! game's write lock, write the store, publish the change to the game's actor, notify the
//! other nodes" is written once.

pub mod access;
pub mod approval;
pub mod audit;
pub mod authoring;
pub mod economy;
pub mod error;
pub mod game;
pub mod play;
pub mod refusals;
pub mod studio;
#[cfg(test)]
mod test_support;
pub mod workers;
mod write;

use std::ops::Deref;
use std::sync::Arc;

use dashmap::DashMap;
use economy::figures_cache::FiguresCache;
use offer_actors::ActorSystem;
use offer_domain::game::GenreTable;
use offer_domain::revenue_share::Plan;
use tokio::sync::Mutex;
use uuid::Uuid;

use crate::config::Settings;
use crate::store::SharedStore;
pub use error::{ServiceError, ServiceResult};
pub use play::decision_log::DecisionLog;
pub use write::Committed;

/// What every use case works with. Cheap to clone: one `Arc`.
#[derive(Clone)]
pub struct Services(Arc<Inner>);

/// The parts of [`Services`].
pub struct Inner {
    /// The validated configuration (limits, timeouts, the offer settings).
    pub settings: Settings,
    /// The storage backend.
    pub store: SharedStore,
    /// Game actors and open sessions of this node.
    pub actors: ActorSystem,
    /// Genre calibration: default templates and healthy FSR ranges.
    pub genres: GenreTable,
    /// The plans table of the revenue share.
    pub plans: Vec<Plan>,
    /// This node's id on the bus, so the bus follower can tell its own messages.
    pub node_id: Uuid,
    /// Recent decisions and shadow counts of this node, and the outbox of decisions on
    /// their way to the store.
    pub decisions: DecisionLog,
    /// One writer at a time per game on this node (across nodes the catalogue's version
    /// keeps writers apart: see `items.rs`), so a catalogue read-modify-write (values
    /// depend on every item) never loses a concurrent change. Readers never take it.
    write_locks: DashMap<Uuid, Arc<Mutex<()>>>,
    /// Each game's holdout comparison, reused for `economy.figures_cache_ms`.
    pub figures: FiguresCache<economy::holdout::Comparison>,
    /// Each game's derived per-player day caps, derived again every
    /// `economy.day_caps_refresh_ms`.
    pub day_caps: FiguresCache<economy::day_caps::DerivedCaps>,
    /// This node's queue of custom-page preview builds.
    pub previews: authoring::previews::PreviewQueue,
    /// This node's store-receipt verifiers.
    pub receipts: play::receipts::VerifyPool,
    /// This node's refused events not yet added to the store's counters.
    pub refusals: play::refused_events::RefusalTally,
    /// The players this node has counted as playing today.
    pub sightings: economy::population::Sightings,
}

impl Services {
    /// Assembles the services over a store and the started actor system.
    pub fn new(
        settings: Settings,
        store: SharedStore,
        actors: ActorSystem,
        genres: GenreTable,
        plans: Vec<Plan>,
    ) -> Self {
        let figures_ttl = settings.economy.figures_cache_ms;
        let day_caps_ttl = settings.economy.day_caps_refresh_ms;
        let decisions = DecisionLog::new(
            settings.offers.decision_log_capacity,
            settings.offers.decision_outbox,
        );
        let previews = authoring::previews::PreviewQueue::new(&settings.authoring);
        let receipts = play::receipts::VerifyPool::new(
            apple_roots(&settings),
            settings.stores.verifiers(),
            settings.stores.verify_queue,
        );
        Self(Arc::new(Inner {
            previews,
            receipts,
            settings,
            store,
            actors,
            genres,
            plans,
            node_id: Uuid::new_v4(),
            decisions,
            write_locks: DashMap::new(),
            figures: FiguresCache::new(std::time::Duration::from_millis(figures_ttl)),
            day_caps: FiguresCache::new(std::time::Duration::from_millis(day_caps_ttl)),
            refusals: play::refused_events::RefusalTally::default(),
            sightings: economy::population::Sightings::default(),
        }))
    }

    /// Whether the store answers: the readiness probe.
    pub async fn ready(&self) -> ServiceResult<()> {
        Ok(self.store.ping().await?)
    }

    /// The write lock of one game on this node.
    pub(crate) fn write_lock(&self, game_id: Uuid) -> Arc<Mutex<()>> {
        self.write_locks.entry(game_id).or_default().clone()
    }
}

impl Deref for Services {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

/// Waits until the shutdown signal turns true (or its sender is gone): the stop condition of
/// every background task of the service layer.
pub(crate) async fn stopped(shutdown: &mut tokio::sync::watch::Receiver<bool>) {
    // The borrow the wait returns is dropped here: it must not live across an await.
    let _ = shutdown.wait_for(|stop| *stop).await;
}

/// Apple Root CA - G3 and the roots of `stores.app_store_roots`. The files were checked at
/// start; one that no longer reads is left out and said so, never trusted in part.
fn apple_roots(settings: &Settings) -> offer_receipts::AppleRoots {
    let mut roots = offer_receipts::AppleRoots::apple();
    match settings.app_store_roots() {
        Ok(extra) => extra.into_iter().for_each(|der| roots.add_der(der)),
        Err(err) => tracing::error!(error = %err, "extra App Store roots left out"),
    }
    roots
}
