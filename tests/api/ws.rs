//! The WebSocket gateway through real sockets (`tokio-tungstenite`): both wire formats, offers,
//! wallets, the kill switch across two nodes sharing one Redis, resume, and the robustness
//! limits (slow consumer, oversized and malformed frames, bad keys).

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use uuid::Uuid;

use super::fixtures::{Sdk, earned, item, pack, spent, store_shelf};
use super::helpers::{
    Backend, TestApp, default_backend, shared_backend, spawn_app, spawn_app_on, spawn_heartbeat,
    spawn_tuned,
};
use super::ws_client::{
    Client, Fmt, JSON_PROTOCOL, PATIENCE, VARYING_FIELDS, assert_fields, connect, event, fresh,
    offer_request, try_connect,
};

/// A game with a store shelf, so the last level always has an offer, and a client in `fmt`
/// whose fresh session got its `ready`.
async fn ready_on_shelf(app: &TestApp, fmt: Fmt) -> (Sdk, Client) {
    let sdk = app.game_with(store_shelf()).await;
    let mut c = connect(app, &sdk.key, fmt).await;
    let ready = c.hello(fresh(&sdk.game), None).await;
    assert_eq!(ready["type"], "ready", "{ready}");
    (sdk, c)
}

/// The node's handle of an open production session.
fn open_session(app: &TestApp, game: &str, session: Uuid) -> offer_actors::SessionHandle {
    app.running
        .state
        .services
        .actors
        .session(&offer_actors::SessionKey {
            game_id: game.parse().expect("uuid"),
            env: offer_domain::environment::Environment::Production,
            session_id: session,
        })
        .expect("session open")
}

/// Polls `done` every 10 ms until it holds (within [`PATIENCE`]).
async fn wait_until(mut done: impl FnMut() -> bool) {
    tokio::time::timeout(PATIENCE, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("condition reached in time");
}

/// Drops the fields that differ by nature between two sessions (ids, times, the session's
/// epoch, the decoder's wording of a parse error).
fn shape(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        for k in VARYING_FIELDS {
            if o.contains_key(k) {
                o.insert(k.into(), Value::Null);
            }
        }
    }
    v
}

/// One scripted conversation; returns every server message.
async fn conversation(app: &TestApp, sdk: &Sdk, fmt: Fmt) -> Vec<Value> {
    let mut c = connect(app, &sdk.key, fmt).await;
    let mut seen = vec![c.hello(fresh(&sdk.game), None).await];
    c.send(event(earned("gems", 50, Uuid::new_v4()))).await;
    seen.push(c.recv().await);
    c.send(event(
        json!({"type": "currency_low", "currency_id": "gems", "balance": 1}),
    ))
    .await;
    seen.push(c.recv().await);
    c.send(offer_request("first_loss")).await;
    seen.push(c.recv().await);
    c.send(json!({"type": "nonsense"})).await;
    seen.push(c.recv().await);
    seen
}

#[tokio::test]
async fn json_and_msgpack_sessions_give_the_same_messages() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let json = conversation(&app, &sdk, Fmt::Json).await;
    let msgpack = conversation(&app, &sdk, Fmt::MsgPack).await;
    let types: Vec<&Value> = json.iter().map(|m| &m["type"]).collect();
    assert_eq!(
        types,
        ["ready", "balance", "offer", "offer", "error"]
            .map(|t| json!(t))
            .iter()
            .collect::<Vec<_>>(),
        "{json:#?}"
    );
    for (j, m) in json.iter().zip(&msgpack) {
        assert_eq!(shape(j), shape(m), "same message in both formats");
    }
    let seqs: Vec<u64> = json
        .iter()
        .map(|m| m["seq"].as_u64().expect("seq"))
        .collect();
    assert_eq!(seqs, [1, 2, 3, 4, 5], "seq increases by one per message");
}

