//! One conformance suite for every store backend.
//!
//! Each case is written once as an async function over a [`Ctx`] (the store under test plus
//! a way to open more instances of the same backend) and instantiated by [`conformance!`]
//! for the embedded store in a file (`sqlite_file`), the embedded store in memory
//! (`sqlite_memory`) and Redis (`redis`; on the Redis Cluster when
//! `OFFER_TEST_STORE=redis-cluster`). The cases after them check what only one backend has:
//! the SQLite file across a restart, its single owner, its idempotency and ledger retention; and that
//! a missing or dying Redis answers `Unavailable` quickly instead of hanging.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use offer_domain::environment::Environment;
use offer_engine::store::inventory::{self, InventoryChange, InventoryOp, InventoryOutcome, Items};
use offer_engine::store::redis::RedisStore;
use offer_engine::store::sqlite::{Location, SqliteOptions, SqliteStore, SyncMode};
use offer_engine::store::{
    BusMessage, Collection, DayAggregate, LedgerEntry, MoneyKind, MoneyOp, MoneyOutcome,
    SharedStore, Store, StoreError,
};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uuid::Uuid;

use crate::helpers::{Backend, remove_scratch, scratch_dir, shared_backend};
use crate::redis_harness::{cluster_url, redis_url, start_on, start_private, unique_prefix};

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
    ($name:ident, $case:ident) => {
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

conformance!(get_put, case_get_put);
conformance!(put_all, case_put_all);
conformance!(
    large_list,
    case_a_large_collection_lists_every_document_once
);
conformance!(insert_new, case_insert_new);
conformance!(cas, case_compare_and_swap);
conformance!(isolation, case_isolation);
conformance!(earn_spend, case_earn_then_spend);
conformance!(overspend, case_overspend_writes_nothing);
conformance!(replay, case_replay_counts_once);
conformance!(kill, case_kill_switch_writes_nothing);
conformance!(tx_conflict, case_reused_tx_id_is_a_conflict);
conformance!(spend, case_purchases_keep_lifetime_spend);
conformance!(revenue, case_purchase_revenue_by_group);
conformance!(revenue_days, case_purchases_kept_by_day_and_payer);
conformance!(cohorts, case_cohort_flows_are_kept_beside_the_totals);
conformance!(envs, case_environments_apart);
conformance!(import, case_import_skips_balance_check);
conformance!(concurrent, case_concurrent_spends);
conformance!(random, case_randomised_ledger_sums);
conformance!(bus, case_publish_reaches_subscriber);
conformance!(decisions, case_decisions_expire_and_stay_in_their_game);
conformance!(versioned, case_versioned_write_is_all_or_nothing);
conformance!(counters, case_counters_add_up_across_writers);
conformance!(expiring, case_expiring_documents_live_then_go);
conformance!(expiring_swap, case_expiring_swap_is_decided_once);
conformance!(
    draft_versions,
    case_concurrent_versioned_appends_get_distinct_numbers
);
conformance!(
    forget_tx,
    case_idempotency_records_past_retention_are_forgotten
);
conformance!(
    trim_ledger,
    case_ledger_lines_past_retention_are_dropped_and_sums_kept
);
conformance!(inventory_add, case_inventory_adds_once_per_tx_id);
conformance!(inventory_use, case_inventory_use_takes_out_and_drops_zero);
conformance!(inventory_overuse, case_inventory_overuse_writes_nothing);
conformance!(inventory_envs, case_inventory_environments_apart);
conformance!(inventory_concurrent, case_inventory_concurrent_uses);
conformance!(
    inventory_records,
    case_inventory_remembers_recent_tx_ids_per_kind
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
        currency_id: if kind == MoneyKind::Purchase {
            String::new()
        } else {
            "gold".into()
        },
        amount,
        ts: at(1, 12),
        holdout: false,
        import: false,
        cohort: None,
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

async fn case_a_large_collection_lists_every_document_once(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::game(Uuid::new_v4(), "players_production");
    // More than one page of a paged listing.
    let n = 25_000;
    for chunk in (0..n).collect::<Vec<_>>().chunks(5_000) {
        let entries = chunk
            .iter()
            .map(|i| (format!("player_{i}"), i.to_string().into_bytes()))
            .collect();
        s.put_all(coll, entries).await.expect("put");
    }
    let listed = s.list(coll).await.expect("list");
    assert_eq!(listed.len(), n);
    let ids: std::collections::HashSet<&str> = listed.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids.len(), n);
    assert!(
        listed
            .iter()
            .all(|(id, value)| id.strip_prefix("player_").map(str::as_bytes)
                == Some(value.as_slice()))
    );
}

async fn case_get_put(ctx: Ctx) {
    let s = &ctx.store;
    let items = Collection::game(Uuid::new_v4(), "items");
    assert_eq!(s.get(items, "a").await.expect("get"), None);
    assert!(s.list(items).await.expect("list").is_empty());
    s.put_all(items, vec![("a".into(), bytes("{\"v\":1}"))])
        .await
        .expect("put");
    assert_eq!(
        s.get(items, "a").await.expect("get"),
        Some(bytes("{\"v\":1}"))
    );
    assert_eq!(
        s.list(items).await.expect("list"),
        vec![("a".to_string(), bytes("{\"v\":1}"))]
    );
    assert!(s.delete(items, "a").await.expect("delete"));
    assert!(!s.delete(items, "a").await.expect("delete again"));
    assert_eq!(s.get(items, "a").await.expect("get"), None);
    s.ping().await.expect("ping");
}

async fn case_put_all(ctx: Ctx) {
    let s = &ctx.store;
    let items = Collection::game(Uuid::new_v4(), "items");
    s.put_all(items, Vec::new()).await.expect("empty put");
    let first: Vec<_> = (0..50)
        .map(|i| (format!("id{i}"), bytes(&format!("old{i}"))))
        .collect();
    s.put_all(items, first).await.expect("put");
    let second: Vec<_> = (25..75)
        .map(|i| (format!("id{i}"), bytes(&format!("new{i}"))))
        .collect();
    s.put_all(items, second).await.expect("overwrite");
    let mut all = s.list(items).await.expect("list");
    all.sort();
    assert_eq!(all.len(), 75);
    let map: HashMap<_, _> = all.into_iter().collect();
    assert_eq!(map["id0"], bytes("old0"));
    assert_eq!(map["id24"], bytes("old24"));
    assert_eq!(map["id25"], bytes("new25"));
    assert_eq!(map["id74"], bytes("new74"));
}

async fn case_insert_new(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::global("keys");
    assert!(
        s.insert_new(coll, "k", bytes("first"))
            .await
            .expect("insert")
    );
    assert!(
        !s.insert_new(coll, "k", bytes("second"))
            .await
            .expect("insert")
    );
    assert_eq!(s.get(coll, "k").await.expect("get"), Some(bytes("first")));
}

async fn case_counters_add_up_across_writers(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::game(Uuid::new_v4(), "l1_model");
    let sorted = |mut v: Vec<(String, i64)>| {
        v.sort();
        v
    };
    assert!(
        s.add_counters(coll, Vec::new())
            .await
            .expect("read")
            .is_empty()
    );
    let first = s
        .add_counters(coll, vec![("a".into(), 2), ("b".into(), 5)])
        .await
        .expect("add");
    assert_eq!(sorted(first), [("a".to_owned(), 2), ("b".to_owned(), 5)]);
    // Concurrent writers (another instance of the backend too) never lose an addition.
    let peer = ctx.peer().await;
    let mut writers = Vec::new();
    for i in 0..20 {
        let store = if i % 2 == 0 { s.clone() } else { peer.clone() };
        writers.push(tokio::spawn(async move {
            store
                .add_counters(coll, vec![("a".into(), 1), ("c".into(), 3)])
                .await
                .expect("add")
        }));
    }
    for w in writers {
        w.await.expect("join");
    }
    let all = sorted(s.add_counters(coll, Vec::new()).await.expect("read"));
    assert_eq!(
        all,
        [
            ("a".to_owned(), 22),
            ("b".to_owned(), 5),
            ("c".to_owned(), 60)
        ]
    );
    // A counter is a document like any other.
    assert_eq!(s.get(coll, "b").await.expect("get"), Some(bytes("5")));
}

async fn case_compare_and_swap(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::game(Uuid::new_v4(), "approvals");
    // Absent: only `None` matches.
    assert!(
        !s.compare_and_swap(coll, "a", Some(b"x"), bytes("v1"))
            .await
            .expect("cas")
    );
    assert_eq!(s.get(coll, "a").await.expect("get"), None);
    assert!(
        s.compare_and_swap(coll, "a", None, bytes("v1"))
            .await
            .expect("cas")
    );
    assert!(
        !s.compare_and_swap(coll, "a", None, bytes("v1b"))
            .await
            .expect("cas")
    );
    // Present: succeeds once; the stale expectation then fails.
    assert!(
        s.compare_and_swap(coll, "a", Some(b"v1"), bytes("v2"))
            .await
            .expect("cas")
    );
    assert!(
        !s.compare_and_swap(coll, "a", Some(b"v1"), bytes("v3"))
            .await
            .expect("cas")
    );
    assert_eq!(s.get(coll, "a").await.expect("get"), Some(bytes("v2")));
}

async fn case_isolation(ctx: Ctx) {
    let (g1, g2) = (Uuid::new_v4(), Uuid::new_v4());
    let s = &ctx.store;
    let other = ctx.other_space().await;
    s.put_all(
        Collection::game(g1, "items"),
        vec![("x".into(), bytes("g1"))],
    )
    .await
    .expect("put");
    s.put_all(
        Collection::global("games"),
        vec![("x".into(), bytes("global"))],
    )
    .await
    .expect("put");
    assert_eq!(
        s.get(Collection::game(g2, "items"), "x")
            .await
            .expect("get"),
        None
    );
    assert_eq!(
        s.get(Collection::game(g1, "bundles"), "x")
            .await
            .expect("get"),
        None
    );
    for coll in [Collection::game(g1, "items"), Collection::global("games")] {
        assert_eq!(other.get(coll, "x").await.expect("get"), None);
        assert!(other.list(coll).await.expect("list").is_empty());
    }
    apply(s, &op(g1, "t1", MoneyKind::Earned, 10)).await;
    assert_eq!(gold(&other, g1, Environment::Production, "p1").await, 0);
    assert_eq!(gold(s, g2, Environment::Production, "p1").await, 0);
}

async fn case_earn_then_spend(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    assert_eq!(
        apply(s, &op(g, "e1", MoneyKind::Earned, 100)).await,
        MoneyOutcome::Applied { balance: 100 }
    );
    assert_eq!(
        apply(s, &op(g, "s1", MoneyKind::Spent, 30)).await,
        MoneyOutcome::Applied { balance: 70 }
    );
    let (balance, ledger, days) = snapshot(s, g).await;
    assert_eq!(balance, 70);
    assert_eq!(ledger.len(), 2);
    assert_eq!(ledger[0].tx_id, "e1");
    assert_eq!(ledger[0].kind, MoneyKind::Earned);
    assert_eq!(ledger[0].balance_after, 100);
    assert_eq!(ledger[1].kind, MoneyKind::Spent);
    assert_eq!(ledger[1].amount, 30);
    assert_eq!(ledger[1].balance_after, 70);
    assert_eq!(ledger[1].ts, at(1, 12));
    assert_eq!(days[0].earned, BTreeMap::from([("gold".to_string(), 100)]));
    assert_eq!(days[0].spent, BTreeMap::from([("gold".to_string(), 30)]));
    // A day without events is empty.
    let other_day = s
        .day_aggregates(g, Environment::Production, &[day(2)])
        .await
        .expect("aggregates");
    assert_eq!(other_day, vec![DayAggregate::default()]);
}

async fn case_overspend_writes_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "e1", MoneyKind::Earned, 50)).await;
    let before = snapshot(s, g).await;
    assert_eq!(
        apply(s, &op(g, "s1", MoneyKind::Spent, 51)).await,
        MoneyOutcome::InsufficientFunds { balance: 50 }
    );
    assert_eq!(snapshot(s, g).await, before);
    // The refused tx id was not recorded: it may be retried once funds arrive.
    apply(s, &op(g, "e2", MoneyKind::Earned, 1)).await;
    assert_eq!(
        apply(s, &op(g, "s1", MoneyKind::Spent, 51)).await,
        MoneyOutcome::Applied { balance: 0 }
    );
}

