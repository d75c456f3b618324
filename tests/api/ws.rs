//! The WebSocket gateway through real sockets (`tokio-tungstenite`): both wire formats, offers,
//! wallets, the kill switch across two nodes sharing one Redis, resume, and the robustness
//! limits (slow consumer, oversized and malformed frames, bad keys).

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use uuid::Uuid;

use super::helpers::{Backend, TestApp, item, pack, settings, spawn_app, spawn_with};

/// Only to avoid hangs: every wait in these tests is bounded by this.
const PATIENCE: Duration = Duration::from_secs(20);

type Stream = WebSocketStream<MaybeTlsStream<TcpStream>>;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Fmt {
    Json,
    MsgPack,
}

struct Client {
    ws: Stream,
    fmt: Fmt,
}

async fn try_connect(app: &TestApp, key: &str, proto: Option<&str>) -> Result<Client, WsError> {
    let mut req = format!("ws://{}/v1/sdk/ws", app.addr)
        .into_client_request()
        .expect("request");
    req.headers_mut().insert(
        AUTHORIZATION,
        format!("Bearer {key}").parse().expect("header"),
    );
    if let Some(p) = proto {
        req.headers_mut()
            .insert(SEC_WEBSOCKET_PROTOCOL, p.parse().expect("header"));
    }
    let (ws, _) = tokio_tungstenite::connect_async(req).await?;
    let fmt = if proto == Some("svc.v1.msgpack") {
        Fmt::MsgPack
    } else {
        Fmt::Json
    };
    Ok(Client { ws, fmt })
}

async fn connect(app: &TestApp, key: &str, fmt: Fmt) -> Client {
    let proto = match fmt {
        Fmt::Json => "svc.v1.json",
        Fmt::MsgPack => "svc.v1.msgpack",
    };
    try_connect(app, key, Some(proto)).await.expect("connects")
}

fn encode(fmt: Fmt, v: &Value) -> Message {
    match fmt {
        Fmt::Json => Message::text(v.to_string()),
        Fmt::MsgPack => Message::binary(rmp_serde::to_vec_named(v).expect("msgpack")),
    }
}

impl Client {
    async fn send(&mut self, v: Value) {
        let frame = encode(self.fmt, &v);
        self.ws.send(frame).await.expect("send");
    }

    /// The next data message, decoded; panics on close or silence.
    async fn recv(&mut self) -> Value {
        loop {
            let msg = tokio::time::timeout(PATIENCE, self.ws.next())
                .await
                .expect("a message in time")
                .expect("socket open")
                .expect("no error");
            match (self.fmt, msg) {
                (Fmt::Json, Message::Text(t)) => {
                    return serde_json::from_str(t.as_str()).expect("json");
                }
                (Fmt::MsgPack, Message::Binary(b)) => {
                    return rmp_serde::from_slice(&b).expect("msgpack map");
                }
                (_, Message::Ping(_) | Message::Pong(_)) => {}
                (fmt, other) => panic!("unexpected frame on {fmt:?}: {other:?}"),
            }
        }
    }

    /// The next message of `kind`, skipping others.
    async fn recv_type(&mut self, kind: &str) -> Value {
        loop {
            let m = self.recv().await;
            if m["type"] == kind {
                return m;
            }
        }
    }

    /// The next message that answers this client (broadcasts skipped: a kill switch set
    /// just before `hello` may still be fanning out).
    async fn recv_answer(&mut self) -> Value {
        loop {
            let m = self.recv().await;
            if m["type"] != "kill_switch" && m["type"] != "config" {
                return m;
            }
        }
    }

    /// Reads (and drops) everything until the server's close frame; returns its code.
    async fn close_code(&mut self) -> u16 {
        loop {
            let next = tokio::time::timeout(PATIENCE, self.ws.next())
                .await
                .expect("the server closes in time");
            match next {
                Some(Ok(Message::Close(Some(CloseFrame { code, .. })))) => return code.into(),
                Some(Ok(Message::Close(None))) => panic!("close without a code"),
                Some(Ok(_)) => {}
                Some(Err(e)) => panic!("socket error before the close frame: {e}"),
                None => panic!("socket ended without a close frame"),
            }
        }
    }

    async fn hello(&mut self, session: Uuid, resume_from: Option<u64>) -> Value {
        let mut hello = json!({"type": "hello", "session_id": session, "player_id": format!("p-{session}"),
                               "attributes": {"country": "DE", "platform": "ios"}});
        if let Some(k) = resume_from {
            hello["resume_from"] = json!(k);
        }
        self.send(hello).await;
        self.recv().await
    }
}