#[tokio::test]
async fn hello_gets_ready_first_and_triggers_push_offers() {
    let app = spawn_app().await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    // The kill switch reaches the node's sockets asynchronously; one that reached a session
    // opened but not yet attached would be numbered before its `ready`. So a watcher sees
    // the change arrive before the session under test opens.
    let mut watcher = connect(&app, &key, Fmt::Json).await;
    watcher.hello(fresh(&game), None).await;
    app.set_kill_switch(&game, 1).await;
    assert_eq!(watcher.recv_type("kill_switch").await["level"], 1);
    let mut c = connect(&app, &key, Fmt::Json).await;
    let ready = c.hello(fresh(&game), None).await;
    assert_eq!(ready["type"], "ready");
    assert_eq!(ready["seq"], 1);
    assert_eq!(ready["kill_switch"]["level"], 1);
    assert_eq!(ready["mode"], "shadow");
    assert!(ready["config_version"].is_u64());
    for trigger in ["currency_low", "first_loss", "boss_raid"] {
        let mut trigger_event = json!({"type": trigger});
        if trigger == "currency_low" {
            trigger_event["currency_id"] = json!("gems");
        }
        c.send(event(trigger_event)).await;
        let offer = c.recv_answer().await;
        assert_eq!(offer["type"], "offer", "{trigger}: {offer}");
        assert!(offer["offer_id"].is_string());
        assert!(offer["items"].as_array().is_some_and(|i| !i.is_empty()));
        assert!(offer["price_cents"].as_i64().is_some_and(|p| p > 0));
        assert!((1..=4).contains(&offer["fallback_level"].as_u64().expect("level")));
    }
    // A non-trigger event pushes nothing: the next message answers the offer request.
    c.send(event(
        json!({"type": "offer_dismissed", "offer_id": Uuid::new_v4()}),
    ))
    .await;
    c.send(offer_request("boss_raid")).await;
    assert_eq!(c.recv_answer().await["type"], "offer");
    // A catalogue change on this very node is announced to its sockets.
    app.bulk(&game, json!([item("axe", "equipment", 2.99)]))
        .expect(StatusCode::OK)
        .await;
    assert!(c.recv_type("config").await["config_version"].is_u64());
}

#[tokio::test]
async fn money_events_push_balances_and_overspend_changes_nothing() {
    let app = spawn_app_on(shared_backend()).await;
    let (_, mut c) = ready_on_shelf(&app, Fmt::Json).await;
    let earn = event(earned("gems", 100, Uuid::new_v4()));
    c.send(earn.clone()).await;
    let b = c.recv().await;
    assert_fields(
        &b,
        json!({"type": "balance", "currency_id": "gems", "balance": 100}),
    );
    c.send(event(spent("gems", 30, Uuid::new_v4()))).await;
    assert_eq!(c.recv().await["balance"], 70);
    c.send(event(spent("gems", 71, Uuid::new_v4()))).await;
    let e = c.recv().await;
    assert_fields(&e, json!({"type": "error", "code": "insufficient_funds"}));
    // The same earn again is an idempotent replay: its first result is pushed again.
    c.send(earn).await;
    assert_eq!(c.recv().await["balance"], 100, "the replayed result");
    // Neither the refusal nor the replay changed the wallet: exactly 70 can be spent.
    c.send(event(spent("gems", 70, Uuid::new_v4()))).await;
    assert_eq!(c.recv().await["balance"], 0);
}

#[tokio::test]
async fn kill_switch_and_catalogue_reach_the_other_node() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let Sdk { game, key } = a.game_with(json!([])).await;
    let mut on_b = connect(&b, &key, Fmt::MsgPack).await;
    assert_eq!(
        on_b.hello(fresh(&game), None).await["kill_switch"]["level"],
        0
    );

    // A catalogue change on A is served by B: B had no offer, then has one.
    on_b.send(offer_request("first_loss")).await;
    let none = on_b.recv().await;
    assert_eq!(none["type"], "no_offer", "empty catalogue: {none}");
    a.bulk(&game, json!([pack("gems_100", 100, 0.99)]))
        .expect(StatusCode::OK)
        .await;
    let config = on_b.recv_type("config").await;
    assert!(config["config_version"].is_u64());
    on_b.send(offer_request("first_loss")).await;
    let offer = on_b.recv().await;
    assert_eq!(offer["type"], "offer", "{offer}");
    assert_eq!(offer["items"][0]["item_id"], "gems_100");

    // The kill switch set through A reaches the socket on B, and B stops offers.
    a.set_kill_switch(&game, 2).await;
    let ks = on_b.recv_type("kill_switch").await;
    assert_eq!(ks["level"], 2);
    assert_eq!(ks["reason"], "level 2");
    on_b.send(offer_request("first_loss")).await;
    let none = on_b.recv().await;
    assert_fields(&none, json!({"type": "no_offer", "outcome": "kill_switch"}));

    // A client connecting to B afterwards learns the level in `ready`.
    let mut late = connect(&b, &key, Fmt::Json).await;
    assert_eq!(
        late.hello(fresh(&game), None).await["kill_switch"]["level"],
        2
    );

    // Level 3: events are refused with sdk_disabled.
    a.set_kill_switch(&game, 3).await;
    while late.recv_type("kill_switch").await["level"] != 3 {}
    late.send(event(json!({"type": "first_loss"}))).await;
    let e = late.recv().await;
    assert_fields(&e, json!({"type": "error", "code": "sdk_disabled"}));
}

