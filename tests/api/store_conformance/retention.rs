//! Retention on every backend: idempotency records and raw ledger lines past it go, the sums
//! stay.

use chrono::Utc;
use offer_domain::environment::Environment;
use offer_engine::store::{MoneyKind, MoneyOutcome, Sweep};
use uuid::Uuid;

use crate::helpers::Backend;

use super::{Ctx, apply, op, snapshot};

/// One step of a sweep of `game_id`'s `env`: at most `limit` records received before `before`.
fn sweep(game_id: Uuid, env: Environment, before: chrono::DateTime<Utc>, limit: usize) -> Sweep {
    Sweep {
        game_id,
        env,
        before,
        limit,
    }
}

pub(super) async fn case_idempotency_records_past_retention_are_forgotten(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let earn = op(g, "e1", MoneyKind::Earned, 40);
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Applied {
            balance: 40,
            left_out: 0
        }
    );
    // Received just now: a cutoff a day ago keeps it.
    let day_ago = Utc::now() - chrono::Duration::days(1);
    assert_eq!(
        s.forget_tx_before(sweep(g, env, day_ago, 10))
            .await
            .expect("forget"),
        0
    );
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Duplicate { balance: 40 }
    );
    let later = Utc::now() + chrono::Duration::minutes(1);
    let forgotten = s
        .forget_tx_before(sweep(g, env, later, 10))
        .await
        .expect("forget");
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
            assert_eq!(
                apply(s, &earn).await,
                MoneyOutcome::Applied {
                    balance: 80,
                    left_out: 0
                }
            );
            // ...and is remembered from then on; another game's records were never touched.
            assert_eq!(
                apply(s, &earn).await,
                MoneyOutcome::Duplicate { balance: 80 }
            );
            assert_eq!(
                s.forget_tx_before(sweep(Uuid::new_v4(), env, later, 10))
                    .await
                    .expect("forget"),
                0
            );
        }
    }
}

pub(super) async fn case_ledger_lines_past_retention_are_dropped_and_sums_kept(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    for (i, amount) in [10, 20, 30].into_iter().enumerate() {
        apply(s, &op(g, &format!("e{i}"), MoneyKind::Earned, amount)).await;
    }
    let before = snapshot(s, g).await;
    let day_ago = Utc::now() - chrono::Duration::days(1);
    assert_eq!(
        s.trim_ledger_before(sweep(g, env, day_ago, 10))
            .await
            .expect("trim"),
        0
    );
    let later = Utc::now() + chrono::Duration::minutes(1);
    match ctx.backend {
        // The embedded store's writer sweeps its own lines: nothing to drop here.
        Backend::Embedded | Backend::InMemory => {
            assert_eq!(
                s.trim_ledger_before(sweep(g, env, later, 10))
                    .await
                    .expect("trim"),
                0
            );
            assert_eq!(snapshot(s, g).await, before);
        }
        Backend::Redis | Backend::RedisCluster => {
            // A chunk at a time, oldest first.
            assert_eq!(
                s.trim_ledger_before(sweep(g, env, later, 2))
                    .await
                    .expect("trim"),
                2
            );
            let (_, ledger, _) = snapshot(s, g).await;
            assert_eq!(ledger.iter().map(|l| l.amount).collect::<Vec<_>>(), [30]);
            assert_eq!(
                s.trim_ledger_before(sweep(g, env, later, 2))
                    .await
                    .expect("trim"),
                1
            );
            let (balance, ledger, days) = snapshot(s, g).await;
            assert!(ledger.is_empty());
            // The balance and the day aggregates stay.
            assert_eq!((balance, days), (before.0, before.2));
        }
    }
}