/// A session id whose player (`p-{session}`) is outside the game's holdout (the contract's
/// rule), so the offer pipeline is not skipped for it.
fn fresh(game: &str) -> Uuid {
    use sha2::{Digest, Sha256};
    loop {
        let session = Uuid::new_v4();
        let h = Sha256::digest(format!("p-{session}:{}", game.to_lowercase()));
        let first: [u8; 8] = h[..8].try_into().expect("8 bytes");
        if u64::from_be_bytes(first) % 10_000 >= 1_000 {
            return session;
        }
    }
}

/// A game with a store shelf (so L4 always has an offer), its SDK key and a client.
async fn game_with_shelf(app: &TestApp) -> (String, String) {
    let game = app.create_game().await;
    let r = app
        .bulk(
            &game,
            json!([
                pack("gems_100", 100, 0.99),
                pack("gems_500", 500, 3.99),
                item("sword", "equipment", 4.99)
            ]),
        )
        .await;
    assert!(r.status().is_success(), "bulk: {}", r.status());
    let key = app.sdk_key(&game, "production").await;
    (game, key)
}

async fn set_kill(app: &TestApp, game: &str, level: u8) {
    let r = app
        .send(
            reqwest::Method::PUT,
            &format!("/v1/games/{game}/kill-switch"),
            &app.admin.clone(),
            json!({"level": level, "reason": format!("level {level}")}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK, "kill switch");
}

/// Drops the fields that differ by nature between two sessions (ids, times, the decoder's
/// wording of a parse error).
fn shape(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        for k in [
            "offer_id",
            "expires_at",
            "updated_at",
            "config_version",
            "message",
        ] {
            if o.contains_key(k) {
                o.insert(k.into(), Value::Null);
            }
        }
    }
    v
}

/// One scripted conversation; returns every server message.
async fn conversation(app: &TestApp, game: &str, key: &str, fmt: Fmt) -> Vec<Value> {
    let mut c = connect(app, key, fmt).await;
    let mut seen = vec![c.hello(fresh(game), None).await];
    c.send(
        json!({"type": "event", "event": {"type": "currency_earned", "currency_id": "gems",
                                              "amount": 50, "tx_id": Uuid::new_v4()}}),
    )
    .await;
    seen.push(c.recv().await);
    c.send(
        json!({"type": "event", "event": {"type": "currency_low", "currency_id": "gems",
                                              "balance": 1}}),
    )
    .await;
    seen.push(c.recv().await);
    c.send(json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss"}}))
        .await;
    seen.push(c.recv().await);
    c.send(json!({"type": "nonsense"})).await;
    seen.push(c.recv().await);
    seen
}

#[tokio::test]
async fn json_and_msgpack_sessions_give_the_same_messages() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let json = conversation(&app, &game, &key, Fmt::Json).await;
    let msgpack = conversation(&app, &game, &key, Fmt::MsgPack).await;
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
    let (game, key) = game_with_shelf(&app).await;
    set_kill(&app, &game, 1).await;
    let mut c = connect(&app, &key, Fmt::Json).await;
    let ready = c.hello(fresh(&game), None).await;
    assert_eq!(ready["type"], "ready");
    assert_eq!(ready["seq"], 1);
    assert_eq!(ready["kill_switch"]["level"], 1);
    assert_eq!(ready["mode"], "shadow");
    assert!(ready["config_version"].is_u64());
    for trigger in ["currency_low", "first_loss", "boss_raid"] {
        let mut event = json!({"type": trigger});
        if trigger == "currency_low" {
            event["currency_id"] = json!("gems");
        }
        c.send(json!({"type": "event", "event": event})).await;
        let offer = c.recv_answer().await;
        assert_eq!(offer["type"], "offer", "{trigger}: {offer}");
        assert!(offer["offer_id"].is_string());
        assert!(offer["items"].as_array().is_some_and(|i| !i.is_empty()));
        assert!(offer["price_cents"].as_i64().is_some_and(|p| p > 0));
        assert!((1..=4).contains(&offer["fallback_level"].as_u64().expect("level")));
    }
    // A non-trigger event pushes nothing: the next message answers the offer request.
    c.send(json!({"type": "event", "event": {"type": "offer_dismissed",
                                              "offer_id": Uuid::new_v4()}}))
        .await;
    c.send(json!({"type": "offer_request", "trigger_context": {"event_type": "boss_raid"}}))
        .await;
    assert_eq!(c.recv_answer().await["type"], "offer");
    // A catalogue change on this very node is announced to its sockets.
    let r = app
        .bulk(&game, json!([item("axe", "equipment", 2.99)]))
        .await;
    assert!(r.status().is_success());
    assert!(c.recv_type("config").await["config_version"].is_u64());
}

