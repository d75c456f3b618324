//! What only Redis has to show about combined wallet calls: one script call of many events
//! answers each as it would have been answered alone, in arrival order. The events are sent
//! from one task while two lone calls of their game are out, so they queue in order and go
//! as one call: a tx id twice in the call (the same change and a different one), a spend
//! refused only because of an earlier spend of the same call, a purchase and an earn after
//! it, a player whose wallet key holds a string (only that player's events fail), and the
//! kill level refusing every new event of a call while its duplicates are still answered.
//! A call whose events span both environments, two days, two currencies, cohorts and every
//! kind, and capped events (a player id holding the fingerprint's separator, an imported spend,
//! a player whose uncapped events of the call reached the cap), leaves the same answers and
//! data as the same events sent one call each.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use offer_domain::environment::Environment;
use offer_engine::store::keys::Keys;
use offer_engine::store::redis::RedisStore;
use offer_engine::store::redis::target::RedisTarget;
use offer_engine::store::{
    Money, MoneyKind, MoneyOp, MoneyOutcome, Retention, SharedStore, StoreError, StoreResult, Sweep,
};
use uuid::Uuid;

use crate::helpers::{Backend, shared_backend};
use crate::redis_harness::{cluster_url, redis_url, unique_prefix};

use super::{at, day, op, snapshot};

/// The URL of the Redis the suite's `redis` instances use (the cluster when chosen).
fn url() -> String {
    match shared_backend() {
        Backend::RedisCluster => cluster_url(),
        _ => redis_url(),
    }
}

/// Stores a string at `key`, so that a hash command on it fails as the wrong type.
fn set_string(url: &str, key: &str) {
    raw(url, ::redis::cmd("SET").arg(key).arg("not a hash"));
}

/// Runs one command straight on the server (or the cluster) behind `url`.
fn raw(url: &str, cmd: &::redis::Cmd) {
    match RedisTarget::parse(url).expect("a Redis URL") {
        RedisTarget::Single(info) => {
            let client = ::redis::Client::open(info).expect("client");
            let mut conn = client.get_connection().expect("connection");
            cmd.query::<()>(&mut conn).expect("a raw command");
        }
        RedisTarget::Cluster(nodes) => {
            let client = ::redis::cluster::ClusterClient::new(nodes).expect("cluster client");
            let mut conn = client.get_connection().expect("cluster connection");
            cmd.query::<()>(&mut conn).expect("a raw command");
        }
    }
}

/// Idempotency records written before they were keyed by player (named by the bare `tx_id`)
/// are renamed before the game's first money event on a node: a retry of such an event is
/// still a duplicate for its player, another player's equal `tx_id` is a new event, and the
/// records still expire with the retention.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_records_of_the_game_wide_layout_are_kept_per_player() {
    let url = url();
    let prefix = unique_prefix();
    let keys = Keys::new(&prefix);
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let received = chrono::Utc::now().timestamp_millis() - 1000;
    raw(
        &url,
        ::redis::cmd("HSET")
            .arg(keys.tx(g, env))
            .arg("old|1")
            .arg("40|p|1|Earned|gold|40"),
    );
    raw(
        &url,
        ::redis::cmd("ZADD")
            .arg(keys.tx_received(g, env))
            .arg(received)
            .arg("old|1"),
    );
    raw(
        &url,
        ::redis::cmd("HSET")
            .arg(keys.wallet(g, env, "p|1"))
            .arg("gold")
            .arg(40),
    );
    let store = RedisStore::connect(&url, &prefix, Duration::from_secs(2))
        .await
        .expect("connect");
    let retry = by("p|1", op(g, "old|1", MoneyKind::Earned, 40));
    assert_eq!(
        store.apply_money(&retry).await.expect("retry"),
        MoneyOutcome::Duplicate { balance: 40 }
    );
    assert_eq!(
        store
            .apply_money(&by("p2", op(g, "old|1", MoneyKind::Earned, 3)))
            .await
            .expect("another player"),
        MoneyOutcome::Applied {
            balance: 3,
            left_out: 0
        }
    );
    // A second node (or a restart) finds the records renamed and renames nothing twice.
    let again = RedisStore::connect(&url, &prefix, Duration::from_secs(2))
        .await
        .expect("connect");
    assert_eq!(
        again.apply_money(&retry).await.expect("retry"),
        MoneyOutcome::Duplicate { balance: 40 }
    );
    // The renamed record keeps its receive time, so the retention still forgets it.
    let forgotten = again
        .forget_tx_before(Sweep {
            game_id: g,
            env,
            before: chrono::Utc::now() + chrono::Duration::seconds(5),
            limit: 100,
        })
        .await
        .expect("forget");
    assert_eq!(forgotten, 2);
    assert_eq!(
        again
            .apply_money(&retry)
            .await
            .expect("after the retention"),
        MoneyOutcome::Applied {
            balance: 80,
            left_out: 0
        }
    );
}