#[tokio::test]
async fn resume_after_reconnect_gets_the_missed_messages() {
    let app = spawn_app().await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    let session = fresh(&game);
    let mut first = connect(&app, &key, Fmt::Json).await;
    let ready = first.hello(session, None).await;
    assert_eq!(ready["seq"], 1);
    let epoch = ready["epoch"]
        .as_str()
        .expect("ready names its epoch")
        .to_owned();
    first.send(offer_request("first_loss")).await;
    let offer = first.recv().await;
    assert_fields(&offer, json!({"type": "offer", "seq": 2}));
    first.ws.close(None).await.expect("close");
    drop(first);
    // Wait until the server let go of the socket, then change things while it is away.
    let handle = open_session(&app, &game, session);
    wait_until(|| !handle.socket_attached()).await;
    // The fan-out runs after the REST answer, and a flip whose fan-out comes after a newer
    // flip is (rightly) never sent: wait until each flip reached the session.
    app.set_kill_switch(&game, 1).await;
    wait_until(|| handle.last_seq() == 3).await;
    app.set_kill_switch(&game, 0).await;
    wait_until(|| handle.last_seq() == 4).await;

    let mut back = connect(&app, &key, Fmt::Json).await;
    let missed = back.hello(session, Some((2, &epoch))).await;
    assert_fields(
        &missed,
        json!({"type": "kill_switch", "seq": 3, "level": 1}),
    );
    let missed = back.recv().await;
    assert_fields(
        &missed,
        json!({"type": "kill_switch", "seq": 4, "level": 0}),
    );
    let ready = back.recv().await;
    assert_fields(
        &ready,
        json!({"type": "ready", "seq": 5, "resumed": true, "epoch": epoch}),
    );

    // A resume point the ring no longer holds (or never held) gets a fresh ready; so does
    // one without the epoch (a client from before epochs) or with another epoch.
    let mut seq = 5;
    for (resume_from, epoch) in [(1000, Some(epoch.as_str())), (4, None), (4, Some("0"))] {
        back.ws.close(None).await.expect("close");
        drop(back);
        wait_until(|| !handle.socket_attached()).await;
        back = connect(&app, &key, Fmt::Json).await;
        let mut hello = json!({"type": "hello", "session_id": session,
                               "player_id": format!("p-{session}"), "resume_from": resume_from});
        if let Some(epoch) = epoch {
            hello["epoch"] = json!(epoch);
        }
        back.send(hello).await;
        seq += 1;
        assert_fields(
            &back.recv().await,
            json!({"type": "ready", "seq": seq, "resumed": false}),
        );
    }
}

#[tokio::test]
async fn a_resume_from_an_earlier_history_of_the_session_is_not_honoured() {
    // Sessions idle out after a second without a socket: the next use reads the session
    // back from the store as a new session with a new history, as a restarted node does.
    let app = spawn_tuned(default_backend(), |s| s.offers.session_idle_s = 1).await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    let session = fresh(&game);
    let mut first = connect(&app, &key, Fmt::Json).await;
    let ready = first.hello(session, None).await;
    let old_epoch = ready["epoch"].as_str().expect("epoch").to_owned();
    first.send(offer_request("first_loss")).await;
    assert_fields(&first.recv().await, json!({"type": "offer", "seq": 2}));
    first.ws.close(None).await.expect("close");
    drop(first);
    let actors = &app.running.state.services.actors;
    let key_of = offer_actors::SessionKey {
        game_id: game.parse().expect("uuid"),
        env: offer_domain::environment::Environment::Production,
        session_id: session,
    };
    wait_until(|| actors.session(&key_of).is_none()).await;

    // Two purchases sent over REST bring the session back and push the inventory twice:
    // the new history reaches seq 2 before the client comes back.
    for tx in ["iap-1", "iap-2"] {
        app.post(
            "/v1/sdk/events",
            json!({"session_id": session, "events": [{"type": "purchase", "item_ids": ["sword"],
                                                       "price_cents": 499, "tx_id": tx}]}),
        )
        .token(&key)
        .expect(StatusCode::ACCEPTED)
        .await;
    }
    let handle = open_session(&app, &game, session);
    wait_until(|| handle.last_seq() == 2).await;
    assert_ne!(
        handle.epoch(),
        old_epoch,
        "a session read back draws a new epoch"
    );

    // The old resume point names the old epoch: nothing is replayed, and the fresh ready
    // carries the whole state (both swords) and the new epoch.
    let mut back = connect(&app, &key, Fmt::Json).await;
    let ready = back.hello(session, Some((2, &old_epoch))).await;
    assert_fields(
        &ready,
        json!({"type": "ready", "seq": 3, "resumed": false, "epoch": handle.epoch(),
               "inventory": [{"item_id": "sword", "quantity": 2}]}),
    );
    // Resuming under the new epoch replays the two pushes.
    back.ws.close(None).await.expect("close");
    drop(back);
    wait_until(|| !handle.socket_attached()).await;
    let mut again = connect(&app, &key, Fmt::Json).await;
    let epoch = handle.epoch().to_owned();
    let missed = again.hello(session, Some((0, &epoch))).await;
    assert_fields(&missed, json!({"type": "inventory", "seq": 1}));
    assert_fields(&again.recv().await, json!({"type": "inventory", "seq": 2}));
    assert_fields(
        &again.recv().await,
        json!({"type": "ready", "seq": 4, "resumed": true}),
    );
}

