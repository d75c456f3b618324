//! A short-lived, single-flight cache of each game's holdout comparison.
//!
//! The comparison reads every player of a game and environment and sorts the payers: cheap
//! for one read, wasteful for a dashboard that refreshes every few seconds or for several
//! staff looking at once. Each `(game, environment)` has one slot behind an async mutex:
//! the first reader past the slot's age computes, the readers that arrive meanwhile wait
//! for that one computation and share its result, and reads within
//! `economy.figures_cache_ms` of it are answered from the slot. The computation itself
//! runs on a blocking thread (see the holdout service), so the request threads that serve
//! offers never wait for it.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dashmap::DashMap;
use offer_domain::environment::Environment;
use tokio::sync::Mutex;
use uuid::Uuid;

use crate::service::ServiceResult;

/// One slot: when it was computed and what.
type Slot<V> = Arc<Mutex<Option<(Instant, Arc<V>)>>>;

/// Values of type `V` per game and environment, each reused for `ttl`.
pub struct FiguresCache<V> {
    ttl: Duration,
    slots: DashMap<(Uuid, Environment), Slot<V>>,
}

impl<V> FiguresCache<V> {
    /// A cache that reuses a value for `ttl` (zero: every read computes).
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            slots: DashMap::new(),
        }
    }

    /// The value of `(game_id, env)`: the cached one while it is younger than the ttl,
    /// otherwise the result of `compute`, which is then cached. A failed computation is not
    /// cached: the next reader tries again.
    pub async fn get_or_compute<F, Fut>(
        &self,
        game_id: Uuid,
        env: Environment,
        compute: F,
    ) -> ServiceResult<Arc<V>>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ServiceResult<V>>,
    {
        let slot = self.slots.entry((game_id, env)).or_default().clone();
        let mut held = slot.lock().await;
        if let Some((at, value)) = held.as_ref()
            && at.elapsed() < self.ttl
        {
            return Ok(value.clone());
        }
        let started = Instant::now();
        let value = Arc::new(compute().await?);
        *held = Some((started, value.clone()));
        Ok(value)
    }
}