async fn case_reused_tx_id_is_a_conflict(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let earn = op(g, "e1", MoneyKind::Earned, 40);
    assert_eq!(apply(s, &earn).await, MoneyOutcome::Applied { balance: 40 });
    // The same tx_id with another amount, or by another player, changes nothing and does
    // not reveal the first change.
    let other_amount = op(g, "e1", MoneyKind::Earned, 41);
    assert_eq!(apply(s, &other_amount).await, MoneyOutcome::TxConflict);
    let other_player = MoneyOp {
        player_id: "p2".into(),
        ..earn.clone()
    };
    assert_eq!(apply(s, &other_player).await, MoneyOutcome::TxConflict);
    let (balance, ledger, _) = snapshot(s, g).await;
    assert_eq!((balance, ledger.len()), (40, 1));
    assert_eq!(gold(s, g, Environment::Production, "p2").await, 0);
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Duplicate { balance: 40 }
    );
}

async fn case_purchases_keep_lifetime_spend(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let buy = op(g, "b1", MoneyKind::Purchase, 499);
    assert_eq!(apply(s, &buy).await, MoneyOutcome::Applied { balance: 0 });
    assert_eq!(apply(s, &buy).await, MoneyOutcome::Duplicate { balance: 0 });
    apply(s, &op(g, "b2", MoneyKind::Purchase, 1000)).await;
    let env = Environment::Production;
    assert_eq!(s.spend_cents(g, env, "p1").await.expect("spend"), 1499);
    assert_eq!(s.spend_cents(g, env, "p2").await.expect("spend"), 0);
    assert_eq!(
        s.spend_cents(g, Environment::Sandbox, "p1")
            .await
            .expect("spend"),
        0
    );
    // Every payer of the game in one read; non-payers and other environments are absent.
    let mut buyer2 = op(g, "b3", MoneyKind::Purchase, 250);
    buyer2.player_id = "p3".into();
    apply(s, &buyer2).await;
    let mut all = s.spends(g, env).await.expect("spends");
    all.sort();
    assert_eq!(all, [("p1".to_owned(), 1499), ("p3".to_owned(), 250)]);
    assert!(
        s.spends(g, Environment::Sandbox)
            .await
            .expect("spends")
            .is_empty()
    );
}

