//! The Redis backend on a Redis Cluster losing one of its three masters: each test starts a
//! private cluster, stops a node mid-run and starts it again. (The whole HTTP suite and the
//! conformance cases run on the shared cluster with `OFFER_TEST_STORE=redis-cluster`.)

use std::time::{Duration, Instant};

use offer_engine::store::Bus;
use offer_engine::store::redis::RedisStore;
use offer_wire::bus::BusMessage;
use reqwest::StatusCode;
use serde_json::json;
use uuid::Uuid;

use crate::fixtures::item;
use crate::helpers::{Backend, TestApp, spawn_tuned};
use crate::redis_harness::{PrivateCluster, unique_prefix};

/// The per-call timeout of these stores.
const TIMEOUT: Duration = Duration::from_secs(1);

/// How long a recovery may take (reconnections back off up to a few seconds).
const RECOVERY: Duration = Duration::from_secs(20);

/// Waits for `msg` on `bus`, publishing it through `from` again every 200 ms (a publish may
/// land while the listener is still moving), and skipping what else arrives (the resync
/// notices, late copies of earlier messages). Answers whether a resync notice came first.
async fn hears(
    from: &RedisStore,
    bus: &mut tokio::sync::broadcast::Receiver<BusMessage>,
    msg: &BusMessage,
) -> bool {
    let deadline = Instant::now() + RECOVERY;
    let mut resynced = false;
    loop {
        assert!(Instant::now() < deadline, "the bus did not carry {msg:?}");
        if from.publish(msg).await.is_err() {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        let wait = Instant::now() + Duration::from_millis(200);
        while let Ok(Ok(got)) = tokio::time::timeout_at(wait.into(), bus.recv()).await {
            if got == *msg {
                return resynced;
            }
            resynced |= got == BusMessage::Resync;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bus_outlives_the_node_it_listens_on() {
    let mut cluster = PrivateCluster::start();
    // Every store listens on the first seed node; the channel's slot is on that node too, so
    // losing it takes both the listener's node and the node the client would publish to.
    let prefix = loop {
        let prefix = unique_prefix();
        if cluster.owner_of(&format!("{prefix}:bus")) == 0 {
            break prefix;
        }
    };
    let a = RedisStore::connect(&cluster.url(), &prefix, TIMEOUT)
        .await
        .expect("connect a");
    let b = RedisStore::connect(&cluster.url(), &prefix, TIMEOUT)
        .await
        .expect("connect b");
    let mut on_b = b.subscribe();
    let first = BusMessage::GameChanged {
        game_id: Uuid::new_v4(),
        origin: Uuid::new_v4(),
    };
    hears(&a, &mut on_b, &first).await;

    cluster.kill(0);
    let second = BusMessage::KillSwitch {
        game_id: Uuid::new_v4(),
        level: 3,
        reason: "incident".into(),
        updated_at: chrono::Utc::now(),
    };
    assert!(
        hears(&a, &mut on_b, &second).await,
        "a listener that moved tells its node to resync"
    );

    cluster.restart(0);
    let third = BusMessage::KeyRevoked {
        key_hash: "ab".repeat(32),
    };
    hears(&b, &mut a.subscribe(), &third).await;
}

#[tokio::test]
async fn a_down_node_answers_503_for_its_games_only_and_never_hangs() {
    let mut cluster = PrivateCluster::start();
    let url = cluster.url();
    let app = spawn_tuned(Backend::RedisCluster, |s| s.store.redis_url = url).await;
    let prefix = app.running.state.services.settings.store.key_prefix.clone();
    let first = app.create_game().await;
    // The node to stop holds none of the deployment-wide keys (the keys without a hash tag)
    // a game's requests use, so everything that is not one of its games keeps working
    // without it. The audit trail's deployment-wide records and the operator's recorded
    // settings are written only by member, device sign-in and operator changes.
    let unused_by_games = [
        format!("{prefix}:global:audit"),
        format!("{prefix}:global:operator_settings"),
    ];
    let victim = (0..3)
        .find(|node| {
            cluster
                .keys_on(*node, &format!("{prefix}:*"))
                .iter()
                .all(|key| key.contains('{') || unused_by_games.contains(key))
        })
        .expect("the two deployment-wide hashes games use leave one of three nodes free");
    let (mut on_victim, mut elsewhere) = (None, None);
    let mut game = first;
    while on_victim.is_none() || elsewhere.is_none() {
        if cluster.owner_of(&format!("{{{game}}}")) == victim {
            on_victim = Some(game);
        } else {
            elsewhere = Some(game);
        }
        game = app.create_game().await;
    }
    let (on_victim, elsewhere) = (on_victim.expect("set"), elsewhere.expect("set"));
    for game in [&on_victim, &elsewhere] {
        app.bulk(game, json!([item("sword", "equipment", 1.0)]))
            .expect(StatusCode::OK)
            .await;
    }

    cluster.kill(victim);
    let started = Instant::now();
    app.bulk(&on_victim, json!([item("axe", "equipment", 1.0)]))
        .expect_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable")
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered within 2 s"
    );
    app.bulk(&elsewhere, json!([item("axe", "equipment", 1.0)]))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(app.items(&elsewhere).await.len(), 2);
    // Readiness is the cluster's verdict, which has not declared the node failed yet.
    app.get("/readyz").no_token().expect(StatusCode::OK).await;

    // The node comes back (empty, as it keeps no data): its slots serve again.
    cluster.restart(victim);
    let deadline = Instant::now() + RECOVERY;
    while app
        .bulk(&on_victim, json!([item("bow", "equipment", 1.0)]))
        .send()
        .await
        .status()
        != StatusCode::OK
    {
        assert!(
            Instant::now() < deadline,
            "the node's games did not recover"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls `/readyz` until it answers `status`.
async fn readiness_becomes(app: &TestApp, status: StatusCode) {
    let deadline = Instant::now() + RECOVERY;
    while app.get("/readyz").no_token().send().await.status() != status {
        assert!(Instant::now() < deadline, "/readyz did not become {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn a_failed_cluster_makes_the_engine_unready_then_ready_again() {
    let mut cluster = PrivateCluster::with_node_timeout(Duration::from_secs(2));
    let url = cluster.url();
    let app = spawn_tuned(Backend::RedisCluster, |s| s.store.redis_url = url).await;
    let game = loop {
        let game = app.create_game().await;
        if cluster.owner_of(&format!("{{{game}}}")) != 0 {
            break game;
        }
    };
    app.get("/readyz").no_token().expect(StatusCode::OK).await;

    // Without a replica to take over, the cluster declares itself failed and every slot
    // stops, the surviving masters' too.
    cluster.kill(0);
    readiness_becomes(&app, StatusCode::SERVICE_UNAVAILABLE).await;
    let started = Instant::now();
    app.bulk(&game, json!([item("axe", "equipment", 1.0)]))
        .expect_error(StatusCode::SERVICE_UNAVAILABLE, "unavailable")
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered within 2 s"
    );

    cluster.restart(0);
    readiness_becomes(&app, StatusCode::OK).await;
}
