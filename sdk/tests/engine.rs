//! The Rust SDK against a spawned engine: init never waits on the network, the session
//! becomes ready (at init, or at login without auto login), offers come for offer requests, a
//! tracked purchase comes back as the inventory, kill switches set by the studio arrive (level
//! 3 stops telemetry), the socket comes back after the engine restarts, telemetry queued
//! during an outage (even across a relaunch of the game) reaches the ledger once, and the
//! cached state serves a cold start while the engine is down.

mod support;

use offer_domain::kill_level::KillLevel;
use offer_sdk::{InitError, InventoryItem, SdkCallback, SdkEvent, StateSource};
use reqwest::Method;
use serde_json::json;
use support::{
    Admin, Engine, config, eventually, free_port, options, options_with, temp_dir, wait_for,
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
    let engine_data = temp_dir("engine");
    let sdk_data = temp_dir("sdk");
    let mut engine = Engine::start(free_port(), &engine_data);
    let admin = Admin::new(&engine);
    let (game_id, key) = admin.game_and_key();
    let cfg = config(&game_id, &key, &engine.url());
    let sdk = offer_sdk::Sdk::init(&cfg, Some("player_1".into()), None, options(&sdk_data))
        .expect("init");
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
    assert_eq!(sdk.state_source(), StateSource::Live);
    let (status, body) = admin.call(
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
    engine.stop();

    let cold = offer_sdk::Sdk::init(&cfg, Some("player_1".into()), None, options(&sdk_data))
        .expect("init with the engine down");
    assert_eq!(cold.state_source(), StateSource::Cached);
    assert_eq!(cold.state().kill_switch.level, KillLevel::OffersOff);
    assert_eq!(cold.state().kill_switch.reason, "pricing bug");
    drop(cold);
    let _ = std::fs::remove_dir_all(engine_data);
    let _ = std::fs::remove_dir_all(sdk_data);
}

#[test]
fn after_a_restart_the_socket_comes_back_and_offline_telemetry_lands_once() {
    let engine_data = temp_dir("engine");
    let sdk_data = temp_dir("sdk");
    let mut engine = Engine::start(free_port(), &engine_data);
    let admin = Admin::new(&engine);
    let (game_id, key) = admin.game_and_key();
    let sdk = offer_sdk::Sdk::init(
        &config(&game_id, &key, &engine.url()),
        Some("player_2".into()),
        None,
        options(&sdk_data),
    )
    .expect("init");
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));

    engine.stop();
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

    engine.restart();
    let admin = Admin::new(&engine);
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
    drop(sdk);
    drop(engine);
    let _ = std::fs::remove_dir_all(engine_data);
    let _ = std::fs::remove_dir_all(sdk_data);
}

#[test]
fn telemetry_tracked_while_the_engine_is_down_outlives_the_game_and_lands_once() {
    let engine_data = temp_dir("engine");
    let sdk_data = temp_dir("sdk");
    let mut engine = Engine::start(free_port(), &engine_data);
    let (game_id, key) = Admin::new(&engine).game_and_key();
    let cfg = config(&game_id, &key, &engine.url());
    engine.stop();

    let offline = offer_sdk::Sdk::init(&cfg, Some("player_3".into()), None, options(&sdk_data))
        .expect("init with the engine down");
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

    engine.restart();
    let next_launch = offer_sdk::Sdk::init(&cfg, Some("player_3".into()), None, options(&sdk_data))
        .expect("init");
    assert_eq!(next_launch.pending_events(), 1, "read back from disk");
    wait_for(&next_launch, "ready", |c| {
        matches!(c, SdkCallback::Ready { .. })
    });
    eventually("the queue empties", || next_launch.pending_events() == 0);
    let (status, player) = Admin::new(&engine).call(
        Method::GET,
        &format!("/v1/games/{game_id}/players/player_3"),
        None,
    );
    assert_eq!(status, 200, "{player}");
    assert_eq!(player["balances"]["gems"], 40, "{player}");
    assert_eq!(player["ledger_total"], 1, "{player}");
    let tx_id = player["ledger"][0]["tx_id"].as_str().expect("tx_id");
    assert!(!tx_id.is_empty(), "a generated tx_id: {player}");
    drop(next_launch);
    drop(engine);
    let _ = std::fs::remove_dir_all(engine_data);
    let _ = std::fs::remove_dir_all(sdk_data);
}