#[tokio::test]
async fn a_second_socket_on_a_session_replaces_the_first() {
    let app = spawn_app().await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    let session = fresh(&game);
    let mut first = connect(&app, &key, Fmt::Json).await;
    let ready = first.hello(session, None).await;
    let epoch = ready["epoch"].as_str().expect("epoch");
    let mut second = connect(&app, &key, Fmt::Json).await;
    assert_eq!(
        second.hello(session, Some((1, epoch))).await["type"],
        "ready"
    );
    assert_eq!(first.close_code().await, 4009);
}

#[tokio::test]
async fn a_client_that_does_not_read_is_cut_off_with_4008() {
    let app = spawn_tuned(Backend::Embedded, |s| s.websocket.outbound_queue = 4).await;
    // Fill the kernel buffers with offers the client never reads, from a writer of its own
    // (its sends block once the server stops reading too).
    let (game, handle, mut rx, writer) = flooding_session(&app).await;
    // Meanwhile broadcasts keep coming; once the socket stops draining, the queue fills.
    let mut level = 0;
    tokio::time::timeout(PATIENCE * 3, async {
        while handle.socket_attached() {
            level = 1 - level;
            app.set_kill_switch(&game, level).await;
        }
    })
    .await
    .expect("the slow consumer is cut off");
    assert!(!handle.socket_attached(), "the session dropped the queue");
    writer.abort();
    // The client reads its backlog and then finds the 4008 close.
    let code = close_after_backlog(&mut rx).await;
    assert_eq!(code, 4008);
}

#[tokio::test]
async fn a_frame_over_64_kib_closes_with_1009() {
    let app = spawn_app().await;
    let (_, mut c) = ready_on_shelf(&app, Fmt::Json).await;
    let mut big = offer_request("first_loss");
    big["trigger_context"]["padding"] = json!("x".repeat(70 * 1024));
    c.send(big).await;
    assert_eq!(c.close_code().await, 1009);
}

#[tokio::test]
async fn malformed_messages_get_errors_and_three_in_a_row_close_with_1007() {
    let app = spawn_app().await;
    let (_, mut c) = ready_on_shelf(&app, Fmt::Json).await;
    c.ws.send(Message::text("{not json")).await.expect("send");
    let e = c.recv().await;
    assert_fields(&e, json!({"type": "error", "code": "bad_message"}));
    // A good message resets the count.
    c.send(json!({"type": "ack", "seq": 1})).await;
    c.ws.send(Message::text("[]")).await.expect("send");
    assert_eq!(c.recv().await["code"], "bad_message");
    c.ws.send(Message::binary(vec![1, 2, 3]))
        .await
        .expect("send");
    assert_eq!(c.recv().await["code"], "bad_message");
    c.send(event(json!({"type": "no_such_event"}))).await;
    assert_eq!(c.close_code().await, 1007);
}

#[tokio::test]
async fn a_bad_key_is_refused_before_the_upgrade() {
    let app = spawn_app().await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    for bad in [format!("{key}x"), "nonsense".to_owned(), app.admin.clone()] {
        match try_connect(&app, &bad, Some(JSON_PROTOCOL)).await {
            Err(WsError::Http(resp)) => {
                assert!(
                    [401, 403].contains(&resp.status().as_u16()),
                    "status {}",
                    resp.status()
                );
                let body: Value =
                    serde_json::from_slice(resp.body().as_deref().unwrap_or_default())
                        .expect("error body is JSON");
                assert!(body["error"]["code"].is_string(), "{body}");
                assert!(body["error"]["details"].is_object(), "{body}");
            }
            Err(e) => panic!("expected an HTTP refusal, got {e}"),
            Ok(_) => panic!("a bad key was upgraded"),
        }
    }
    // A garbled SDK key is exactly a 401 unauthorized.
    let Err(WsError::Http(resp)) = try_connect(&app, &format!("{key}x"), None).await else {
        panic!("refused");
    };
    assert_eq!(resp.status().as_u16(), 401);
    // The good key gets its socket.
    let mut c = connect(&app, &key, Fmt::Json).await;
    assert_eq!(c.hello(fresh(&game), None).await["type"], "ready");
}

