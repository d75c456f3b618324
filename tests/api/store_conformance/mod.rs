//! One conformance suite for every store backend.
//!
//! Each case is written once as an async function over a [`Ctx`] (the store under test plus
//! a way to open more instances of the same backend) and instantiated by [`conformance!`]
//! for the embedded store in a file (`sqlite_file`), the embedded store in memory
//! (`sqlite_memory`) and Redis (`redis`; on the Redis Cluster when
//! `OFFER_TEST_STORE=redis-cluster`). The cases are grouped by what they check, one file a
//! group; every instance keeps the path `store_conformance::<case>::<backend>`. Three files check
//! what only one backend has: [`sqlite_file`] (the SQLite file across a restart, its single
//! owner, its idempotency and ledger retention), [`redis_batch`] (one wallet script call of many
//! events answers each as it would be answered alone) and [`redis_outage`] (a missing or dying
//! Redis answers `Unavailable` quickly instead of hanging).

mod bus_decisions;
mod documents;
mod economy;
mod erasure;
mod expiring_docs;
mod exposures;
mod inventories;
mod money;
mod recorded;
mod redis_batch;
mod redis_outage;
mod refunds;
mod retention;
mod sqlite_file;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use offer_domain::environment::Environment;
use offer_engine::store::redis::RedisStore;
use offer_engine::store::sqlite::{Location, SqliteOptions, SqliteStore, SyncMode};
use offer_engine::store::{
    DayAggregate, LedgerEntry, MoneyKind, MoneyOp, MoneyOutcome, SharedStore, StoreError,
};
use uuid::Uuid;

use crate::helpers::{Backend, remove_scratch, scratch_dir, shared_backend};
use crate::redis_harness::{cluster_url, redis_url, unique_prefix};

/// The per-call timeout the stores of these tests use (the bound on every answer).
const TIMEOUT: Duration = Duration::from_secs(2);

/// The store under test and how to open more of its kind.
struct Ctx {
    backend: Backend,
    prefix: String,
    store: SharedStore,
    /// The SQLite files of a file store and of its other key spaces (removed when the case
    /// ends).
    files: std::sync::Mutex<Vec<PathBuf>>,
}

impl Ctx {
    async fn new(backend: Backend) -> Self {
        let prefix = unique_prefix();
        let file = (backend == Backend::Embedded).then(|| scratch_dir().join("store.db"));
        let store = open(backend, &prefix, file.as_deref()).await;
        Self {
            backend,
            prefix,
            store,
            files: std::sync::Mutex::new(file.into_iter().collect()),
        }
    }

    /// Another node on the same data (for the embedded store, the one process there is).
    async fn peer(&self) -> SharedStore {
        match self.backend {
            Backend::Embedded | Backend::InMemory => Arc::clone(&self.store),
            Backend::Redis | Backend::RedisCluster => open(self.backend, &self.prefix, None).await,
        }
    }

    /// A store with a different key space (for the embedded store, another file).
    async fn other_space(&self) -> SharedStore {
        let file = (self.backend == Backend::Embedded).then(|| scratch_dir().join("store.db"));
        let store = open(self.backend, &unique_prefix(), file.as_deref()).await;
        self.files.lock().expect("files").extend(file);
        store
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        for file in self.files.get_mut().expect("files").iter() {
            remove_scratch(file);
        }
    }
}

/// SQLite options for `location` with the test timeout and the default retention. Files
/// are synced `normal`: the cases check what the store answers, not the disk, and the
/// randomised case's 10,000 events one after the other would otherwise wait for 10,000
/// syncs. The HTTP suite and the crash test run the default, `full`.
fn sqlite_options(location: Location) -> SqliteOptions {
    SqliteOptions {
        location,
        sync: SyncMode::Normal,
        timeout: TIMEOUT,
        idempotency_retention: Duration::from_secs(90 * 86_400),
        ledger_retention: None,
    }
}

/// Opens a SQLite store off the tokio workers, as the engine does.
async fn open_sqlite(options: SqliteOptions) -> Result<SqliteStore, StoreError> {
    tokio::task::spawn_blocking(move || SqliteStore::open(&options))
        .await
        .expect("join")
}

async fn open(backend: Backend, prefix: &str, file: Option<&Path>) -> SharedStore {
    match backend {
        Backend::Embedded => {
            let file = file.expect("a file store has a file").to_owned();
            Arc::new(
                open_sqlite(sqlite_options(Location::File(file)))
                    .await
                    .expect("open the SQLite file"),
            )
        }
        Backend::InMemory => Arc::new(
            open_sqlite(sqlite_options(Location::Memory))
                .await
                .expect("open SQLite in memory"),
        ),
        Backend::Redis => Arc::new(
            RedisStore::connect(&redis_url(), prefix, TIMEOUT)
                .await
                .expect("connect to the test Redis"),
        ),
        Backend::RedisCluster => Arc::new(
            RedisStore::connect(&cluster_url(), prefix, TIMEOUT)
                .await
                .expect("connect to the test Redis Cluster"),
        ),
    }
}

/// Instantiates one case for every backend, as `<name>::sqlite_file`, `<name>::sqlite_memory`
/// and `<name>::redis` (on the Redis Cluster when `OFFER_TEST_STORE=redis-cluster`: see
/// [`shared_backend`]).
macro_rules! conformance {
    ($name:ident, $case:path) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite_file() {
                $case(Ctx::new(Backend::Embedded).await).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite_memory() {
                $case(Ctx::new(Backend::InMemory).await).await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis() {
                $case(Ctx::new(shared_backend()).await).await;
            }
        }
    };
}

