//! Storage: one interface, two backends.
//!
//! [`Store`] is the only way the service reaches durable state. The embedded backend
//! ([`sqlite::SqliteStore`]) is SQLite in the engine's process and is the default, so the
//! service runs with no setup and keeps its data in one file (or in memory, for tests and
//! tools); the Redis backend ([`redis::RedisStore`]) is chosen with
//! `OFFER__STORE__REDIS_URL` and lets several engine nodes share state. Both pass the same
//! conformance suite (`tests/api/store_conformance.rs`).
//!
//! The interface is a document store (collections of JSON documents per game, written
//! atomically in batches, with compare-and-swap for state machines) plus the two things a
//! document store cannot express: the atomic wallet step and the inter-node bus, plus
//! decision records and short-lived documents that expire by themselves.

pub mod codec;
pub mod inventory;
pub mod keys;
pub mod redis;
pub mod sqlite;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use offer_domain::environment::Environment;
use offer_wire::bus::BusMessage;
use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;
use uuid::Uuid;

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
    /// Refuses a versioned write whose two collections are not one game's (see
    /// [`Store::put_all_versioned`]).
    pub fn same_game(self, other: Collection) -> StoreResult<()> {
        match (self.scope, other.scope) {
            (Scope::Game(a), Scope::Game(b)) if a == b => Ok(()),
            _ => Err(StoreError::Corrupt(format!(
                "a versioned write spans `{}` and `{}`, which are not one game's",
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

/// The kind of a wallet change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MoneyKind {
    /// Currency enters the wallet (faucet).
    Earned,
    /// Currency leaves the wallet (sink); refused above the balance.
    Spent,
    /// Real-money revenue in cents; no wallet balance changes.
    Purchase,
}

impl MoneyKind {
    /// The name of the SDK event that records this kind, as the API and every export call it
    /// (`currency_earned`, `currency_spent`, `purchase`). The store keeps its own shorter
    /// names (serde's), which stored data depends on.
    pub fn event_name(self) -> &'static str {
        match self {
            Self::Earned => "currency_earned",
            Self::Spent => "currency_spent",
            Self::Purchase => "purchase",
        }
    }
}

/// One money event to apply atomically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MoneyOp {
    /// Game the wallet belongs to.
    pub game_id: Uuid,
    /// Production or sandbox.
    pub env: Environment,
    /// External player id.
    pub player_id: String,
    /// Idempotency key: the same `tx_id` twice counts once.
    pub tx_id: String,
    /// What happens.
    pub kind: MoneyKind,
    /// The currency (empty for purchases).
    pub currency_id: String,
    /// Units earned or spent, or cents paid for a purchase; always positive.
    pub amount: i64,
    /// When it happened; picks the per-day aggregate bucket.
    pub ts: DateTime<Utc>,
    /// Whether the holdout group made it (for ARPU by group).
    pub holdout: bool,
    /// Imported history: no balance check (history has no opening balance).
    pub import: bool,
    /// The player's install cohort (`YYYY-Www`, its install day's ISO week), when known:
    /// earned and spent units also count in that cohort's day aggregate, so FSR can be cut
    /// by cohort without reading the ledger.
    pub cohort: Option<String>,
}

impl MoneyOp {
    /// What a replay of this `tx_id` must match: the same player, kind, currency and
    /// amount. A different change under a used `tx_id` is a conflict, not a duplicate.
    pub fn fingerprint(&self) -> String {
        format!(
            "{}|{:?}|{}|{}",
            self.player_id, self.kind, self.currency_id, self.amount
        )
    }
}

/// The answer to a [`MoneyOp`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum MoneyOutcome {
    /// Applied now; the wallet's new balance of that currency.
    Applied {
        /// Balance after the change.
        balance: i64,
    },
    /// This `tx_id` was applied before; nothing changed. The stored first result.
    Duplicate {
        /// Balance recorded when it was first applied.
        balance: i64,
    },
    /// A spend above the balance; nothing changed.
    InsufficientFunds {
        /// Current balance.
        balance: i64,
    },
    /// The game's kill switch is at level 3 (SDK off); nothing changed.
    KillSwitch,
    /// The player already used this `tx_id` for a different change (another kind, currency
    /// or amount); nothing changed, and the first change is not revealed.
    TxConflict,
}

/// One ledger line (append-only; the basis of FSR).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Idempotency key of the change.
    pub tx_id: String,
    /// External player id.
    pub player_id: String,
    /// What happened.
    pub kind: MoneyKind,
    /// Currency (empty for purchases).
    pub currency_id: String,
    /// Positive amount.
    pub amount: i64,
    /// Balance of that currency after the change (0 for purchases).
    pub balance_after: i64,
    /// Event time.
    pub ts: DateTime<Utc>,
}