/// The status and error body of a refused upgrade.
fn refusal(result: Result<Client, WsError>) -> (u16, Value) {
    match result {
        Err(WsError::Http(resp)) => {
            let body: Value = serde_json::from_slice(resp.body().as_deref().unwrap_or_default())
                .expect("error body is JSON");
            (resp.status().as_u16(), body)
        }
        Err(e) => panic!("expected an HTTP refusal, got {e}"),
        Ok(_) => panic!("upgraded"),
    }
}

#[tokio::test]
async fn an_upgrade_without_a_known_subprotocol_is_refused_with_400() {
    let app = spawn_app().await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    for offered in [None, Some("svc.v2.json"), Some("json")] {
        let (status, body) = refusal(try_connect(&app, &key, offered).await);
        assert_eq!(status, 400, "{offered:?}");
        assert_eq!(body["error"]["code"], "bad_request", "{body}");
        assert!(
            body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("svc.v1.json") && m.contains("svc.v1.msgpack")),
            "{body}"
        );
        assert!(body["error"]["details"].is_object(), "{body}");
    }
    // A bad key is still refused first, as a 401.
    let (status, _) = refusal(try_connect(&app, &format!("{key}x"), None).await);
    assert_eq!(status, 401);
    // Offering both (or an unknown one beside a known one) picks a subprotocol the server
    // speaks: JSON first.
    let mut c = try_connect(&app, &key, Some("svc.v1.msgpack, svc.v1.json"))
        .await
        .expect("connects");
    c.ws.send(Message::text(
        json!({"type": "hello", "session_id": fresh(&game), "player_id": "p1"}).to_string(),
    ))
    .await
    .expect("send");
    let ready = tokio::time::timeout(PATIENCE, c.ws.next())
        .await
        .expect("in time");
    assert!(
        matches!(&ready, Some(Ok(Message::Text(t))) if t.as_str().contains("\"ready\"")),
        "JSON text frames: {ready:?}"
    );
    let mut c = try_connect(&app, &key, Some("svc.v2.json, svc.v1.msgpack"))
        .await
        .expect("connects");
    c.ws.send(Message::binary(
        rmp_serde::to_vec_named(
            &json!({"type": "hello", "session_id": fresh(&game), "player_id": "p2"}),
        )
        .expect("msgpack"),
    ))
    .await
    .expect("send");
    let ready = tokio::time::timeout(PATIENCE, c.ws.next())
        .await
        .expect("in time");
    assert!(
        matches!(&ready, Some(Ok(Message::Binary(_)))),
        "MessagePack binary frames: {ready:?}"
    );
}

#[tokio::test]
async fn a_silent_client_gets_pings_then_an_idle_close() {
    let app = spawn_heartbeat(Backend::Embedded, 1, 2, None).await;
    let (_, mut c) = ready_on_shelf(&app, Fmt::Json).await;
    // The client reads nothing (so it answers no ping) for longer than the idle timeout.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let mut pinged = false;
    let code = loop {
        match tokio::time::timeout(PATIENCE, c.ws.next())
            .await
            .expect("in time")
        {
            Some(Ok(Message::Ping(_))) => pinged = true,
            Some(Ok(Message::Close(Some(f)))) => break u16::from(f.code),
            other => panic!("unexpected {other:?}"),
        }
    };
    assert!(pinged, "the server pinged");
    assert_eq!(code, 1001);
}

#[tokio::test]
async fn shutdown_closes_sockets_with_1001() {
    let app = spawn_app().await;
    let (_, mut c) = ready_on_shelf(&app, Fmt::MsgPack).await;
    c.send(offer_request("first_loss")).await;
    assert_eq!(c.recv().await["type"], "offer");
    let _ = app.running.shutdown.send(true);
    assert_eq!(c.close_code().await, 1001);
}

/// A server whose heartbeat never runs during a test, so a close cannot come from it.
async fn spawn_without_heartbeat(backend: Backend) -> TestApp {
    spawn_heartbeat(backend, 3600, 7200, Some(3600)).await
}