#[tokio::test]
async fn money_events_push_balances_and_overspend_changes_nothing() {
    let app = spawn_app_redis().await;
    let (game, key) = game_with_shelf(&app).await;
    let mut c = connect(&app, &key, Fmt::Json).await;
    c.hello(fresh(&game), None).await;
    let earn = Uuid::new_v4();
    let earned = json!({"type": "event", "event": {"type": "currency_earned",
        "currency_id": "gems", "amount": 100, "source": "quest", "tx_id": earn}});
    c.send(earned.clone()).await;
    let b = c.recv().await;
    assert_eq!(
        (&b["type"], &b["currency_id"], &b["balance"]),
        (&json!("balance"), &json!("gems"), &json!(100))
    );
    c.send(
        json!({"type": "event", "event": {"type": "currency_spent", "currency_id": "gems",
        "amount": 30, "sink": "shop", "tx_id": Uuid::new_v4()}}),
    )
    .await;
    assert_eq!(c.recv().await["balance"], 70);
    c.send(
        json!({"type": "event", "event": {"type": "currency_spent", "currency_id": "gems",
        "amount": 71, "sink": "shop", "tx_id": Uuid::new_v4()}}),
    )
    .await;
    let e = c.recv().await;
    assert_eq!(
        (&e["type"], &e["code"]),
        (&json!("error"), &json!("insufficient_funds")),
        "{e}"
    );
    // The same earn again is an idempotent replay: its first result is pushed again.
    c.send(earned).await;
    assert_eq!(c.recv().await["balance"], 100, "the replayed result");
    // Neither the refusal nor the replay changed the wallet: exactly 70 can be spent.
    c.send(
        json!({"type": "event", "event": {"type": "currency_spent", "currency_id": "gems",
        "amount": 70, "sink": "shop", "tx_id": Uuid::new_v4()}}),
    )
    .await;
    assert_eq!(c.recv().await["balance"], 0);
}

async fn spawn_app_redis() -> TestApp {
    spawn_with(settings(Backend::Redis, None)).await
}

