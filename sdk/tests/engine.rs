//! The Rust SDK against a spawned engine: init never waits on the network, the session
//! becomes ready (at init, or at login without auto login), offers come for offer requests, a
//! tracked purchase comes back as the inventory and a tracked money event as the balance,
//! kill switches set by the studio arrive (level 3 stops telemetry), the socket comes back
//! after the engine restarts (a resume point of the old engine is not honoured by the new
//! one, whatever it pushed meanwhile), telemetry queued during an outage (even across a
//! relaunch of the game) reaches the ledger once, and the cached state serves a cold start
//! while the engine is down.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use offer_domain::kill_level::KillLevel;
use offer_sdk::{InitError, InventoryItem, SdkCallback, SdkEvent, StateSource};
use reqwest::Method;
use serde_json::json;
use support::{
    Admin, Gate, Live, PATIENCE, config, eventually, free_port, options, options_with,
    outside_holdout, temp_dir, wait_for,
};

/// A random UUID as a game id, for configurations that never reach an engine.
fn some_game() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[test]
fn init_returns_without_an_engine_and_queues_telemetry() {
    let data = temp_dir("no-engine");
    let base = format!("http://127.0.0.1:{}", free_port());
    let sdk = offer_sdk::Sdk::init(
        &config(&some_game(), "ofr_live_sk_nothing", &base),
        Some("player_0".into()),
        None,
        options(&data),
    )
    .expect("init needs no network");
    assert_eq!(sdk.state_source(), StateSource::Default);
    assert_eq!(sdk.state().kill_switch.level, KillLevel::Normal);
    sdk.track(SdkEvent::FirstLoss { ts: None }).expect("queued");
    assert_eq!(sdk.pending_events(), 1);
    drop(sdk);
    let _ = std::fs::remove_dir_all(data);
}

#[test]
fn a_sandbox_key_with_the_production_environment_is_refused() {
    let data = temp_dir("mismatch");
    let refused = offer_sdk::Sdk::init(
        &config(&some_game(), "ofr_test_sk_abc", "http://127.0.0.1:1"),
        Some("player_0".into()),
        None,
        options(&data),
    );
    assert!(
        matches!(refused, Err(InitError::EnvironmentMismatch { .. })),
        "{refused:?}"
    );
    let _ = std::fs::remove_dir_all(data);
}

#[test]
fn ready_then_a_kill_switch_and_the_cache_serves_a_cold_start_with_the_engine_down() {
    let mut live = Live::start();
    let game_id = live.game_id.clone();
    let sdk = live.ready_sdk("player_1");
    assert_eq!(sdk.state_source(), StateSource::Live);
    let (status, body) = live.admin.call(
        Method::PUT,
        &format!("/v1/games/{game_id}/kill-switch"),
        Some(json!({"level": 2, "reason": "pricing bug"})),
    );
    assert_eq!(status, 200, "{body}");
    let SdkCallback::KillSwitch(ks) = wait_for(
        &sdk,
        "kill switch",
        |c| matches!(c, SdkCallback::KillSwitch(k) if k.level == KillLevel::OffersOff),
    ) else {
        unreachable!("filtered above")
    };
    assert_eq!(ks.reason, "pricing bug");
    assert_eq!(sdk.state().kill_switch.level, KillLevel::OffersOff);
    drop(sdk);
    live.engine.stop();

    // With the engine down: init needs no network.
    let cold = live.sdk("player_1");
    assert_eq!(cold.state_source(), StateSource::Cached);
    assert_eq!(cold.state().kill_switch.level, KillLevel::OffersOff);
    assert_eq!(cold.state().kill_switch.reason, "pricing bug");
}

#[test]
fn after_a_restart_the_socket_comes_back_and_offline_telemetry_lands_once() {
    let mut live = Live::start();
    let game_id = live.game_id.clone();
    let sdk = live.ready_sdk("player_2");

    live.engine.stop();
    for (tx_id, amount) in [("earn-1", 50), ("earn-2", 25)] {
        sdk.track(SdkEvent::CurrencyEarned {
            currency_id: "gems".into(),
            amount,
            source: Some("daily_reward".into()),
            tx_id: tx_id.into(),
            ts: None,
        })
        .expect("queued while offline");
    }
    sdk.track(SdkEvent::FirstLoss { ts: None }).expect("queued");
    assert_eq!(sdk.pending_events(), 3);

    live.engine.restart();
    // A new client: the old one's pooled connection went with the old process.
    let admin = Admin::new(&live.engine);
    wait_for(&sdk, "ready after the restart", |c| {
        matches!(c, SdkCallback::Ready { resumed: false, .. })
    });
    eventually("the queue empties", || sdk.pending_events() == 0);
    let (status, player) = admin.call(
        Method::GET,
        &format!("/v1/games/{game_id}/players/player_2"),
        None,
    );
    assert_eq!(status, 200, "{player}");
    assert_eq!(player["balances"]["gems"], 75, "{player}");
    let mut tx_ids: Vec<_> = player["ledger"]
        .as_array()
        .expect("ledger")
        .iter()
        .filter_map(|line| line["tx_id"].as_str())
        .collect();
    tx_ids.sort_unstable();
    assert_eq!(tx_ids, ["earn-1", "earn-2"], "each once: {player}");
}