#[tokio::test]
async fn revoking_a_key_closes_every_socket_opened_with_it_at_once_even_idle_ones() {
    let app = spawn_without_heartbeat(Backend::Embedded).await;
    let Sdk { game, key: kept } = app.game_with(store_shelf()).await;
    let (key, key_id) = app.production_key(&game).await;
    let mut in_session = connect(&app, &key, Fmt::Json).await;
    assert_eq!(in_session.hello(fresh(&game), None).await["type"], "ready");
    let mut before_hello = connect(&app, &key, Fmt::MsgPack).await;
    let mut other_key = connect(&app, &kept, Fmt::Json).await;
    assert_eq!(other_key.hello(fresh(&game), None).await["type"], "ready");

    app.revoke_sdk_key(&game, &key_id).await;
    // Neither client sends anything, and no heartbeat runs: the revocation alone closes them.
    assert_eq!(in_session.close_code().await, 4001);
    assert_eq!(before_hello.close_code().await, 4001);
    // A socket of another key is untouched.
    other_key.send(offer_request("first_loss")).await;
    assert_eq!(other_key.recv_answer().await["type"], "offer");
    // The revoked key opens no new socket.
    let (status, _) = refusal(try_connect(&app, &key, Some(JSON_PROTOCOL)).await);
    assert_eq!(status, 401);
}

#[tokio::test]
async fn a_key_revoked_through_another_node_closes_its_sockets_here() {
    let a = spawn_without_heartbeat(Backend::Redis).await;
    let b = a.spawn_peer().await;
    let Sdk { game, .. } = a.game_with(store_shelf()).await;
    let (key, key_id) = a.production_key(&game).await;
    let mut on_b = connect(&b, &key, Fmt::Json).await;
    assert_eq!(on_b.hello(fresh(&game), None).await["type"], "ready");
    a.revoke_sdk_key(&game, &key_id).await;
    assert_eq!(on_b.close_code().await, 4001);
}

#[tokio::test]
async fn a_revoked_key_closes_its_open_sockets() {
    let app = spawn_app().await;
    let Sdk { game, .. } = app.game_with(store_shelf()).await;
    let (key, key_id) = app.production_key(&game).await;
    let mut c = connect(&app, &key, Fmt::Json).await;
    assert_eq!(c.hello(fresh(&game), None).await["type"], "ready");
    app.revoke_sdk_key(&game, &key_id).await;
    c.send(offer_request("first_loss")).await;
    assert_eq!(c.close_code().await, 4001);
}

#[tokio::test]
async fn a_resume_never_replays_the_ready_of_an_earlier_connection() {
    let app = spawn_app().await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    let session = fresh(&game);
    // Two connections, each with its ready and one offer.
    for _ in 0..2 {
        let mut c = connect(&app, &key, Fmt::Json).await;
        assert_eq!(c.hello(session, None).await["type"], "ready");
        c.send(offer_request("first_loss")).await;
        assert_eq!(c.recv().await["type"], "offer");
        c.ws.close(None).await.expect("close");
        drop(c);
        let handle = open_session(&app, &game, session);
        wait_until(|| !handle.socket_attached()).await;
    }
    // Readies took seqs 1 and 3, offers 2 and 4. A resume from the very start gets the two
    // offers, then this connection's one ready: never an old one.
    let epoch = open_session(&app, &game, session).epoch().to_owned();
    let mut c = connect(&app, &key, Fmt::Json).await;
    let mut seen = vec![c.hello(session, Some((0, &epoch))).await];
    for _ in 0..2 {
        seen.push(c.recv().await);
    }
    let shapes: Vec<(Value, Value)> = seen
        .iter()
        .map(|m| (m["type"].clone(), m["seq"].clone()))
        .collect();
    assert_eq!(
        shapes,
        [("offer", 2), ("offer", 4), ("ready", 5)].map(|(t, s)| (json!(t), json!(s))),
        "{seen:#?}"
    );
    assert_eq!(seen[2]["resumed"], true);
    // Nothing else was queued: the next message answers the next request.
    c.send(offer_request("first_loss")).await;
    assert_fields(&c.recv().await, json!({"type": "offer", "seq": 6}));
}