async fn case_cohort_flows_are_kept_beside_the_totals(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let with_cohort = |tx: &str, kind: MoneyKind, amount: i64, cohort: Option<&str>| {
        let mut o = op(g, tx, kind, amount);
        o.cohort = cohort.map(str::to_owned);
        o.import = true;
        o
    };
    for o in [
        with_cohort("a", MoneyKind::Earned, 300, Some("2026-W40")),
        with_cohort("b", MoneyKind::Spent, 100, Some("2026-W40")),
        with_cohort("c", MoneyKind::Earned, 50, Some("2026-W41")),
        with_cohort("d", MoneyKind::Earned, 7, None),
        with_cohort("e", MoneyKind::Purchase, 999, Some("2026-W40")),
    ] {
        apply(s, &o).await;
    }
    // A replay counts once in its cohort too.
    apply(
        s,
        &with_cohort("a", MoneyKind::Earned, 300, Some("2026-W40")),
    )
    .await;
    let (_, _, days) = snapshot(s, g).await;
    let day = &days[0];
    assert_eq!(day.earned["gold"], 357);
    assert_eq!(day.spent["gold"], 100);
    assert_eq!(day.revenue_treatment_cents, 999);
    assert_eq!(day.cohorts.len(), 2, "{:?}", day.cohorts);
    let w40 = &day.cohorts["2026-W40"];
    assert_eq!((w40.earned["gold"], w40.spent["gold"]), (300, 100));
    let w41 = &day.cohorts["2026-W41"];
    assert_eq!(w41.earned["gold"], 50);
    assert!(w41.spent.is_empty());
}

async fn case_purchases_kept_by_day_and_payer(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let today = Utc::now();
    let yesterday = today - chrono::Duration::days(1);
    let at = |tx: &str, player: &str, cents: i64, ts: chrono::DateTime<Utc>| {
        let mut o = op(g, tx, MoneyKind::Purchase, cents);
        o.player_id = player.into();
        o.ts = ts;
        o
    };
    for o in [
        at("a", "p1", 100, yesterday),
        at("b", "p1", 250, today),
        at("c", "p1", 50, today),
        at("d", "p2", 999, today),
    ] {
        apply(s, &o).await;
    }
    // A replay and money that is not revenue leave the days alone.
    apply(s, &at("d", "p2", 999, today)).await;
    apply(s, &op(g, "e", MoneyKind::Earned, 70)).await;
    let days = [
        yesterday.date_naive(),
        today.date_naive(),
        (today + chrono::Duration::days(1)).date_naive(),
    ];
    let mut revenues = s.day_revenues(g, env, &days).await.expect("revenues");
    for day in &mut revenues {
        day.sort();
    }
    assert_eq!(
        revenues,
        vec![
            vec![("p1".to_owned(), 100)],
            vec![("p1".to_owned(), 300), ("p2".to_owned(), 999)],
            vec![],
        ]
    );
    let sandbox = s
        .day_revenues(g, Environment::Sandbox, &days)
        .await
        .expect("revenues");
    assert!(sandbox.iter().all(Vec::is_empty));
}

async fn case_replay_counts_once(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let earn = op(g, "e1", MoneyKind::Earned, 40);
    assert_eq!(apply(s, &earn).await, MoneyOutcome::Applied { balance: 40 });
    for _ in 0..100 {
        assert_eq!(
            apply(s, &earn).await,
            MoneyOutcome::Duplicate { balance: 40 }
        );
    }
    let (balance, ledger, days) = snapshot(s, g).await;
    assert_eq!(balance, 40);
    assert_eq!(ledger.len(), 1);
    assert_eq!(days[0].earned["gold"], 40);
    // A replay answers the first result even after the balance moved on.
    apply(s, &op(g, "s1", MoneyKind::Spent, 10)).await;
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Duplicate { balance: 40 }
    );
}

async fn case_idempotency_records_past_retention_are_forgotten(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let earn = op(g, "e1", MoneyKind::Earned, 40);
    assert_eq!(apply(s, &earn).await, MoneyOutcome::Applied { balance: 40 });
    // Received just now: a cutoff a day ago keeps it.
    let day_ago = Utc::now() - chrono::Duration::days(1);
    assert_eq!(
        s.forget_tx_before(g, env, day_ago, 10)
            .await
            .expect("forget"),
        0
    );
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Duplicate { balance: 40 }
    );
    let later = Utc::now() + chrono::Duration::minutes(1);
    let forgotten = s.forget_tx_before(g, env, later, 10).await.expect("forget");
    match ctx.backend {
        // The embedded store's writer sweeps its own records: nothing to forget here.
        Backend::Embedded | Backend::InMemory => {
            assert_eq!(forgotten, 0);
            assert_eq!(
                apply(s, &earn).await,
                MoneyOutcome::Duplicate { balance: 40 }
            );
        }
        Backend::Redis | Backend::RedisCluster => {
            assert_eq!(forgotten, 1);
            // The documented trade-off: a retry after the retention counts again...
            assert_eq!(apply(s, &earn).await, MoneyOutcome::Applied { balance: 80 });
            // ...and is remembered from then on; another game's records were never touched.
            assert_eq!(
                apply(s, &earn).await,
                MoneyOutcome::Duplicate { balance: 80 }
            );
            assert_eq!(
                s.forget_tx_before(Uuid::new_v4(), env, later, 10)
                    .await
                    .expect("forget"),
                0
            );
        }
    }
}

async fn case_ledger_lines_past_retention_are_dropped_and_sums_kept(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    for (i, amount) in [10, 20, 30].into_iter().enumerate() {
        apply(s, &op(g, &format!("e{i}"), MoneyKind::Earned, amount)).await;
    }
    let before = snapshot(s, g).await;
    let day_ago = Utc::now() - chrono::Duration::days(1);
    assert_eq!(
        s.trim_ledger_before(g, env, day_ago, 10)
            .await
            .expect("trim"),
        0
    );
    let later = Utc::now() + chrono::Duration::minutes(1);
    match ctx.backend {
        // The embedded store's writer sweeps its own lines: nothing to drop here.
        Backend::Embedded | Backend::InMemory => {
            assert_eq!(
                s.trim_ledger_before(g, env, later, 10).await.expect("trim"),
                0
            );
            assert_eq!(snapshot(s, g).await, before);
        }
        Backend::Redis | Backend::RedisCluster => {
            // A chunk at a time, oldest first.
            assert_eq!(
                s.trim_ledger_before(g, env, later, 2).await.expect("trim"),
                2
            );
            let (_, ledger, _) = snapshot(s, g).await;
            assert_eq!(ledger.iter().map(|l| l.amount).collect::<Vec<_>>(), [30]);
            assert_eq!(
                s.trim_ledger_before(g, env, later, 2).await.expect("trim"),
                1
            );
            let (balance, ledger, days) = snapshot(s, g).await;
            assert!(ledger.is_empty());
            // The balance and the day aggregates stay.
            assert_eq!((balance, days), (before.0, before.2));
        }
    }
}