conformance!(get_put, documents::case_get_put);
conformance!(erase, erasure::case_erasure_renames_the_money_records);
conformance!(
    experiment_totals,
    exposures::case_exposures_add_up_per_player
);
conformance!(put_all, documents::case_put_all);
conformance!(
    large_list,
    documents::case_a_large_collection_lists_every_document_once
);
conformance!(insert_new, documents::case_insert_new);
conformance!(cas, documents::case_compare_and_swap);
conformance!(isolation, documents::case_isolation);
conformance!(earn_spend, money::case_earn_then_spend);
conformance!(overspend, money::case_overspend_writes_nothing);
conformance!(replay, money::case_replay_counts_once);
conformance!(kill, money::case_kill_switch_writes_nothing);
conformance!(tx_conflict, money::case_reused_tx_id_is_a_conflict);
conformance!(tx_per_player, money::case_tx_id_is_unique_per_player);
conformance!(spend, money::case_purchases_keep_lifetime_spend);
conformance!(revenue, economy::case_purchase_revenue_by_group);
conformance!(refund, refunds::case_refunds_take_revenue_back);
conformance!(refund_kill, refunds::case_a_refund_passes_the_kill_switch);
conformance!(
    refunds_at_once,
    refunds::case_many_refunds_at_once_count_once_each
);
conformance!(revenue_days, economy::case_purchases_kept_by_day_and_payer);
conformance!(
    unproven,
    economy::case_unproven_purchases_stay_out_of_revenue
);
conformance!(
    cohorts,
    economy::case_cohort_flows_are_kept_beside_the_totals
);
conformance!(
    day_caps,
    economy::case_day_caps_leave_the_excess_out_of_the_day
);
conformance!(
    day_caps_concurrent,
    economy::case_concurrent_capped_events_count_up_to_the_cap
);
conformance!(envs, money::case_environments_apart);
conformance!(import, money::case_import_skips_balance_check);
conformance!(concurrent, money::case_concurrent_spends);
conformance!(concurrent_mixed, money::case_concurrent_mixed_events);
conformance!(random, money::case_randomised_ledger_sums);
conformance!(bus, bus_decisions::case_publish_reaches_subscriber);
conformance!(
    decisions,
    bus_decisions::case_decisions_expire_and_stay_in_their_game
);
conformance!(versioned, documents::case_versioned_write_is_all_or_nothing);
conformance!(
    recorded_write,
    recorded::case_a_write_lands_with_its_record_or_neither_does
);
conformance!(
    recorded_versioned,
    recorded::case_a_versioned_write_lands_with_its_record_or_neither_does
);
conformance!(
    recorded_other_game,
    recorded::case_a_record_outside_the_writes_game_is_refused
);
conformance!(
    recorded_race,
    recorded::case_of_racing_writers_only_the_one_that_lands_is_recorded
);
conformance!(counters, documents::case_counters_add_up_across_writers);
conformance!(
    expiring,
    expiring_docs::case_expiring_documents_live_then_go
);
conformance!(
    expiring_swap,
    expiring_docs::case_expiring_swap_is_decided_once
);
conformance!(
    draft_versions,
    documents::case_concurrent_versioned_appends_get_distinct_numbers
);
conformance!(
    forget_tx,
    retention::case_idempotency_records_past_retention_are_forgotten
);
conformance!(
    trim_ledger,
    retention::case_ledger_lines_past_retention_are_dropped_and_sums_kept
);
conformance!(
    inventory_add,
    inventories::case_inventory_adds_once_per_tx_id
);
conformance!(
    inventory_use,
    inventories::case_inventory_use_takes_out_and_drops_zero
);
conformance!(
    inventory_overuse,
    inventories::case_inventory_overuse_writes_nothing
);
conformance!(
    inventory_envs,
    inventories::case_inventory_environments_apart
);
conformance!(
    inventory_concurrent,
    inventories::case_inventory_concurrent_uses
);
conformance!(
    inventory_records,
    inventories::case_inventory_remembers_recent_tx_ids_per_kind
);

fn bytes(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 1, d).expect("valid day")
}

fn at(d: u32, hour: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 1, d, hour, 0, 0)
        .single()
        .expect("valid time")
}

/// A production money op on day 1 with defaults the cases override.
fn op(game_id: Uuid, tx_id: &str, kind: MoneyKind, amount: i64) -> MoneyOp {
    MoneyOp {
        game_id,
        env: Environment::Production,
        player_id: "p1".into(),
        tx_id: tx_id.into(),
        kind,
        currency_id: if kind.is_revenue() {
            String::new()
        } else {
            "gold".into()
        },
        amount,
        ts: at(1, 12),
        holdout: false,
        import: false,
        cohort: None,
        proof: None,
        day_cap: None,
    }
}

/// The gold balance of `player` in `game`.
async fn gold(store: &SharedStore, game: Uuid, env: Environment, player: &str) -> i64 {
    store
        .balance(game, env, player, "gold")
        .await
        .expect("balance")
}

async fn apply(store: &SharedStore, op: &MoneyOp) -> MoneyOutcome {
    store.apply_money(op).await.expect("apply_money")
}

/// Balance, ledger and day-1 aggregate of one game's production data.
async fn snapshot(store: &SharedStore, game: Uuid) -> (i64, Vec<LedgerEntry>, Vec<DayAggregate>) {
    let env = Environment::Production;
    (
        gold(store, game, env, "p1").await,
        store.ledger(game, env).await.expect("ledger"),
        store
            .day_aggregates(game, env, &[day(1)])
            .await
            .expect("aggregates"),
    )
}
