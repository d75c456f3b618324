//! Storage: one interface, two backends.
//!
//! [`Store`] is the only way the service reaches durable state. The embedded backend
//! ([`sqlite::SqliteStore`]) is SQLite in the engine's process and is the default, so the
//! service runs with no setup and keeps its data in one file (or in memory, for tests and
//! tools); the Redis backend ([`redis::RedisStore`]) is chosen with
//! `OFFER__STORE__REDIS_URL` and lets several engine nodes share state. Both pass the same
//! conformance suite (`tests/api/store_conformance/`).
//!
//! The interface is a document store (collections of JSON documents per game, written
//! atomically in batches, with compare-and-swap for state machines) plus the two things a
//! document store cannot express: the atomic wallet step and the inter-node bus, plus
//! decision records and short-lived documents that expire by themselves. Each group of calls
//! is a trait of its own, with the types it speaks in, and each backend implements each
//! group in a file of its own:
//!
//! - [`Documents`]: documents, compare-and-swap, versioned writes, counters, and any write
//!   with a record of the same game in the same atomic step;
//! - [`Money`]: the wallet step and the reads of wallets, spends, the ledger and the day
//!   aggregates;
//! - [`Retention`]: forgetting old idempotency records and raw ledger lines;
//! - [`Decisions`]: decision records with a time to live;
//! - [`Exposures`]: the per-player totals of price experiments;
//! - [`Erasure`]: renaming an erased player's money records to a tombstone;
//! - [`Expiring`]: short-lived documents;
//! - [`Bus`]: messages between engine nodes.
//!
//! [`Store`] is all of them at once (and the readiness check), so `Arc<dyn Store>` reaches
//! every call; code generic over one concern can ask for that trait alone.

mod bus;
pub mod codec;
mod decisions;
mod documents;
mod erasure;
mod expiring;
mod exposures;
pub mod inventory;
pub mod keys;
mod money;
pub mod redis;
mod retention;
pub mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;
use uuid::Uuid;

pub use self::bus::Bus;
pub use self::decisions::{DecisionFilter, Decisions};
pub use self::documents::{Documents, Record, RecordedWrite, VersionedWrite, Write};
pub use self::erasure::{Erasure, PlayerErasure};
pub use self::expiring::Expiring;
pub use self::exposures::{Exposure, ExposureKey, ExposureTotals, Exposures};
pub use self::money::{
    COHORT_SEPARATOR, CohortFlows, DayAggregate, LedgerEntry, LeftOutDay, Money, MoneyKind,
    MoneyOp, MoneyOutcome, PLAYER_DAYS_KEPT, PlayerDayTotal, Proof,
};
pub use self::retention::{Retention, Sweep};

/// Why a store call failed. `Unavailable` is answered 503 (retry), `Corrupt` 500 (a bug or
/// foreign data, logged), `Unstorable` 422: the only one a client's input can cause, refused
/// before anything is written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The backend did not answer in time or the connection is down.
    #[error("store unavailable: {0}")]
    Unavailable(String),
    /// The backend answered something this build cannot read (corrupt or foreign data).
    #[error("store data corrupt: {0}")]
    Corrupt(String),
    /// A document over the bounds every stored document keeps (nesting depth, size; see
    /// [`codec`]), so that it always reads back. Nothing was written.
    #[error("document refused: {0}")]
    Unstorable(String),
}

/// Result of a store call.
pub type StoreResult<T> = Result<T, StoreError>;

/// Which game a collection belongs to. Redis keys of a game carry its id as a `{hash tag}`
/// so that a Redis Cluster keeps one game's keys in one slot (multi-key scripts stay legal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Deployment-wide collections (games index, credential hashes).
    Global,
    /// One game's collections.
    Game(Uuid),
}

/// A named collection of documents (one Redis hash).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Collection {
    /// Owner of the collection.
    pub scope: Scope,
    /// Collection name, for example `items`; a fixed identifier, never user input.
    pub name: &'static str,
}

impl Collection {
    /// Refuses an atomic write over collections that are not one game's (see
    /// [`Documents::put_all_versioned`] and [`Documents::write_recorded`]).
    pub fn same_game(self, other: Collection) -> StoreResult<()> {
        match (self.scope, other.scope) {
            (Scope::Game(a), Scope::Game(b)) if a == b => Ok(()),
            _ => Err(StoreError::Corrupt(format!(
                "an atomic write spans `{}` and `{}`, which are not one game's",
                self.name, other.name
            ))),
        }
    }

    /// A collection of one game.
    pub fn game(game_id: Uuid, name: &'static str) -> Self {
        Self {
            scope: Scope::Game(game_id),
            name,
        }
    }

    /// A deployment-wide collection.
    pub fn global(name: &'static str) -> Self {
        Self {
            scope: Scope::Global,
            name,
        }
    }
}

/// The storage interface: every group of calls, so that the service holds one store
/// (`Arc<dyn Store>`) and calls any of them. Implementations bound every call with a timeout
/// and answer [`StoreError::Unavailable`] instead of hanging.
#[async_trait]
pub trait Store:
    Documents
    + Money
    + Retention
    + Decisions
    + Expiring
    + Exposures
    + Erasure
    + Bus
    + Send
    + Sync
    + 'static
{
    /// Answers when the backend is reachable (`/readyz`).
    async fn ping(&self) -> StoreResult<()>;
}

/// The store as the service shares it.
pub type SharedStore = Arc<dyn Store>;
