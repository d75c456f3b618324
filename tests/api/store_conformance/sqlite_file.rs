//! What only the SQLite file has: everything kept across a restart, one owner, and retention
//! applied by the store itself.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use offer_domain::environment::Environment;
use offer_engine::store::sqlite::{Location, SqliteOptions};
use offer_engine::store::{
    Collection, DayAggregate, LedgerEntry, MoneyKind, MoneyOp, MoneyOutcome, SharedStore,
    StoreError,
};
use uuid::Uuid;

use crate::helpers::{remove_scratch, scratch_dir};

use super::{apply, bytes, day, gold, op, open_sqlite, snapshot, sqlite_options};

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
            MoneyOutcome::Applied {
                balance: 10,
                left_out: 0
            }
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
        MoneyOutcome::Applied {
            balance: 20,
            left_out: 0
        }
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