#[test]
fn at_kill_switch_level_3_telemetry_stops() {
    let engine_data = temp_dir("engine");
    let sdk_data = temp_dir("sdk");
    let engine = Engine::start(free_port(), &engine_data);
    let admin = Admin::new(&engine);
    let (game_id, key) = admin.game_and_key();
    let sdk = offer_sdk::Sdk::init(
        &config(&game_id, &key, &engine.url()),
        Some("player_4".into()),
        None,
        options(&sdk_data),
    )
    .expect("init");
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
    let (status, body) = admin.call(
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
    drop(sdk);
    drop(engine);
    let _ = std::fs::remove_dir_all(engine_data);
    let _ = std::fs::remove_dir_all(sdk_data);
}

#[test]
fn an_offer_request_is_answered_and_one_without_a_socket_is_offline() {
    let engine_data = temp_dir("engine");
    let sdk_data = temp_dir("sdk");
    let engine = Engine::start(free_port(), &engine_data);
    let (game_id, key) = Admin::new(&engine).game_and_key();
    let sdk = offer_sdk::Sdk::init(
        &config(&game_id, &key, &engine.url()),
        Some("player_5".into()),
        None,
        options(&sdk_data),
    )
    .expect("init");
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
    sdk.request_offer("first_loss");
    let SdkCallback::Offer(offer) = wait_for(&sdk, "offer", |c| {
        matches!(c, SdkCallback::Offer(_) | SdkCallback::NoOffer { .. })
    }) else {
        panic!("a store shelf always has an offer");
    };
    assert!(offer["offer_id"].is_string(), "{offer}");
    drop(sdk);
    drop(engine);

    let offline_data = temp_dir("sdk-offline");
    let offline = offer_sdk::Sdk::init(
        &config(&game_id, &key, "http://127.0.0.1:1"),
        Some("player_5".into()),
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
    let _ = std::fs::remove_dir_all(engine_data);
    let _ = std::fs::remove_dir_all(sdk_data);
}

#[test]
fn without_auto_login_the_session_opens_at_login_for_one_player() {
    let engine_data = temp_dir("engine");
    let sdk_data = temp_dir("sdk");
    let engine = Engine::start(free_port(), &engine_data);
    let (game_id, key) = Admin::new(&engine).game_and_key();
    let sdk = offer_sdk::Sdk::init(
        &config(&game_id, &key, &engine.url()),
        None,
        None,
        options_with(
            &sdk_data,
            r#"{"auto_login": false, "player_id_source": "custom"}"#,
        ),
    )
    .expect("init without a player");
    assert_eq!(sdk.player_id(), None);
    assert!(sdk.login("player_6"));
    wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
    assert!(!sdk.login("someone_else"), "a session has one player");
    assert_eq!(sdk.player_id().as_deref(), Some("player_6"));
    drop(sdk);
    drop(engine);
    let _ = std::fs::remove_dir_all(engine_data);
    let _ = std::fs::remove_dir_all(sdk_data);
}

#[test]
fn a_purchase_tracked_by_the_game_comes_back_as_the_inventory() {
    let engine_data = temp_dir("engine");
    let sdk_data = temp_dir("sdk");
    let engine = Engine::start(free_port(), &engine_data);
    let (game_id, key) = Admin::new(&engine).game_and_key();
    let sdk = offer_sdk::Sdk::init(
        &config(&game_id, &key, &engine.url()),
        Some("player_7".into()),
        None,
        options(&sdk_data),
    )
    .expect("init");
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
    drop(sdk);
    drop(engine);
    let _ = std::fs::remove_dir_all(engine_data);
    let _ = std::fs::remove_dir_all(sdk_data);
}