/// One earn of the player `filler` in each environment of `events`, applied and answered
/// before anything else: the first event of a game and environment on a node waits for the
/// node to ready that environment's keys, and an event held up so would reach the store
/// after the others, so no order would hold between them.
async fn ready_environments(store: &RedisStore, game: Uuid, events: &[MoneyOp]) {
    for env in [Environment::Production, Environment::Sandbox] {
        if !events.iter().any(|event| event.env == env) {
            continue;
        }
        let warm = MoneyOp {
            env,
            ..by("filler", op(game, "warm", MoneyKind::Earned, 1))
        };
        store.apply_money_alone(&warm).await.expect("warm-up");
    }
}

/// Applies `events` of one game in one combined call: two lone earns of another player go
/// first and are out while `events` queue behind them, in order.
async fn one_call(
    store: &RedisStore,
    game: Uuid,
    events: &[MoneyOp],
) -> Vec<StoreResult<MoneyOutcome>> {
    ready_environments(store, game, events).await;
    let lone = [
        MoneyOp {
            player_id: "filler".into(),
            ..op(game, &Uuid::new_v4().to_string(), MoneyKind::Earned, 1)
        },
        MoneyOp {
            player_id: "filler".into(),
            ..op(game, &Uuid::new_v4().to_string(), MoneyKind::Earned, 1)
        },
    ];
    let all: Vec<_> = lone
        .iter()
        .chain(events)
        .map(|e| store.apply_money(e))
        .collect();
    let mut answers = join_all(all).await;
    answers.split_off(lone.len())
}