async fn case_kill_switch_writes_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "e1", MoneyKind::Earned, 10)).await;
    s.set_kill_level(g, 2).await.expect("kill 2");
    assert_eq!(
        apply(s, &op(g, "e2", MoneyKind::Earned, 5)).await,
        MoneyOutcome::Applied { balance: 15 }
    );
    s.set_kill_level(g, 3).await.expect("kill 3");
    let before = snapshot(s, g).await;
    for (i, kind) in [MoneyKind::Earned, MoneyKind::Spent, MoneyKind::Purchase]
        .into_iter()
        .enumerate()
    {
        assert_eq!(
            apply(s, &op(g, &format!("k{i}"), kind, 1)).await,
            MoneyOutcome::KillSwitch
        );
    }
    assert_eq!(snapshot(s, g).await, before);
    s.set_kill_level(g, 0).await.expect("kill 0");
    assert_eq!(
        apply(s, &op(g, "k0", MoneyKind::Earned, 1)).await,
        MoneyOutcome::Applied { balance: 16 }
    );
}

async fn case_purchase_revenue_by_group(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "e1", MoneyKind::Earned, 7)).await;
    let treated = op(g, "buy1", MoneyKind::Purchase, 499);
    assert_eq!(
        apply(s, &treated).await,
        MoneyOutcome::Applied { balance: 0 }
    );
    let control = MoneyOp {
        holdout: true,
        ..op(g, "buy2", MoneyKind::Purchase, 199)
    };
    apply(s, &control).await;
    apply(
        s,
        &MoneyOp {
            ts: at(2, 1),
            ..op(g, "buy3", MoneyKind::Purchase, 1000)
        },
    )
    .await;
    let (balance, ledger, _) = snapshot(s, g).await;
    assert_eq!(balance, 7, "a purchase moves no wallet");
    assert_eq!(ledger.len(), 4);
    assert_eq!(ledger[1].kind, MoneyKind::Purchase);
    assert_eq!(ledger[1].balance_after, 0);
    let days = s
        .day_aggregates(g, Environment::Production, &[day(1), day(2), day(3)])
        .await
        .expect("aggregates");
    assert_eq!(days[0].revenue_treatment_cents, 499);
    assert_eq!(days[0].revenue_control_cents, 199);
    assert_eq!(days[1].revenue_treatment_cents, 1000);
    assert_eq!(days[1].revenue_control_cents, 0);
    assert_eq!(days[2], DayAggregate::default());
}

async fn case_environments_apart(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "t1", MoneyKind::Earned, 100)).await;
    let sandbox = MoneyOp {
        env: Environment::Sandbox,
        ..op(g, "t1", MoneyKind::Earned, 5)
    };
    // Same tx id in another environment is another event.
    assert_eq!(
        apply(s, &sandbox).await,
        MoneyOutcome::Applied { balance: 5 }
    );
    let prod = gold(s, g, Environment::Production, "p1").await;
    let sand = gold(s, g, Environment::Sandbox, "p1").await;
    assert_eq!((prod, sand), (100, 5));
    let sandbox_ledger = s.ledger(g, Environment::Sandbox).await.expect("ledger");
    assert_eq!(sandbox_ledger.len(), 1);
    assert_eq!(sandbox_ledger[0].amount, 5);
    let days = s
        .day_aggregates(g, Environment::Sandbox, &[day(1)])
        .await
        .expect("aggregates");
    assert_eq!(days[0].earned["gold"], 5);
}

async fn case_import_skips_balance_check(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let spend = MoneyOp {
        import: true,
        ..op(g, "old-spend", MoneyKind::Spent, 30)
    };
    assert_eq!(
        apply(s, &spend).await,
        MoneyOutcome::Applied { balance: -30 }
    );
    let earn = MoneyOp {
        import: true,
        ..op(g, "old-earn", MoneyKind::Earned, 50)
    };
    assert_eq!(apply(s, &earn).await, MoneyOutcome::Applied { balance: 20 });
    assert_eq!(
        apply(s, &spend).await,
        MoneyOutcome::Duplicate { balance: -30 }
    );
    let (balance, ledger, days) = snapshot(s, g).await;
    assert_eq!(balance, 20);
    assert_eq!(ledger.len(), 2);
    assert_eq!(days[0].spent["gold"], 30);
}