#[test]
fn after_a_restart_a_resume_point_of_the_old_engine_is_not_honoured() {
    let mut live = Live::start();
    let gate = Gate::new(live.engine.port);
    let player = &outside_holdout(&live.game_id, "player_8");
    let sdk = offer_sdk::Sdk::init(
        &config(&live.game_id, &live.key, &gate.url()),
        Some(player.into()),
        None,
        options(&live.sdk_data),
    )
    .expect("init");
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
    // The ready and the offer: the SDK has read up to seq 2 of the first engine.
    sdk.request_offer("first_loss");
    wait_for(&sdk, "offer", |c| matches!(c, SdkCallback::Offer(_)));

    gate.close();
    live.engine.restart();
    // The new engine hears of the session before the SDK is back: two purchases sent over
    // REST (as the game's server or another install may) push the inventory twice, so the
    // session's new history reaches seq 2 too.
    let admin = Admin::new(&live.engine);
    let session_id = sdk.session_id();
    let (status, body) = admin.call_as(
        &live.key,
        Method::POST,
        "/v1/sdk/sessions",
        Some(json!({"session_id": session_id, "player_id": player})),
    );
    assert_eq!(
        status, 200,
        "the session the old engine stored, resumed: {body}"
    );
    for tx_id in ["iap-1", "iap-2"] {
        let (status, body) = admin.call_as(
            &live.key,
            Method::POST,
            "/v1/sdk/events",
            Some(json!({"session_id": session_id, "events": [
                {"type": "purchase", "item_ids": ["sword"], "price_cents": 499, "tx_id": tx_id}]})),
        );
        assert_eq!(status, 202, "{body}");
    }
    gate.open();

    // The SDK resumes from seq 2 of the old epoch: not honoured, so nothing of the new
    // history is replayed as if it followed the old one, and the ready carries the whole
    // state (both swords).
    let mut before_ready = Vec::new();
    let ready = loop {
        match sdk.wait(PATIENCE) {
            Some(ready @ SdkCallback::Ready { .. }) => break ready,
            Some(other) => before_ready.push(other),
            None => panic!("no ready after the restart; saw {before_ready:#?}"),
        }
    };
    let two_swords = vec![InventoryItem {
        item_id: "sword".into(),
        quantity: 2,
    }];
    assert!(
        matches!(&ready, SdkCallback::Ready { resumed: false, inventory, .. } if *inventory == two_swords),
        "{ready:?}"
    );
    assert!(
        !before_ready
            .iter()
            .any(|c| matches!(c, SdkCallback::Inventory(_) | SdkCallback::Ready { .. })),
        "nothing replayed: {before_ready:#?}"
    );
    // One ready per connection, and the socket serves the game again.
    sdk.request_offer("first_loss");
    let mut after_ready = Vec::new();
    loop {
        match sdk.wait(PATIENCE) {
            Some(SdkCallback::Offer(_)) => break,
            Some(other) => after_ready.push(other),
            None => panic!("no offer after the restart; saw {after_ready:#?}"),
        }
    }
    assert!(
        !after_ready
            .iter()
            .any(|c| matches!(c, SdkCallback::Ready { .. } | SdkCallback::Inventory(_))),
        "no duplicate callbacks: {after_ready:#?}"
    );
}

#[test]
fn telemetry_tracked_while_the_engine_is_down_outlives_the_game_and_lands_once() {
    let mut live = Live::start();
    let game_id = live.game_id.clone();
    live.engine.stop();

    let offline = live.sdk("player_3");
    offline
        .track(SdkEvent::CurrencyEarned {
            currency_id: "gems".into(),
            amount: 40,
            source: None,
            tx_id: String::new(),
            ts: None,
        })
        .expect("queued");
    drop(offline);

    live.engine.restart();
    // A new client: the old one's pooled connection went with the old process.
    let admin = Admin::new(&live.engine);
    let next_launch = live.sdk("player_3");
    assert_eq!(next_launch.pending_events(), 1, "read back from disk");
    wait_for(&next_launch, "ready", |c| {
        matches!(c, SdkCallback::Ready { .. })
    });
    eventually("the queue empties", || next_launch.pending_events() == 0);
    let (status, player) = admin.call(
        Method::GET,
        &format!("/v1/games/{game_id}/players/player_3"),
        None,
    );
    assert_eq!(status, 200, "{player}");
    assert_eq!(player["balances"]["gems"], 40, "{player}");
    assert_eq!(player["ledger_total"], 1, "{player}");
    let tx_id = player["ledger"][0]["tx_id"].as_str().expect("tx_id");
    assert!(!tx_id.is_empty(), "a generated tx_id: {player}");
}