/// `event` sent by `player`.
fn by(player: &str, event: MoneyOp) -> MoneyOp {
    MoneyOp {
        player_id: player.into(),
        ..event
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_one_call_of_many_events_answers_each_as_alone() {
    let url = url();
    let prefix = unique_prefix();
    let store = Arc::new(
        RedisStore::connect(&url, &prefix, Duration::from_secs(2))
            .await
            .expect("connect"),
    );
    let shared: SharedStore = store.clone();
    let g = Uuid::new_v4();
    let env = Environment::Production;
    store
        .apply_money(&op(g, "seed", MoneyKind::Earned, 100))
        .await
        .expect("seed");
    set_string(&url, &Keys::new(&prefix).wallet(g, env, "broken"));

    let events = [
        op(g, "a", MoneyKind::Earned, 10),
        op(g, "a", MoneyKind::Earned, 10),
        op(g, "a", MoneyKind::Earned, 11),
        by("broken", op(g, "broken-earn", MoneyKind::Earned, 5)),
        by("broken", op(g, "broken-spend", MoneyKind::Spent, 1)),
        op(g, "s1", MoneyKind::Spent, 80),
        op(g, "s2", MoneyKind::Spent, 80),
        op(g, "s1", MoneyKind::Spent, 80),
        op(g, "pu", MoneyKind::Purchase, 7),
        op(g, "e2", MoneyKind::Earned, 5),
        op(g, "s2", MoneyKind::Spent, 80),
    ];
    let answers = one_call(&store, g, &events).await;
    let broken = |answer: &StoreResult<MoneyOutcome>| matches!(answer, Err(StoreError::Unavailable(message)) if message.contains("WRONGTYPE"));
    assert!(broken(&answers[3]), "{:?}", answers[3]);
    assert!(broken(&answers[4]), "{:?}", answers[4]);
    let rest: Vec<MoneyOutcome> = answers
        .into_iter()
        .enumerate()
        .filter(|(i, _)| ![3, 4].contains(i))
        .map(|(_, answer)| answer.expect("an answer"))
        .collect();
    assert_eq!(
        rest,
        [
            MoneyOutcome::Applied {
                balance: 110,
                left_out: 0
            },
            MoneyOutcome::Duplicate { balance: 110 },
            MoneyOutcome::TxConflict,
            MoneyOutcome::Applied {
                balance: 30,
                left_out: 0
            },
            MoneyOutcome::InsufficientFunds { balance: 30 },
            MoneyOutcome::Duplicate { balance: 30 },
            MoneyOutcome::Applied {
                balance: 0,
                left_out: 0
            },
            MoneyOutcome::Applied {
                balance: 35,
                left_out: 0
            },
            MoneyOutcome::InsufficientFunds { balance: 35 },
        ]
    );
    let (balance, ledger, days) = snapshot(&shared, g).await;
    assert_eq!(balance, 35);
    let lines: Vec<(&str, &str, i64)> = ledger
        .iter()
        .map(|l| (l.tx_id.as_str(), l.player_id.as_str(), l.balance_after))
        .filter(|(_, player, _)| *player != "filler")
        .collect();
    assert_eq!(
        lines,
        [
            ("seed", "p1", 100),
            ("a", "p1", 110),
            ("s1", "p1", 30),
            ("pu", "p1", 0),
            ("e2", "p1", 35)
        ]
    );
    assert_eq!(
        days[0].earned,
        // The seed, the warm-up and the two fillers of the filler player, then the events.
        BTreeMap::from([("gold".to_string(), 100 + 1 + 2 + 10 + 5)])
    );
    assert_eq!(days[0].spent, BTreeMap::from([("gold".to_string(), 80)]));
    assert_eq!(days[0].revenue_treatment_cents, 7);
    // The refused and failed events left no record: sent again alone, they are new.
    assert_eq!(
        store
            .apply_money(&op(g, "s2", MoneyKind::Spent, 35))
            .await
            .expect("s2"),
        MoneyOutcome::Applied {
            balance: 0,
            left_out: 0
        }
    );

    // At kill level 3 every new event of a call is refused and writes nothing, while a
    // known tx id is still answered from its record.
    store.set_kill_level(g, 3).await.expect("kill 3");
    let before = snapshot(&shared, g).await;
    let events = [
        op(g, "a", MoneyKind::Earned, 10),
        op(g, "k1", MoneyKind::Earned, 1),
        op(g, "k2", MoneyKind::Purchase, 1),
        op(g, "a", MoneyKind::Earned, 12),
    ];
    let answers: Vec<MoneyOutcome> = one_call(&store, g, &events)
        .await
        .into_iter()
        .map(|answer| answer.expect("an answer"))
        .collect();
    assert_eq!(
        answers,
        [
            MoneyOutcome::Duplicate { balance: 110 },
            MoneyOutcome::KillSwitch,
            MoneyOutcome::KillSwitch,
            MoneyOutcome::TxConflict,
        ]
    );
    assert_eq!(snapshot(&shared, g).await, before);
}

/// What `events` can have left in `game` under either environment: the ledger (without the
/// fillers of [`one_call`]), the day aggregates and revenues of days 1 and 2, the lifetime
/// spends and the balances of every player and currency of `events`.
async fn state(store: &SharedStore, game: Uuid, events: &[MoneyOp]) -> Vec<String> {
    let mut out = Vec::new();
    let days = [day(1), day(2)];
    for env in [Environment::Production, Environment::Sandbox] {
        let mut ledger = store.ledger(game, env).await.expect("ledger");
        ledger.retain(|entry| entry.player_id != "filler");
        out.push(format!("{env:?} ledger {ledger:?}"));
        let aggregates = store
            .day_aggregates(game, env, &days)
            .await
            .expect("aggregates");
        out.push(format!("{env:?} days {aggregates:?}"));
        let mut revenues = store
            .day_revenues(game, env, &days)
            .await
            .expect("revenues");
        revenues.iter_mut().for_each(|payers| payers.sort());
        out.push(format!("{env:?} revenues {revenues:?}"));
        let mut spends = store.spends(game, env).await.expect("spends");
        spends.sort();
        out.push(format!("{env:?} spends {spends:?}"));
        let mut totals: Vec<String> = store
            .player_day_totals(game, env, &days)
            .await
            .expect("player day totals")
            .iter()
            .map(|t| format!("{t:?}"))
            .collect();
        totals.sort();
        out.push(format!("{env:?} player days {totals:?}"));
        let currencies = ["gold".to_owned(), "gems".to_owned()];
        for event in events {
            let left_out = store
                .player_left_out(game, env, &event.player_id, &currencies, &days)
                .await
                .expect("left out");
            out.push(format!("{env:?} {} left out {left_out:?}", event.player_id));
        }
        for event in events {
            for currency in ["gold", "gems"] {
                let balance = store
                    .balance(game, env, &event.player_id, currency)
                    .await
                    .expect("balance");
                out.push(format!("{env:?} {} {currency} {balance}", event.player_id));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_one_call_across_environments_days_and_kinds_leaves_what_lone_calls_leave() {
    let url = url();
    let (prefix, other_prefix) = (unique_prefix(), unique_prefix());
    let timeout = Duration::from_secs(2);
    let combined = Arc::new(
        RedisStore::connect(&url, &prefix, timeout)
            .await
            .expect("connect"),
    );
    let alone = Arc::new(
        RedisStore::connect(&url, &other_prefix, timeout)
            .await
            .expect("connect"),
    );
    let g = Uuid::new_v4();
    let sandbox = |event: MoneyOp| MoneyOp {
        env: Environment::Sandbox,
        ..event
    };
    let on_day_2 = |event: MoneyOp| MoneyOp {
        ts: at(2, 9),
        ..event
    };
    let in_cohort = |event: MoneyOp| MoneyOp {
        cohort: Some("2025-W01".into()),
        ..event
    };
    let capped = |event: MoneyOp, cap: i64| MoneyOp {
        day_cap: Some(cap),
        ..event
    };
    let events = [
        in_cohort(op(g, "e1", MoneyKind::Earned, 50)),
        // The same tx id in the other environment is another record.
        sandbox(op(g, "e1", MoneyKind::Earned, 7)),
        on_day_2(MoneyOp {
            currency_id: "gems".into(),
            ..by("p2", op(g, "e2", MoneyKind::Earned, 9))
        }),
        op(g, "s1", MoneyKind::Spent, 20),
        sandbox(op(g, "s2", MoneyKind::Spent, 8)),
        MoneyOp {
            holdout: true,
            ..by("p3", op(g, "pu1", MoneyKind::Purchase, 499))
        },
        on_day_2(op(g, "pu2", MoneyKind::Purchase, 199)),
        in_cohort(op(g, "e3", MoneyKind::Earned, 5)),
        in_cohort(op(g, "e1", MoneyKind::Earned, 50)),
        MoneyOp {
            import: true,
            ..by("p4", op(g, "s3", MoneyKind::Spent, 30))
        },
        sandbox(op(g, "e1", MoneyKind::Earned, 8)),
        // Day caps: a player id with the fingerprint's separator in it, an imported spend,
        // and a player whose uncapped events earlier in the call already reached the cap.
        capped(by("p|x", op(g, "c1", MoneyKind::Earned, 40)), 30),
        capped(by("p|x", op(g, "c2", MoneyKind::Earned, 15)), 30),
        capped(
            MoneyOp {
                import: true,
                ..by("p5", op(g, "c3", MoneyKind::Spent, 30))
            },
            10,
        ),
        capped(op(g, "c4", MoneyKind::Earned, 5), 30),
    ];
    let expected = [
        MoneyOutcome::Applied {
            balance: 50,
            left_out: 0,
        },
        MoneyOutcome::Applied {
            balance: 7,
            left_out: 0,
        },
        MoneyOutcome::Applied {
            balance: 9,
            left_out: 0,
        },
        MoneyOutcome::Applied {
            balance: 30,
            left_out: 0,
        },
        MoneyOutcome::InsufficientFunds { balance: 7 },
        MoneyOutcome::Applied {
            balance: 0,
            left_out: 0,
        },
        MoneyOutcome::Applied {
            balance: 0,
            left_out: 0,
        },
        MoneyOutcome::Applied {
            balance: 35,
            left_out: 0,
        },
        MoneyOutcome::Duplicate { balance: 50 },
        MoneyOutcome::Applied {
            balance: -30,
            left_out: 0,
        },
        MoneyOutcome::TxConflict,
        MoneyOutcome::Applied {
            balance: 40,
            left_out: 10,
        },
        MoneyOutcome::Applied {
            balance: 55,
            left_out: 15,
        },
        MoneyOutcome::Applied {
            balance: -30,
            left_out: 20,
        },
        MoneyOutcome::Applied {
            balance: 40,
            left_out: 5,
        },
    ];
    let answers: Vec<MoneyOutcome> = one_call(&combined, g, &events)
        .await
        .into_iter()
        .map(|answer| answer.expect("an answer"))
        .collect();
    assert_eq!(answers, expected);

    // The same events, and the fillers one_call sends, one call each.
    ready_environments(&alone, g, &events).await;
    for tx in ["f1", "f2"] {
        let filler = by("filler", op(g, tx, MoneyKind::Earned, 1));
        alone.apply_money_alone(&filler).await.expect("filler");
    }
    let mut lone = Vec::new();
    for event in &events {
        lone.push(alone.apply_money_alone(event).await.expect("an answer"));
    }
    assert_eq!(lone, expected);
    let combined: SharedStore = combined;
    let alone: SharedStore = alone;
    assert_eq!(
        state(&combined, g, &events).await,
        state(&alone, g, &events).await
    );
}