async fn case_concurrent_spends(ctx: Ctx) {
    const BALANCE: i64 = 10_000;
    const PRICE: i64 = 37;
    const SPENDS: usize = 1_000;
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "seed", MoneyKind::Earned, BALANCE)).await;
    let tasks: Vec<_> = (0..SPENDS)
        .map(|i| {
            let s = Arc::clone(s);
            tokio::spawn(async move {
                s.apply_money(&op(g, &format!("spend-{i}"), MoneyKind::Spent, PRICE))
                    .await
            })
        })
        .collect();
    let mut applied = 0_i64;
    for task in tasks {
        match task.await.expect("task").expect("apply_money") {
            MoneyOutcome::Applied { balance } => {
                assert!(balance >= 0);
                applied += 1;
            }
            MoneyOutcome::InsufficientFunds { balance } => assert!(balance < PRICE),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(applied, BALANCE / PRICE);
    let (balance, ledger, days) = snapshot(s, g).await;
    assert_eq!(balance, BALANCE - applied * PRICE);
    assert!(balance >= 0);
    let spends = ledger.iter().filter(|e| e.kind == MoneyKind::Spent).count();
    assert_eq!(i64::try_from(spends).expect("count"), applied);
    assert_eq!(days[0].spent["gold"], applied * PRICE);
}

async fn case_randomised_ledger_sums(ctx: Ctx) {
    const OPS: usize = 10_000;
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let players = ["ann", "bob", "cy"];
    let currencies = ["gold", "gems"];
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let mut model: HashMap<(String, String), i64> = HashMap::new();
    let mut first_result: HashMap<String, i64> = HashMap::new();
    let mut holdout_of: HashMap<String, bool> = HashMap::new();
    let mut issued: Vec<MoneyOp> = Vec::new();
    for i in 0..OPS {
        let roll = rng.random_range(0..100);
        let op = if roll < 10 && !issued.is_empty() {
            // Replay an earlier event.
            issued[rng.random_range(0..issued.len())].clone()
        } else {
            let kind = match roll {
                0..=44 => MoneyKind::Earned,
                45..=94 => MoneyKind::Spent,
                _ => MoneyKind::Purchase,
            };
            let player = players[rng.random_range(0..players.len())];
            let currency = if kind == MoneyKind::Purchase {
                ""
            } else {
                currencies[rng.random_range(0..currencies.len())]
            };
            MoneyOp {
                game_id: g,
                env,
                player_id: player.into(),
                tx_id: format!("tx-{i}"),
                kind,
                currency_id: currency.into(),
                amount: rng.random_range(1..60),
                ts: at(rng.random_range(1..4), rng.random_range(0..24)),
                holdout: rng.random_bool(0.1),
                import: rng.random_bool(0.02),
                cohort: None,
            }
        };
        let outcome = apply(s, &op).await;
        let key = (op.player_id.clone(), op.currency_id.clone());
        let current = model.get(&key).copied().unwrap_or(0);
        let expected = if let Some(&balance) = first_result.get(&op.tx_id) {
            MoneyOutcome::Duplicate { balance }
        } else if op.kind == MoneyKind::Spent && !op.import && current < op.amount {
            MoneyOutcome::InsufficientFunds { balance: current }
        } else {
            let after = match op.kind {
                MoneyKind::Earned => current + op.amount,
                MoneyKind::Spent => current - op.amount,
                MoneyKind::Purchase => 0,
            };
            if op.kind != MoneyKind::Purchase {
                model.insert(key, after);
            }
            first_result.insert(op.tx_id.clone(), after);
            holdout_of.insert(op.tx_id.clone(), op.holdout);
            issued.push(op.clone());
            MoneyOutcome::Applied { balance: after }
        };
        assert_eq!(outcome, expected, "op {i}: {op:?}");
    }

    let ledger = s.ledger(g, env).await.expect("ledger");
    assert_eq!(ledger.len(), first_result.len());
    let mut sums: HashMap<(String, String), i64> = HashMap::new();
    let mut expected_days: BTreeMap<NaiveDate, DayAggregate> = BTreeMap::new();
    for entry in &ledger {
        let day = expected_days.entry(entry.ts.date_naive()).or_default();
        let key = (entry.player_id.clone(), entry.currency_id.clone());
        match entry.kind {
            MoneyKind::Earned => {
                *sums.entry(key).or_default() += entry.amount;
                *day.earned.entry(entry.currency_id.clone()).or_default() += entry.amount;
            }
            MoneyKind::Spent => {
                *sums.entry(key).or_default() -= entry.amount;
                *day.spent.entry(entry.currency_id.clone()).or_default() += entry.amount;
            }
            MoneyKind::Purchase if holdout_of[&entry.tx_id] => {
                day.revenue_control_cents += entry.amount;
            }
            MoneyKind::Purchase => day.revenue_treatment_cents += entry.amount,
        }
    }
    for player in players {
        for currency in currencies {
            let key = (player.to_string(), currency.to_string());
            let balance = s.balance(g, env, player, currency).await.expect("balance");
            assert_eq!(balance, sums.get(&key).copied().unwrap_or(0), "{key:?}");
            assert_eq!(balance, model.get(&key).copied().unwrap_or(0), "{key:?}");
        }
    }
    let days: Vec<NaiveDate> = expected_days.keys().copied().collect();
    let actual = s.day_aggregates(g, env, &days).await.expect("aggregates");
    assert_eq!(actual, expected_days.into_values().collect::<Vec<_>>());
}

async fn case_publish_reaches_subscriber(ctx: Ctx) {
    let receiver_node = ctx.peer().await;
    let mut rx = receiver_node.subscribe();
    let mut own_rx = ctx.store.subscribe();
    let msg = BusMessage::KillSwitch {
        game_id: Uuid::new_v4(),
        level: 2,
        reason: "incident".into(),
        updated_at: at(1, 0),
    };
    ctx.store.publish(&msg).await.expect("publish");
    let got = tokio::time::timeout(Duration::from_secs(2), rx.recv())
        .await
        .expect("message within 2 s")
        .expect("bus open");
    assert_eq!(got, msg);
    let own = tokio::time::timeout(Duration::from_secs(2), own_rx.recv())
        .await
        .expect("sender receives its own message")
        .expect("bus open");
    assert_eq!(own, msg);
    // Another key space hears nothing.
    let stranger = ctx.other_space().await;
    let mut stranger_rx = stranger.subscribe();
    ctx.store
        .publish(&BusMessage::GameChanged {
            game_id: Uuid::new_v4(),
            origin: Uuid::new_v4(),
        })
        .await
        .expect("publish");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), stranger_rx.recv())
            .await
            .is_err()
    );
}

async fn case_decisions_expire_and_stay_in_their_game(ctx: Ctx) {
    let s = &ctx.store;
    let (g, other) = (Uuid::new_v4(), Uuid::new_v4());
    let (d1, d2, brief) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    let hour = Duration::from_secs(3600);
    s.put_decisions(g, Vec::new(), hour).await.expect("empty");
    s.put_decisions(
        g,
        vec![(d1, bytes("{\"n\":1}")), (d2, bytes("{\"n\":2}"))],
        hour,
    )
    .await
    .expect("put");
    assert_eq!(
        s.get_decision(g, d1).await.expect("get"),
        Some(bytes("{\"n\":1}"))
    );
    // Another node reads them; another game, or an unknown id, finds nothing.
    let peer = ctx.peer().await;
    assert_eq!(
        peer.get_decision(g, d2).await.expect("get"),
        Some(bytes("{\"n\":2}"))
    );
    assert_eq!(s.get_decision(other, d1).await.expect("get"), None);
    assert_eq!(s.get_decision(g, Uuid::new_v4()).await.expect("get"), None);
    // Written again, a record is replaced.
    s.put_decisions(g, vec![(d1, bytes("{\"n\":3}"))], hour)
        .await
        .expect("replace");
    assert_eq!(
        s.get_decision(g, d1).await.expect("get"),
        Some(bytes("{\"n\":3}"))
    );
    // Past its time to live a record is gone; the others stay.
    s.put_decisions(g, vec![(brief, bytes("{}"))], Duration::from_millis(1))
        .await
        .expect("put brief");
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.get_decision(g, brief).await.expect("get").is_some() {
        assert!(Instant::now() < deadline, "the record never expired");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(s.get_decision(g, d2).await.expect("get").is_some());
}

async fn case_versioned_write_is_all_or_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let (versions, items) = (
        Collection::game(g, "versions"),
        Collection::game(g, "items"),
    );
    let entry = |id: &str, v: &str| (id.to_owned(), bytes(v));
    // No version yet: `None` is expected.
    assert!(
        s.put_all_versioned(
            versions,
            "c",
            None,
            bytes("1"),
            items,
            vec![entry("a", "A1")]
        )
        .await
        .expect("first")
    );
    // A writer that read before it lost: nothing of its write lands.
    let peer = ctx.peer().await;
    assert!(
        !peer
            .put_all_versioned(
                versions,
                "c",
                None,
                bytes("1"),
                items,
                vec![entry("b", "B")]
            )
            .await
            .expect("stale")
    );
    assert_eq!(s.get(items, "b").await.expect("get"), None);
    assert_eq!(s.get(versions, "c").await.expect("get"), Some(bytes("1")));
    // One that read the current version wins, with all its entries.
    assert!(
        peer.put_all_versioned(
            versions,
            "c",
            Some(b"1"),
            bytes("2"),
            items,
            vec![entry("a", "A2"), entry("b", "B")]
        )
        .await
        .expect("current")
    );
    assert_eq!(s.get(items, "a").await.expect("get"), Some(bytes("A2")));
    assert_eq!(s.get(items, "b").await.expect("get"), Some(bytes("B")));
    assert_eq!(s.get(versions, "c").await.expect("get"), Some(bytes("2")));
    // Two games' collections never make one write.
    let other = Collection::game(Uuid::new_v4(), "items");
    assert!(matches!(
        s.put_all_versioned(versions, "c", Some(b"2"), bytes("3"), other, Vec::new())
            .await,
        Err(StoreError::Corrupt(_))
    ));
}

/// What a store holds of game `g`, read back for comparison across a restart.
#[derive(Debug, PartialEq)]
struct Held {
    items: Vec<(String, Vec<u8>)>,
    game: Option<Vec<u8>>,
    approval: Option<Vec<u8>>,
    production: (i64, Vec<LedgerEntry>, Vec<DayAggregate>),
    sandbox_ledger: Vec<LedgerEntry>,
    spend_cents: i64,
}