#[test]
fn at_kill_switch_level_3_telemetry_stops() {
    let live = Live::start();
    let game_id = live.game_id.clone();
    let sdk = live.ready_sdk("player_4");
    let (status, body) = live.admin.call(
        Method::PUT,
        &format!("/v1/games/{game_id}/kill-switch"),
        Some(json!({"level": 3, "reason": "incident"})),
    );
    assert_eq!(status, 200, "{body}");
    wait_for(
        &sdk,
        "kill switch 3",
        |c| matches!(c, SdkCallback::KillSwitch(k) if k.level == KillLevel::SdkOff),
    );
    assert_eq!(
        sdk.track(SdkEvent::FirstLoss { ts: None }),
        Err(offer_sdk::TrackError::SdkOff)
    );
    assert_eq!(sdk.pending_events(), 0);
}

#[test]
fn an_offer_request_is_answered_and_one_without_a_socket_is_offline() {
    let live = Live::start();
    let game_id = live.game_id.clone();
    let player = outside_holdout(&game_id, "player_5");
    let sdk = live.ready_sdk(&player);
    sdk.request_offer("first_loss");
    let SdkCallback::Offer(offer) = wait_for(&sdk, "offer", |c| {
        matches!(c, SdkCallback::Offer(_) | SdkCallback::NoOffer { .. })
    }) else {
        panic!("a store shelf always has an offer");
    };
    assert!(offer["offer_id"].is_string(), "{offer}");
    drop(sdk);

    let offline_data = temp_dir("sdk-offline");
    let offline = offer_sdk::Sdk::init(
        &config(&game_id, &live.key, "http://127.0.0.1:1"),
        Some(player),
        None,
        options(&offline_data),
    )
    .expect("init");
    offline.request_offer("first_loss");
    assert_eq!(
        wait_for(&offline, "no offer", |c| matches!(
            c,
            SdkCallback::NoOffer { .. }
        )),
        SdkCallback::NoOffer {
            outcome: "offline".into()
        }
    );
    drop(offline);
    let _ = std::fs::remove_dir_all(offline_data);
}

#[test]
fn without_auto_login_the_session_opens_at_login_for_one_player() {
    let live = Live::start();
    let sdk = offer_sdk::Sdk::init(
        &live.config(),
        None,
        None,
        options_with(
            &live.sdk_data,
            r#"{"auto_login": false, "player_id_source": "custom"}"#,
        ),
    )
    .expect("init without a player");
    assert_eq!(sdk.player_id(), None);
    assert!(sdk.login("player_6"));
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
    assert!(!sdk.login("someone_else"), "a session has one player");
    assert_eq!(sdk.player_id().as_deref(), Some("player_6"));
}

#[test]
fn a_purchase_and_a_money_event_tracked_by_the_game_come_back_as_the_inventory_and_balance() {
    let live = Live::start();
    let sdk = live.sdk("player_7");
    let SdkCallback::Ready { inventory, .. } =
        wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }))
    else {
        unreachable!("filtered above")
    };
    assert!(inventory.is_empty(), "{inventory:?}");
    sdk.track(SdkEvent::Purchase {
        offer_id: None,
        item_ids: vec!["sword".into()],
        price_cents: 499,
        tx_id: String::new(),
        ts: None,
        receipt: None,
    })
    .expect("queued");
    assert_eq!(
        wait_for(&sdk, "inventory", |c| matches!(
            c,
            SdkCallback::Inventory(_)
        )),
        SdkCallback::Inventory(vec![InventoryItem {
            item_id: "sword".into(),
            quantity: 1
        }])
    );
    // Telemetry goes over REST, and the engine pushes the new balance to the socket.
    sdk.track(SdkEvent::CurrencyEarned {
        currency_id: "gems".into(),
        amount: 500,
        source: Some("purchase".into()),
        tx_id: String::new(),
        ts: None,
    })
    .expect("queued");
    assert_eq!(
        wait_for(&sdk, "balance", |c| matches!(
            c,
            SdkCallback::Balance { .. }
        )),
        SdkCallback::Balance {
            currency_id: "gems".into(),
            balance: 500
        }
    );
}