/// Per game, environment and UTC day: units earned and spent by currency, revenue by group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DayAggregate {
    /// Units earned per currency.
    pub earned: std::collections::BTreeMap<String, i64>,
    /// Units spent per currency.
    pub spent: std::collections::BTreeMap<String, i64>,
    /// Real-money revenue in cents from treated players.
    pub revenue_treatment_cents: i64,
    /// Real-money revenue in cents from holdout players.
    pub revenue_control_cents: i64,
    /// Earned and spent units of each install cohort (`YYYY-Www`) that moved currency.
    pub cohorts: std::collections::BTreeMap<String, CohortFlows>,
}

/// Units earned and spent by the players of one install cohort on one day.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CohortFlows {
    /// Units earned per currency.
    pub earned: std::collections::BTreeMap<String, i64>,
    /// Units spent per currency.
    pub spent: std::collections::BTreeMap<String, i64>,
}

/// Separates a cohort from a currency in a stored day-aggregate field: `gold@2026-W40`.
/// Currency ids are snake_case, so a field with it is never a game-wide total.
pub const COHORT_SEPARATOR: char = '@';

/// The storage interface. Implementations bound every call with a timeout and answer
/// [`StoreError::Unavailable`] instead of hanging.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Answers when the backend is reachable (`/readyz`).
    async fn ping(&self) -> StoreResult<()>;

    /// One document, if present.
    async fn get(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>>;

    /// Every document of a collection, in no particular order.
    async fn list(&self, coll: Collection) -> StoreResult<Vec<(String, Vec<u8>)>>;

    /// Writes every entry in one atomic step: all or nothing.
    async fn put_all(&self, coll: Collection, entries: Vec<(String, Vec<u8>)>) -> StoreResult<()>;

    /// Writes the document only if absent; `false` when it already existed.
    async fn insert_new(&self, coll: Collection, id: &str, value: Vec<u8>) -> StoreResult<bool>;

    /// Replaces the document only if it still equals `expected` (`None`: absent); `false`
    /// when someone else changed it first. The basis of every state machine (approvals).
    async fn compare_and_swap(
        &self,
        coll: Collection,
        id: &str,
        expected: Option<&[u8]>,
        new: Vec<u8>,
    ) -> StoreResult<bool>;

    /// Writes every entry of `coll` and sets the document `version_id` of `version` to
    /// `new_version`, in one atomic step, only if that document still equals `expected`
    /// (`None`: absent); `false`, with nothing written, when another writer changed it first.
    /// The compare-and-swap of a read-modify-write over a whole collection across nodes (the
    /// catalogue, whose values depend on every item): read the version, then the
    /// collection, compute, write here, and start again on `false`. Both collections must
    /// belong to the same game (on a Redis Cluster, one slot); anything else is refused as
    /// [`StoreError::Corrupt`] (a bug of the caller).
    async fn put_all_versioned(
        &self,
        version: Collection,
        version_id: &str,
        expected: Option<&[u8]>,
        new_version: Vec<u8>,
        coll: Collection,
        entries: Vec<(String, Vec<u8>)>,
    ) -> StoreResult<bool>;

    /// Adds each delta to the counter of that name in `coll`, in one atomic step, and
    /// returns every counter of `coll` after it (an empty `deltas` only reads them). A
    /// counter is a document holding a decimal integer; one never written counts 0. Counts
    /// that every node adds to and reads back (the L1 model's statistics) live here.
    async fn add_counters(
        &self,
        coll: Collection,
        deltas: Vec<(String, i64)>,
    ) -> StoreResult<Vec<(String, i64)>>;

    /// Removes a document; `false` when it was absent.
    async fn delete(&self, coll: Collection, id: &str) -> StoreResult<bool>;

    /// Stores a game's kill-switch level where the wallet step reads it.
    async fn set_kill_level(&self, game_id: Uuid, level: u8) -> StoreResult<()>;

    /// Applies one money event atomically: idempotency, balance and kill-switch checks
    /// before the first write, then balance (or lifetime spend, for a purchase), ledger
    /// entry and day aggregate together.
    async fn apply_money(&self, op: &MoneyOp) -> StoreResult<MoneyOutcome>;

    /// Forgets at most `limit` idempotency records of one game and environment whose events
    /// were received before `before`, oldest first; returns how many it forgot (fewer than
    /// `limit`: none older is left). A retried event whose record is gone counts again. The
    /// embedded store sweeps its records itself on its writer (by ledger id ranges, with
    /// the raw ledger lines) and answers 0 here.
    async fn forget_tx_before(
        &self,
        game_id: Uuid,
        env: Environment,
        before: chrono::DateTime<chrono::Utc>,
        limit: usize,
    ) -> StoreResult<usize>;

    /// Drops at most `limit` raw ledger lines of one game and environment received before
    /// `before`, oldest first; returns how many (fewer than `limit`: none older is left).
    /// Day aggregates, balances and lifetime spends are kept. The embedded store sweeps its
    /// lines itself on its writer and answers 0 here.
    async fn trim_ledger_before(
        &self,
        game_id: Uuid,
        env: Environment,
        before: chrono::DateTime<chrono::Utc>,
        limit: usize,
    ) -> StoreResult<usize>;

    /// A player's lifetime real-money spend in cents (the sum of its applied purchases,
    /// kept by the same atomic step).
    async fn spend_cents(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
    ) -> StoreResult<i64>;

    /// Every player of one game and environment with a lifetime real-money spend, and that
    /// spend in cents (players who never paid are absent): the revenue side of the holdout
    /// comparison, one read for the whole game.
    async fn spends(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<(String, i64)>>;

    /// A player's balance of one currency (0 when never touched).
    async fn balance(
        &self,
        game_id: Uuid,
        env: Environment,
        player_id: &str,
        currency_id: &str,
    ) -> StoreResult<i64>;

    /// The ledger of one game and environment in append order.
    async fn ledger(&self, game_id: Uuid, env: Environment) -> StoreResult<Vec<LedgerEntry>>;

    /// Each payer's real-money spend in cents on each of the given UTC days (the day of the
    /// purchase's `ts`, as in the day aggregates), one list per day in the order asked, payers
    /// in no particular order. What lets the holdout comparison leave days out and a month be
    /// billed on its own days.
    async fn day_revenues(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[chrono::NaiveDate],
    ) -> StoreResult<Vec<Vec<(String, i64)>>>;

    /// Day aggregates for the given UTC days (missing days are empty).
    async fn day_aggregates(
        &self,
        game_id: Uuid,
        env: Environment,
        days: &[chrono::NaiveDate],
    ) -> StoreResult<Vec<DayAggregate>>;

    /// Stores decision records of one game in one step, each a JSON document under its
    /// decision id, kept for `ttl` from now and then forgotten (an id written again is
    /// replaced and kept `ttl` from the new write). Nodes write their decisions here in
    /// batches, behind the responses, so that any node can show any decision.
    async fn put_decisions(
        &self,
        game_id: Uuid,
        records: Vec<(Uuid, Vec<u8>)>,
        ttl: std::time::Duration,
    ) -> StoreResult<()>;

    /// A decision record of a game, while its time to live lasts.
    async fn get_decision(&self, game_id: Uuid, decision_id: Uuid) -> StoreResult<Option<Vec<u8>>>;

    /// Writes a document that the store forgets `ttl` after this write, only if no live
    /// document has this id (one past its time counts as absent); `false` when one does.
    /// Short-lived state every node must see, such as device sign-in codes, lives here.
    async fn insert_expiring(
        &self,
        coll: Collection,
        id: &str,
        value: Vec<u8>,
        ttl: std::time::Duration,
    ) -> StoreResult<bool>;

    /// A document written by [`Store::insert_expiring`], while it lives.
    async fn get_expiring(&self, coll: Collection, id: &str) -> StoreResult<Option<Vec<u8>>>;

    /// Replaces a live expiring document only if it still equals `expected`, keeping its
    /// expiry; `false` when another writer changed it first, or it expired or never existed.
    /// The compare-and-swap of short-lived state machines (a sign-in approved once).
    async fn swap_expiring(
        &self,
        coll: Collection,
        id: &str,
        expected: &[u8],
        new: Vec<u8>,
    ) -> StoreResult<bool>;

    /// Sends a message to every node, this one included.
    async fn publish(&self, msg: &BusMessage) -> StoreResult<()>;

    /// Receives every bus message from now on.
    fn subscribe(&self) -> broadcast::Receiver<BusMessage>;
}

/// The store as the service shares it.
pub type SharedStore = Arc<dyn Store>;