#[tokio::test]
async fn a_client_that_never_says_hello_is_closed_after_the_deadline() {
    let app = spawn_heartbeat(Backend::Embedded, 3600, 7200, Some(1)).await;
    let Sdk { key, .. } = app.game_with(store_shelf()).await;
    // Silent.
    let mut silent = connect(&app, &key, Fmt::Json).await;
    assert_eq!(silent.close_code().await, 4002);
    // Busy with messages that need no session (they keep it from being idle, not from the
    // deadline).
    let c = connect(&app, &key, Fmt::MsgPack).await;
    let (mut tx, mut rx) = c.ws.split();
    let ack = Message::binary(
        rmp_serde::to_vec_named(&json!({"type": "ack", "seq": 1})).expect("msgpack"),
    );
    let writer = tokio::spawn(async move {
        while tx.send(ack.clone()).await.is_ok() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let code = tokio::time::timeout(PATIENCE, async {
        loop {
            match rx.next().await {
                Some(Ok(Message::Close(Some(f)))) => return u16::from(f.code),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                other => panic!("no close frame: {other:?}"),
            }
        }
    })
    .await
    .expect("closed in time");
    writer.abort();
    assert_eq!(code, 4002);
}

#[tokio::test]
async fn the_idle_timeout_holds_before_hello() {
    let app = spawn_heartbeat(Backend::Embedded, 1, 2, Some(3600)).await;
    let Sdk { key, .. } = app.game_with(store_shelf()).await;
    let mut c = connect(&app, &key, Fmt::Json).await;
    // The client neither says hello nor reads (so it answers no ping) past the idle timeout.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(c.close_code().await, 1001);
}

/// Reads a socket until its close frame: the `error` messages it got before and the code.
async fn errors_then_close(
    rx: &mut futures::stream::SplitStream<
        tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
    >,
) -> (Vec<Value>, u16) {
    let mut errors = Vec::new();
    tokio::time::timeout(PATIENCE, async {
        loop {
            match rx.next().await {
                Some(Ok(Message::Close(Some(f)))) => return (errors, u16::from(f.code)),
                Some(Ok(Message::Text(t))) => {
                    let m: Value = serde_json::from_str(t.as_str()).expect("json");
                    if m["type"] == "error" {
                        errors.push(m);
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("no close frame: {other:?}"),
            }
        }
    })
    .await
    .expect("closed in time")
}

#[tokio::test]
async fn a_client_that_never_reads_nor_says_hello_gets_a_bounded_number_of_answers() {
    let app = spawn_app().await;
    let Sdk { key, .. } = app.game_with(store_shelf()).await;
    let c = connect(&app, &key, Fmt::Json).await;
    let (mut tx, mut rx) = c.ws.split();
    // Malformed frames mixed with well-formed messages that need a session: every one is
    // answered with an error, and the client reads none of them while it sends.
    let frames = [
        Message::text("{not json"),
        Message::text(offer_request("first_loss").to_string()),
        Message::text(event(json!({"type": "first_loss"})).to_string()),
        Message::binary(vec![0xc1]),
    ];
    let mut sent = 0;
    // Until the server closes, or stops reading because its answers fill the connection.
    let _ = tokio::time::timeout(PATIENCE, async {
        for frame in frames.iter().cycle().take(20_000) {
            if tx.send(frame.clone()).await.is_err() {
                break;
            }
            sent += 1;
        }
    })
    .await;
    assert!(sent > offer_engine::ws::budget::CAPACITY as usize);
    let (errors, code) = errors_then_close(&mut rx).await;
    assert_eq!(code, 1007);
    assert!(
        errors.len() <= offer_engine::ws::budget::CAPACITY as usize,
        "{} answers to a client that never read: {errors:#?}",
        errors.len()
    );
    for e in &errors {
        assert_fields(e, json!({"type": "error", "seq": 0, "code": "bad_message"}));
    }
}

#[tokio::test]
async fn malformed_messages_between_valid_ones_still_close_with_1007() {
    let app = spawn_app().await;
    let (_, c) = ready_on_shelf(&app, Fmt::Json).await;
    let (mut tx, mut rx) = c.ws.split();
    let writer = tokio::spawn(async move {
        for _ in 0..1000 {
            if tx.send(Message::text("{not json")).await.is_err()
                || tx
                    .send(Message::text(json!({"type": "ack", "seq": 1}).to_string()))
                    .await
                    .is_err()
            {
                break;
            }
        }
    });
    let (errors, code) = errors_then_close(&mut rx).await;
    writer.abort();
    assert_eq!(code, 1007);
    assert_eq!(
        errors.len(),
        offer_engine::ws::budget::CAPACITY as usize,
        "each malformed message within the budget is answered: {errors:#?}"
    );
}

#[tokio::test]
async fn a_client_that_stops_reading_is_let_go_even_without_broadcasts() {
    let app = spawn_heartbeat(Backend::Embedded, 1, 2, None).await;
    // Requests whose answers the client never reads, until the connection takes no more.
    // Nothing else is pushed to the session, so its queue never fills: only the blocked
    // write itself can tell the server the client is gone.
    let (_, handle, mut rx, writer) = flooding_session(&app).await;
    tokio::time::timeout(PATIENCE * 3, async {
        while handle.socket_attached() {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the socket that does not read is let go");
    writer.abort();
    // The client reads its backlog and then finds the close.
    let code = close_after_backlog(&mut rx).await;
    assert_eq!(code, 4008);
}

/// `levels` arrays, one inside the other.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!("x"), |inner, _| json!([inner]))
}

#[tokio::test]
async fn a_deeply_nested_msgpack_hello_is_refused_and_stores_nothing() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let session = fresh(&sdk.game);
    let mut c = connect(&app, &sdk.key, Fmt::MsgPack).await;
    let hello = |attributes: Value| {
        json!({"type": "hello", "session_id": session, "player_id": "deep-player",
               "attributes": attributes})
    };
    // Deep enough to break the stored document's reading, within the decoder's limit: a
    // validation failure naming the attribute.
    c.send(hello(json!({"country": "DE", "deep": nested(120)})))
        .await;
    let e = c.recv().await;
    assert_fields(
        &e,
        json!({"type": "error", "seq": 0, "code": "validation_failed"}),
    );
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("attributes.deep")),
        "{e}"
    );
    // Beyond the decoder's limit: not a protocol message at all.
    c.send(hello(json!({"deep": nested(600)}))).await;
    assert_fields(
        &c.recv().await,
        json!({"type": "error", "seq": 0, "code": "bad_message"}),
    );
    // Nothing was stored: the session id is still free, for any player.
    app.post(
        "/v1/sdk/sessions",
        json!({"session_id": session, "player_id": format!("p-{session}"),
               "attributes": {"level": [[["fine"]]]}}),
    )
    .token(&sdk.key)
    .expect(StatusCode::CREATED)
    .await;
    // And the session works, over the socket and over REST.
    let ready = c.hello(session, None).await;
    assert_fields(&ready, json!({"type": "ready", "seq": 1}));
    c.send(offer_request("first_loss")).await;
    assert_eq!(c.recv().await["type"], "offer");
    app.post(
        "/v1/sdk/offers/next",
        json!({"session_id": session, "trigger_context": {"event_type": "first_loss"}}),
    )
    .token(&sdk.key)
    .expect(StatusCode::OK)
    .await;
    // Over REST, the same bound answers 422.
    let body = app
        .post(
            "/v1/sdk/sessions",
            json!({"session_id": Uuid::new_v4(), "player_id": "deep-player",
                   "attributes": {"deep": nested(100)}}),
        )
        .token(&sdk.key)
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    assert_eq!(
        body["error"]["details"]["errors"][0]["field"], "attributes.deep",
        "{body}"
    );
}

/// A JSON session on a store shelf whose client said hello and now floods offer requests it
/// never reads ([`flood_offer_requests`]): the game, the session's handle, the socket's
/// reading half and the flooding task.
async fn flooding_session(
    app: &TestApp,
) -> (
    String,
    offer_actors::SessionHandle,
    impl futures::Stream<Item = Result<Message, WsError>> + Unpin,
    tokio::task::JoinHandle<impl futures::Sink<Message>>,
) {
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    let session = fresh(&game);
    let mut c = connect(app, &key, Fmt::Json).await;
    c.hello(session, None).await;
    let handle = open_session(app, &game, session);
    let (tx, rx) = c.ws.split();
    (game, handle, rx, flood_offer_requests(tx))
}

/// Sends offer requests whose answers the client never reads, until the connection takes no
/// more, from a task of its own (its sends block once the server stops reading too).
fn flood_offer_requests<S>(mut tx: S) -> tokio::task::JoinHandle<S>
where
    S: futures::Sink<Message> + Unpin + Send + 'static,
{
    let request = Message::text(offer_request("first_loss").to_string());
    tokio::spawn(async move {
        for _ in 0..200_000 {
            if tx.send(request.clone()).await.is_err() {
                break;
            }
        }
        tx
    })
}

/// Reads the backlog a client left unread and returns the close code after it.
async fn close_after_backlog<R>(rx: &mut R) -> u16
where
    R: futures::Stream<Item = Result<Message, WsError>> + Unpin,
{
    tokio::time::timeout(PATIENCE * 3, async {
        loop {
            match rx.next().await {
                Some(Ok(Message::Close(Some(f)))) => return u16::from(f.code),
                Some(Ok(_)) => {}
                other => panic!("no close frame: {other:?}"),
            }
        }
    })
    .await
    .expect("close in time")
}