async fn held(store: &SharedStore, g: Uuid) -> Held {
    let mut items = store
        .list(Collection::game(g, "items"))
        .await
        .expect("list");
    items.sort();
    Held {
        items,
        game: store
            .get(Collection::global("games"), &g.to_string())
            .await
            .expect("get"),
        approval: store
            .get(Collection::game(g, "approvals"), "a")
            .await
            .expect("get"),
        production: snapshot(store, g).await,
        sandbox_ledger: store.ledger(g, Environment::Sandbox).await.expect("ledger"),
        spend_cents: store
            .spend_cents(g, Environment::Production, "p1")
            .await
            .expect("spend"),
    }
}

/// Opens the SQLite store of `file` (shared, as the engine holds it).
async fn open_file(file: &Path, retention: Duration) -> SharedStore {
    let options = SqliteOptions {
        idempotency_retention: retention,
        ..sqlite_options(Location::File(file.to_owned()))
    };
    Arc::new(open_sqlite(options).await.expect("open the SQLite file"))
}

/// The default retention of these tests.
const NINETY_DAYS: Duration = Duration::from_secs(90 * 86_400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_file_keeps_everything_across_a_restart() {
    let file = scratch_dir().join("store.db");
    let g = Uuid::new_v4();
    let earn = op(g, "e1", MoneyKind::Earned, 100);
    let before = {
        let s = open_file(&file, NINETY_DAYS).await;
        s.put_all(
            Collection::game(g, "items"),
            vec![
                ("sword".into(), bytes("{\"v\":1}")),
                ("axe".into(), bytes("{}")),
            ],
        )
        .await
        .expect("put");
        assert!(
            s.insert_new(Collection::global("games"), &g.to_string(), bytes("game"))
                .await
                .expect("insert")
        );
        assert!(
            s.compare_and_swap(
                Collection::game(g, "approvals"),
                "a",
                None,
                bytes("pending")
            )
            .await
            .expect("cas")
        );
        apply(&s, &earn).await;
        apply(&s, &op(g, "s1", MoneyKind::Spent, 30)).await;
        let buy = MoneyOp {
            holdout: true,
            ..op(g, "b1", MoneyKind::Purchase, 499)
        };
        apply(&s, &buy).await;
        let sandbox = MoneyOp {
            env: Environment::Sandbox,
            ..op(g, "e1", MoneyKind::Earned, 5)
        };
        apply(&s, &sandbox).await;
        s.set_kill_level(g, 3).await.expect("kill 3");
        held(&s, g).await
        // The store is dropped here: the engine stopped.
    };
    assert_eq!(before.production.1.len(), 3);
    let s = open_file(&file, NINETY_DAYS).await;
    assert_eq!(held(&s, g).await, before);
    // The idempotency records and the kill level came back too.
    assert_eq!(
        apply(&s, &earn).await,
        MoneyOutcome::Duplicate { balance: 100 }
    );
    assert_eq!(
        apply(&s, &op(g, "e2", MoneyKind::Earned, 1)).await,
        MoneyOutcome::KillSwitch
    );
    drop(s);
    remove_scratch(&file);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_file_has_one_owner() {
    let file = scratch_dir().join("store.db");
    let first = open_file(&file, NINETY_DAYS).await;
    let options = sqlite_options(Location::File(file.clone()));
    match open_sqlite(options.clone()).await {
        Err(StoreError::Unavailable(why)) => {
            assert!(why.contains("in use by another engine process"), "{why}");
        }
        other => panic!("a second owner must be refused, got {other:?}"),
    }
    drop(first);
    open_sqlite(options)
        .await
        .expect("the file is free once its owner closed it");
    remove_scratch(&file);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_forgets_tx_ids_after_the_retention() {
    let file = scratch_dir().join("store.db");
    let g = Uuid::new_v4();
    let earn = op(g, "e1", MoneyKind::Earned, 10);
    {
        // Expired records are deleted at start and then hourly: until then a replay is
        // still a duplicate.
        let s = open_file(&file, Duration::ZERO).await;
        assert_eq!(
            apply(&s, &earn).await,
            MoneyOutcome::Applied { balance: 10 }
        );
        assert_eq!(
            apply(&s, &earn).await,
            MoneyOutcome::Duplicate { balance: 10 }
        );
    }
    {
        // Within the retention, a retry after a restart counts once.
        let s = open_file(&file, NINETY_DAYS).await;
        assert_eq!(
            apply(&s, &earn).await,
            MoneyOutcome::Duplicate { balance: 10 }
        );
    }
    // Past the retention the record is gone: a retry counts again (the documented
    // trade-off), and the ledger keeps both lines.
    let s = open_file(&file, Duration::ZERO).await;
    assert_eq!(
        apply(&s, &earn).await,
        MoneyOutcome::Applied { balance: 20 }
    );
    let ledger = s.ledger(g, Environment::Production).await.expect("ledger");
    assert_eq!(ledger.len(), 2);
    assert!(ledger.iter().all(|e| e.tx_id == "e1"));
    drop(s);
    remove_scratch(&file);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_prunes_raw_ledger_lines_and_keeps_the_sums() {
    let file = scratch_dir().join("store.db");
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let open = || async {
        let options = SqliteOptions {
            idempotency_retention: Duration::ZERO,
            ledger_retention: Some(Duration::ZERO),
            ..sqlite_options(Location::File(file.clone()))
        };
        let store: SharedStore = Arc::new(open_sqlite(options).await.expect("open"));
        store
    };
    let sums = async |s: &SharedStore| {
        (
            gold(s, g, env, "p1").await,
            s.spend_cents(g, env, "p1").await.expect("spend"),
            s.day_aggregates(g, env, &[day(1)]).await.expect("days"),
        )
    };
    let before = {
        let s = open().await;
        for op in [
            op(g, "e1", MoneyKind::Earned, 100),
            op(g, "s1", MoneyKind::Spent, 30),
            op(g, "p1", MoneyKind::Purchase, 499),
        ] {
            assert!(matches!(apply(&s, &op).await, MoneyOutcome::Applied { .. }));
        }
        assert_eq!(s.ledger(g, env).await.expect("ledger").len(), 3);
        sums(&s).await
    };
    assert_eq!(before.0, 70);
    {
        // The first write after a start marks every line so far as received; expired lines
        // are deleted at the next start.
        let s = open().await;
        s.put_all(
            Collection::game(g, "items"),
            vec![("a".into(), bytes("{}"))],
        )
        .await
        .expect("a write");
    }
    let s = open().await;
    // The writer sweeps before it takes its first write: once a write is answered, the
    // sweep is done.
    s.put_all(
        Collection::game(g, "items"),
        vec![("b".into(), bytes("{}"))],
    )
    .await
    .expect("a write");
    assert!(s.ledger(g, env).await.expect("ledger").is_empty());
    assert_eq!(
        sums(&s).await,
        before,
        "balances, spend and day totals stay"
    );
    drop(s);
    remove_scratch(&file);
}

/// Asserts that `result` is `Unavailable` and came within 2 seconds.
fn assert_unavailable<T: std::fmt::Debug>(result: Result<T, StoreError>, started: Instant) {
    assert!(
        matches!(result, Err(StoreError::Unavailable(_))),
        "expected Unavailable, got {result:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_nothing_listening_is_unavailable_fast() {
    let url = format!("redis://127.0.0.1:{}/", crate::redis_harness::free_port());
    let started = Instant::now();
    let result = RedisStore::connect(&url, &unique_prefix(), Duration::from_secs(1)).await;
    assert_unavailable(result, started);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_run_is_unavailable_fast_then_recovers() {
    let (mut server, port) = start_private();
    let url = format!("redis://127.0.0.1:{port}/");
    let prefix = unique_prefix();
    let store = RedisStore::connect(&url, &prefix, Duration::from_secs(1))
        .await
        .expect("connect");
    let mut bus = store.subscribe();
    let coll = Collection::global("games");
    store
        .put_all(coll, vec![("a".into(), bytes("1"))])
        .await
        .expect("put while up");
    server.kill().expect("kill redis-server");
    server.wait().expect("reap redis-server");
    let started = Instant::now();
    assert_unavailable(store.ping().await, started);
    let started = Instant::now();
    assert_unavailable(
        store.put_all(coll, vec![("b".into(), bytes("2"))]).await,
        started,
    );
    let started = Instant::now();
    assert_unavailable(
        store
            .apply_money(&op(Uuid::new_v4(), "t", MoneyKind::Earned, 1))
            .await,
        started,
    );

    // Redis comes back (empty, as it keeps no data): commands and the bus recover by themselves.
    let mut server = start_on(port);
    let deadline = Instant::now() + Duration::from_secs(15);
    while store.ping().await.is_err() {
        assert!(Instant::now() < deadline, "commands did not recover");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    store
        .put_all(coll, vec![("c".into(), bytes("3"))])
        .await
        .expect("put after recovery");
    let msg = BusMessage::GameChanged {
        game_id: Uuid::new_v4(),
        origin: Uuid::new_v4(),
    };
    // After reconnecting, the store tells its node to resync (messages sent while the link
    // was down are lost), then delivers new messages again.
    let mut resynced = false;
    loop {
        assert!(Instant::now() < deadline, "bus did not recover");
        store.publish(&msg).await.expect("publish");
        if let Ok(received) = tokio::time::timeout(Duration::from_millis(200), bus.recv()).await {
            match received.expect("bus open") {
                BusMessage::Resync => resynced = true,
                other => {
                    assert_eq!(other, msg);
                    break;
                }
            }
        }
    }
    assert!(resynced, "a reconnect announces a resync");
    drop(store);
    server.kill().expect("kill redis-server");
    server.wait().expect("reap redis-server");
}

async fn case_expiring_documents_live_then_go(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::global("codes");
    let hour = Duration::from_secs(3600);
    assert!(
        s.insert_expiring(coll, "a", bytes("1"), hour)
            .await
            .expect("insert")
    );
    // A live document is never replaced by an insert.
    assert!(
        !s.insert_expiring(coll, "a", bytes("2"), hour)
            .await
            .expect("insert")
    );
    assert_eq!(
        s.get_expiring(coll, "a").await.expect("get"),
        Some(bytes("1"))
    );
    // Another node sees it; another collection, scope or id does not, nor the documents.
    let peer = ctx.peer().await;
    assert_eq!(
        peer.get_expiring(coll, "a").await.expect("get"),
        Some(bytes("1"))
    );
    assert_eq!(
        s.get_expiring(Collection::global("other"), "a")
            .await
            .expect("get"),
        None
    );
    let game = Collection::game(Uuid::new_v4(), "codes");
    assert_eq!(s.get_expiring(game, "a").await.expect("get"), None);
    assert_eq!(s.get(coll, "a").await.expect("get"), None);
    // Past its time to live it is gone, a swap finds nothing, and the id is free again.
    assert!(
        s.insert_expiring(coll, "brief", bytes("x"), Duration::from_millis(1))
            .await
            .expect("insert")
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.get_expiring(coll, "brief").await.expect("get").is_some() {
        assert!(Instant::now() < deadline, "the document never expired");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        !s.swap_expiring(coll, "brief", &bytes("x"), bytes("y"))
            .await
            .expect("swap")
    );
    assert!(
        s.insert_expiring(coll, "brief", bytes("z"), hour)
            .await
            .expect("insert")
    );
    assert_eq!(
        s.get_expiring(coll, "brief").await.expect("get"),
        Some(bytes("z"))
    );
    assert!(
        !s.swap_expiring(coll, "never", &bytes("x"), bytes("y"))
            .await
            .expect("swap")
    );
    assert_eq!(s.get_expiring(coll, "never").await.expect("get"), None);
}

async fn case_expiring_swap_is_decided_once(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::global("sign_ins");
    assert!(
        s.insert_expiring(coll, "d", bytes("pending"), Duration::from_secs(3600))
            .await
            .expect("insert")
    );
    // Many writers on two nodes race to decide it: exactly one wins.
    let peer = ctx.peer().await;
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = if i % 2 == 0 { s.clone() } else { peer.clone() };
        tasks.push(tokio::spawn(async move {
            store
                .swap_expiring(coll, "d", b"pending", bytes(&format!("decided {i}")))
                .await
                .expect("swap")
        }));
    }
    let mut winners = 0;
    for task in tasks {
        winners += usize::from(task.await.expect("join"));
    }
    assert_eq!(winners, 1);
    let decided = s.get_expiring(coll, "d").await.expect("get").expect("live");
    assert!(decided.starts_with(b"decided "));
    // A wrong expectation changes nothing.
    assert!(
        !s.swap_expiring(coll, "d", b"pending", bytes("again"))
            .await
            .expect("swap")
    );
    assert_eq!(
        s.get_expiring(coll, "d").await.expect("get"),
        Some(decided.clone())
    );
    // A swap keeps the time to live: a brief document swapped still goes.
    assert!(
        s.insert_expiring(coll, "b", bytes("1"), Duration::from_millis(300))
            .await
            .expect("insert")
    );
    assert!(
        s.swap_expiring(coll, "b", b"1", bytes("2"))
            .await
            .expect("swap")
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.get_expiring(coll, "b").await.expect("get").is_some() {
        assert!(
            Instant::now() < deadline,
            "a swapped document never expired"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The way custom-page drafts append versions: read the head, write the next version and
/// the head against it, and read again on `false`. Writers on two nodes never get the same
/// number, and no version is lost.
async fn case_concurrent_versioned_appends_get_distinct_numbers(ctx: Ctx) {
    let game = Uuid::new_v4();
    let heads = Collection::game(game, "heads");
    let versions = Collection::game(game, "versions");
    let peer = ctx.peer().await;
    let mut tasks = Vec::new();
    for i in 0..12 {
        let store = if i % 2 == 0 {
            ctx.store.clone()
        } else {
            peer.clone()
        };
        tasks.push(tokio::spawn(async move {
            loop {
                let head = store.get(heads, "page").await.expect("get");
                let last: u32 = head.as_deref().map_or(0, |b| {
                    std::str::from_utf8(b).expect("utf8").parse().expect("n")
                });
                let next = last + 1;
                let written = store
                    .put_all_versioned(
                        heads,
                        "page",
                        head.as_deref(),
                        bytes(&next.to_string()),
                        versions,
                        vec![(format!("page:{next}"), bytes(&format!("by {i}")))],
                    )
                    .await
                    .expect("write");
                if written {
                    return next;
                }
            }
        }));
    }
    let mut numbers = Vec::new();
    for task in tasks {
        numbers.push(task.await.expect("join"));
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=12).collect::<Vec<u32>>());
    assert_eq!(ctx.store.list(versions).await.expect("list").len(), 12);
}

/// An inventory step of player `p1` in production.
fn inv(game_id: Uuid, tx_id: &str, change: InventoryChange) -> InventoryOp {
    InventoryOp {
        game_id,
        env: Environment::Production,
        player_id: "p1".into(),
        tx_id: tx_id.into(),
        change,
    }
}

fn add(items: &[(&str, i64)]) -> InventoryChange {
    InventoryChange::Add(items.iter().map(|(i, n)| ((*i).to_owned(), *n)).collect())
}

fn use_of(item_id: &str, quantity: i64) -> InventoryChange {
    InventoryChange::Use {
        item_id: item_id.into(),
        quantity,
    }
}

fn items_of(items: &[(&str, i64)]) -> Items {
    items.iter().map(|(i, n)| ((*i).to_owned(), *n)).collect()
}

async fn step(store: &SharedStore, op: &InventoryOp) -> InventoryOutcome {
    inventory::apply(store.as_ref(), op)
        .await
        .expect("inventory step")
}

async fn inventory_of(store: &SharedStore, game: Uuid, env: Environment) -> Items {
    inventory::read(store.as_ref(), game, env, "p1")
        .await
        .expect("inventory")
}

async fn case_inventory_adds_once_per_tx_id(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    assert_eq!(inventory_of(s, g, env).await, Items::new());
    let buy = inv(g, "b1", add(&[("sword", 1), ("potion", 3)]));
    let after = items_of(&[("potion", 3), ("sword", 1)]);
    assert_eq!(
        step(s, &buy).await,
        InventoryOutcome::Applied(after.clone())
    );
    // A replay, from another node too, adds nothing.
    let peer = ctx.peer().await;
    assert_eq!(
        step(&peer, &buy).await,
        InventoryOutcome::Duplicate(after.clone())
    );
    assert_eq!(inventory_of(s, g, env).await, after);
    // The same tx_id for another change is a conflict and changes nothing.
    assert_eq!(
        step(s, &inv(g, "b1", add(&[("sword", 2)]))).await,
        InventoryOutcome::TxConflict
    );
    assert_eq!(inventory_of(s, g, env).await, after);
    // Uses keep their tx_ids apart from additions.
    assert_eq!(
        step(s, &inv(g, "b1", use_of("potion", 1))).await,
        InventoryOutcome::Applied(items_of(&[("potion", 2), ("sword", 1)]))
    );
    assert_eq!(
        step(s, &inv(g, "b1", use_of("potion", 2))).await,
        InventoryOutcome::TxConflict
    );
}

async fn case_inventory_use_takes_out_and_drops_zero(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    step(s, &inv(g, "b1", add(&[("potion", 3), ("sword", 1)]))).await;
    let used = inv(g, "u1", use_of("potion", 2));
    let after = items_of(&[("potion", 1), ("sword", 1)]);
    assert_eq!(
        step(s, &used).await,
        InventoryOutcome::Applied(after.clone())
    );
    assert_eq!(step(s, &used).await, InventoryOutcome::Duplicate(after));
    assert_eq!(
        step(s, &inv(g, "u2", use_of("potion", 1))).await,
        InventoryOutcome::Applied(items_of(&[("sword", 1)]))
    );
    assert_eq!(
        inventory_of(s, g, Environment::Production).await,
        items_of(&[("sword", 1)])
    );
}

async fn case_inventory_overuse_writes_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    step(s, &inv(g, "b1", add(&[("potion", 2)]))).await;
    assert_eq!(
        step(s, &inv(g, "u1", use_of("potion", 3))).await,
        InventoryOutcome::Insufficient { held: 2 }
    );
    assert_eq!(
        step(s, &inv(g, "u2", use_of("elixir", 1))).await,
        InventoryOutcome::Insufficient { held: 0 }
    );
    assert_eq!(
        inventory_of(s, g, Environment::Production).await,
        items_of(&[("potion", 2)])
    );
    // A refused step records nothing: its tx_id may be used again.
    assert_eq!(
        step(s, &inv(g, "u1", use_of("potion", 2))).await,
        InventoryOutcome::Applied(Items::new())
    );
}

async fn case_inventory_environments_apart(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    step(s, &inv(g, "b1", add(&[("sword", 1)]))).await;
    // The same tx_id in the sandbox is another step; its inventory is its own.
    let sandbox = InventoryOp {
        env: Environment::Sandbox,
        ..inv(g, "b1", add(&[("shield", 1)]))
    };
    assert_eq!(
        step(s, &sandbox).await,
        InventoryOutcome::Applied(items_of(&[("shield", 1)]))
    );
    assert_eq!(
        inventory_of(s, g, Environment::Production).await,
        items_of(&[("sword", 1)])
    );
    // And another game's inventory of the same player is empty.
    assert_eq!(
        inventory_of(s, Uuid::new_v4(), Environment::Production).await,
        Items::new()
    );
}

async fn case_inventory_concurrent_uses(ctx: Ctx) {
    const HELD: i64 = 5;
    const USES: usize = 8;
    let s = &ctx.store;
    let g = Uuid::new_v4();
    step(s, &inv(g, "b1", add(&[("potion", HELD)]))).await;
    let peer = ctx.peer().await;
    let tasks: Vec<_> = (0..USES)
        .map(|i| {
            let s = if i % 2 == 0 {
                Arc::clone(s)
            } else {
                Arc::clone(&peer)
            };
            tokio::spawn(async move {
                inventory::apply(s.as_ref(), &inv(g, &format!("u{i}"), use_of("potion", 1))).await
            })
        })
        .collect();
    let mut applied = 0_i64;
    for task in tasks {
        match task.await.expect("task").expect("inventory step") {
            InventoryOutcome::Applied(_) => applied += 1,
            InventoryOutcome::Insufficient { held } => assert_eq!(held, 0),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(applied, HELD);
    assert_eq!(
        inventory_of(s, g, Environment::Production).await,
        Items::new()
    );
}

async fn case_inventory_remembers_recent_tx_ids_per_kind(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let uses = inventory::MAX_TX_RECORDS + 2;
    let dust = i64::try_from(uses).expect("small");
    let buy = inv(g, "b0", add(&[("potion", 1), ("gem_dust", dust)]));
    step(s, &buy).await;
    // Many uses later, the purchase is still remembered: uses keep their own records.
    for i in 0..uses {
        step(s, &inv(g, &format!("u{i}"), use_of("gem_dust", 1))).await;
    }
    assert!(matches!(
        step(s, &buy).await,
        InventoryOutcome::Duplicate(_)
    ));
    // The oldest use is forgotten: sent again, it counts again (here, refused as overuse);
    // the newest is remembered.
    assert_eq!(
        step(s, &inv(g, "u0", use_of("gem_dust", 1))).await,
        InventoryOutcome::Insufficient { held: 0 }
    );
    let newest = inv(g, &format!("u{}", uses - 1), use_of("gem_dust", 1));
    assert_eq!(
        step(s, &newest).await,
        InventoryOutcome::Duplicate(items_of(&[("potion", 1)]))
    );
}