#[tokio::test]
async fn kill_switch_and_catalogue_reach_the_other_node() {
    let prefix = super::redis_harness::unique_prefix();
    let a = spawn_with(settings(Backend::Redis, Some(prefix.clone()))).await;
    let b = spawn_with(settings(Backend::Redis, Some(prefix))).await;
    let game = a.create_game().await;
    let key = a.sdk_key(&game, "production").await;
    let mut on_b = connect(&b, &key, Fmt::MsgPack).await;
    assert_eq!(
        on_b.hello(fresh(&game), None).await["kill_switch"]["level"],
        0
    );

    // A catalogue change on A is served by B: B had no offer, then has one.
    on_b.send(json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss"}}))
        .await;
    let none = on_b.recv().await;
    assert_eq!(none["type"], "no_offer", "empty catalogue: {none}");
    let r = a.bulk(&game, json!([pack("gems_100", 100, 0.99)])).await;
    assert!(r.status().is_success());
    let config = on_b.recv_type("config").await;
    assert!(config["config_version"].is_u64());
    on_b.send(json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss"}}))
        .await;
    let offer = on_b.recv().await;
    assert_eq!(offer["type"], "offer", "{offer}");
    assert_eq!(offer["items"][0]["item_id"], "gems_100");

    // The kill switch set through A reaches the socket on B, and B stops offers.
    set_kill(&a, &game, 2).await;
    let ks = on_b.recv_type("kill_switch").await;
    assert_eq!(ks["level"], 2);
    assert_eq!(ks["reason"], "level 2");
    on_b.send(json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss"}}))
        .await;
    let none = on_b.recv().await;
    assert_eq!(
        (&none["type"], &none["outcome"]),
        (&json!("no_offer"), &json!("kill_switch"))
    );

    // A client connecting to B afterwards learns the level in `ready`.
    let mut late = connect(&b, &key, Fmt::Json).await;
    assert_eq!(
        late.hello(fresh(&game), None).await["kill_switch"]["level"],
        2
    );

    // Level 3: events are refused with sdk_disabled.
    set_kill(&a, &game, 3).await;
    while late.recv_type("kill_switch").await["level"] != 3 {}
    late.send(json!({"type": "event", "event": {"type": "first_loss"}}))
        .await;
    let e = late.recv().await;
    assert_eq!(
        (&e["type"], &e["code"]),
        (&json!("error"), &json!("sdk_disabled")),
        "{e}"
    );
}

#[tokio::test]
async fn resume_after_reconnect_gets_the_missed_messages() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let session = fresh(&game);
    let mut first = connect(&app, &key, Fmt::Json).await;
    assert_eq!(first.hello(session, None).await["seq"], 1);
    first
        .send(json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss"}}))
        .await;
    let offer = first.recv().await;
    assert_eq!(
        (&offer["type"], &offer["seq"]),
        (&json!("offer"), &json!(2))
    );
    first.ws.close(None).await.expect("close");
    drop(first);
    // Wait until the server let go of the socket, then change things while it is away.
    let handle = open_session(&app, &game, session);
    wait_until(|| !handle.socket_attached()).await;
    set_kill(&app, &game, 1).await;
    set_kill(&app, &game, 0).await;
    // The fan-out runs after the REST answer: wait until both flips reached the session.
    wait_until(|| handle.last_seq() == 4).await;

    let mut back = connect(&app, &key, Fmt::Json).await;
    let missed = back.hello(session, Some(2)).await;
    assert_eq!(
        (&missed["type"], &missed["seq"], &missed["level"]),
        (&json!("kill_switch"), &json!(3), &json!(1))
    );
    let missed = back.recv().await;
    assert_eq!(
        (&missed["type"], &missed["seq"], &missed["level"]),
        (&json!("kill_switch"), &json!(4), &json!(0))
    );
    let ready = back.recv().await;
    assert_eq!(
        (&ready["type"], &ready["seq"], &ready["resumed"]),
        (&json!("ready"), &json!(5), &json!(true))
    );

    // A resume point the ring no longer holds (or never held) gets a fresh ready.
    back.ws.close(None).await.expect("close");
    drop(back);
    wait_until(|| !handle.socket_attached()).await;
    let mut again = connect(&app, &key, Fmt::Json).await;
    let ready = again.hello(session, Some(1000)).await;
    assert_eq!(
        (&ready["type"], &ready["seq"], &ready["resumed"]),
        (&json!("ready"), &json!(6), &json!(false))
    );
}

#[tokio::test]
async fn a_second_socket_on_a_session_replaces_the_first() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let session = fresh(&game);
    let mut first = connect(&app, &key, Fmt::Json).await;
    first.hello(session, None).await;
    let mut second = connect(&app, &key, Fmt::Json).await;
    assert_eq!(second.hello(session, Some(1)).await["type"], "ready");
    assert_eq!(first.close_code().await, 4009);
}

/// The node's handle of an open production session.
fn open_session(app: &TestApp, game: &str, session: Uuid) -> offer_actors::SessionHandle {
    app.running
        .state
        .actors
        .session(&offer_actors::SessionKey {
            game_id: game.parse().expect("uuid"),
            sandbox: false,
            session_id: session,
        })
        .expect("session open")
}

async fn wait_until(mut done: impl FnMut() -> bool) {
    tokio::time::timeout(PATIENCE, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("condition reached in time");
}

#[tokio::test]
async fn a_client_that_does_not_read_is_cut_off_with_4008() {
    let mut s = settings(Backend::Embedded, None);
    s.websocket.outbound_queue = 4;
    let app = spawn_with(s).await;
    let (game, key) = game_with_shelf(&app).await;
    let session = fresh(&game);
    let mut c = connect(&app, &key, Fmt::Json).await;
    c.hello(session, None).await;
    let handle = open_session(&app, &game, session);
    let (mut tx, mut rx) = c.ws.split();
    // Fill the kernel buffers with offers the client never reads, from a writer of its own
    // (its sends block once the server stops reading too).
    let request = Message::text(
        json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss"}})
            .to_string(),
    );
    let writer = tokio::spawn(async move {
        for _ in 0..200_000 {
            if tx.send(request.clone()).await.is_err() {
                break;
            }
        }
        tx
    });
    // Meanwhile broadcasts keep coming; once the socket stops draining, the queue fills.
    let mut level = 0;
    tokio::time::timeout(PATIENCE * 3, async {
        while handle.socket_attached() {
            level = 1 - level;
            set_kill(&app, &game, level).await;
        }
    })
    .await
    .expect("the slow consumer is cut off");
    assert!(!handle.socket_attached(), "the session dropped the queue");
    writer.abort();
    // The client reads its backlog and then finds the 4008 close.
    let code = tokio::time::timeout(PATIENCE * 3, async {
        loop {
            match rx.next().await {
                Some(Ok(Message::Close(Some(f)))) => return u16::from(f.code),
                Some(Ok(_)) => {}
                other => panic!("no close frame: {other:?}"),
            }
        }
    })
    .await
    .expect("close in time");
    assert_eq!(code, 4008);
}

#[tokio::test]
async fn a_frame_over_64_kib_closes_with_1009() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let mut c = connect(&app, &key, Fmt::Json).await;
    c.hello(fresh(&game), None).await;
    let big = json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss",
                     "padding": "x".repeat(70 * 1024)}});
    c.send(big).await;
    assert_eq!(c.close_code().await, 1009);
}

