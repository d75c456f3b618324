//! What only Redis has to show: a missing or dying server answers `Unavailable` quickly
//! instead of hanging, and recovers.

use std::time::{Duration, Instant};

use offer_engine::store::redis::RedisStore;
use offer_engine::store::{Bus, Collection, Documents, Money, MoneyKind, Store, StoreError};
use offer_wire::bus::BusMessage;
use uuid::Uuid;

use crate::redis_harness::{start_on, start_private, unique_prefix};

use super::{bytes, op};

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
    // Many events of one game at once (one goes alone, the rest share the calls after
    // it): every one is answered, each `Unavailable`.
    let game = Uuid::new_v4();
    let events: Vec<_> = (0..100)
        .map(|i| op(game, &format!("t{i}"), MoneyKind::Earned, 1))
        .collect();
    let answers = futures::future::join_all(events.iter().map(|e| store.apply_money(e))).await;
    for answer in answers {
        assert!(
            matches!(answer, Err(StoreError::Unavailable(_))),
            "expected Unavailable, got {answer:?}"
        );
    }

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