#[tokio::test]
async fn malformed_messages_get_errors_and_three_in_a_row_close_with_1007() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let mut c = connect(&app, &key, Fmt::Json).await;
    c.hello(fresh(&game), None).await;
    c.ws.send(Message::text("{not json")).await.expect("send");
    let e = c.recv().await;
    assert_eq!(
        (&e["type"], &e["code"]),
        (&json!("error"), &json!("bad_message"))
    );
    // A good message resets the count.
    c.send(json!({"type": "ack", "seq": 1})).await;
    c.ws.send(Message::text("[]")).await.expect("send");
    assert_eq!(c.recv().await["code"], "bad_message");
    c.ws.send(Message::binary(vec![1, 2, 3]))
        .await
        .expect("send");
    assert_eq!(c.recv().await["code"], "bad_message");
    c.send(json!({"type": "event", "event": {"type": "no_such_event"}}))
        .await;
    assert_eq!(c.close_code().await, 1007);
}

#[tokio::test]
async fn a_bad_key_is_refused_before_the_upgrade() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    for bad in [format!("{key}x"), "nonsense".to_owned(), app.admin.clone()] {
        match try_connect(&app, &bad, Some("svc.v1.json")).await {
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
    // The good key without a subprotocol gets JSON.
    let mut c = try_connect(&app, &key, None).await.expect("connects");
    assert_eq!(c.hello(fresh(&game), None).await["type"], "ready");
}

#[tokio::test]
async fn a_silent_client_gets_pings_then_an_idle_close() {
    let mut s = settings(Backend::Embedded, None);
    s.websocket.ping_interval_s = 1;
    s.websocket.idle_timeout_s = 2;
    let app = spawn_with(s).await;
    let (game, key) = game_with_shelf(&app).await;
    let mut c = connect(&app, &key, Fmt::Json).await;
    c.hello(fresh(&game), None).await;
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
    let (game, key) = game_with_shelf(&app).await;
    let mut c = connect(&app, &key, Fmt::MsgPack).await;
    c.hello(fresh(&game), None).await;
    c.send(json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss"}}))
        .await;
    assert_eq!(c.recv().await["type"], "offer");
    let _ = app.running.shutdown.send(true);
    assert_eq!(c.close_code().await, 1001);
}

#[tokio::test]
async fn a_revoked_key_closes_its_open_sockets() {
    let app = spawn_app().await;
    let (game, _) = game_with_shelf(&app).await;
    let r = app
        .post(
            &format!("/v1/games/{game}/sdk-keys"),
            &app.admin,
            json!({"environment": "production"}),
        )
        .await;
    let issued: Value = r.json().await.expect("json");
    let key = issued["api_key"].as_str().expect("key").to_owned();
    let key_id = issued["key_id"].as_str().expect("id").to_owned();
    let mut c = connect(&app, &key, Fmt::Json).await;
    assert_eq!(c.hello(fresh(&game), None).await["type"], "ready");
    let r = app
        .client
        .delete(app.url(&format!("/v1/games/{game}/sdk-keys/{key_id}")))
        .bearer_auth(&app.admin)
        .send()
        .await
        .expect("revoke");
    assert_eq!(r.status().as_u16(), 204);
    c.send(json!({"type": "offer_request", "trigger_context": {"event_type": "first_loss"}}))
        .await;
    assert_eq!(c.close_code().await, 4001);
}
