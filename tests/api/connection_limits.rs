//! Connections shared fairly, through real sockets: one client address, or one SDK key, at
//! its socket limit is refused 429 `too_many_connections` while another still connects; a
//! node whose every connection is taken still answers its liveness probe, `/metrics` and the
//! studio from the reserve, says it is not ready, and refuses players; a closed socket frees
//! its place at once. Two client addresses on one machine: Linux routes all of 127/8 to the
//! loopback, so a socket bound to 127.0.0.2 reaches the engine on 127.0.0.1 from another
//! address.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL};
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::fixtures::{Sdk, store_shelf};
use super::helpers::{TestApp, default_backend, spawn_tuned};
use super::raw::{parse_single, read_until_closed};
use super::ws_client::{JSON_PROTOCOL, PATIENCE, fresh};

/// The engine's own address, and the first client's.
const FIRST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
/// Another client's address.
const SECOND: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
/// A third client's address.
const THIRD: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);

/// Sockets the tests open at most while waiting for a refusal: far above every limit they set.
const ENOUGH: usize = 64;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// An upgrade refused before any socket exists.
#[derive(Debug)]
struct Refused {
    status: u16,
    body: Value,
    retry_after: Option<String>,
}

/// A TCP connection to the engine from `from`.
async fn tcp_from(app: &TestApp, from: Ipv4Addr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::new(IpAddr::V4(from), 0))
        .expect("bind the client's address");
    socket.connect(app.addr).await.expect("connect")
}

/// Opens `/v1/sdk/ws` with `key` from `from`; the refusal when the engine answers one.
async fn open_from(app: &TestApp, key: &str, from: Ipv4Addr) -> Result<Socket, Refused> {
    let stream = tcp_from(app, from).await;
    let mut req = format!("ws://{}/v1/sdk/ws", app.addr)
        .into_client_request()
        .expect("request");
    let headers = req.headers_mut();
    headers.insert(
        AUTHORIZATION,
        format!("Bearer {key}").parse().expect("header"),
    );
    headers.insert(
        SEC_WEBSOCKET_PROTOCOL,
        JSON_PROTOCOL.parse().expect("header"),
    );
    let upgrade = tokio_tungstenite::client_async(req, MaybeTlsStream::Plain(stream));
    match tokio::time::timeout(PATIENCE, upgrade)
        .await
        .expect("the engine answers the upgrade in time")
    {
        Ok((ws, _)) => Ok(ws),
        Err(WsError::Http(resp)) => Err(Refused {
            status: resp.status().as_u16(),
            body: serde_json::from_slice(resp.body().as_deref().unwrap_or_default())
                .expect("error body is JSON"),
            retry_after: resp
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        }),
        Err(e) => panic!("expected a socket or an HTTP refusal, got {e}"),
    }
}

/// Opens sockets with `key` from `from` until one is refused; returns the open ones and the
/// refusal.
async fn fill(app: &TestApp, key: &str, from: Ipv4Addr) -> (Vec<Socket>, Refused) {
    let mut open = Vec::new();
    for _ in 0..ENOUGH {
        match open_from(app, key, from).await {
            Ok(ws) => open.push(ws),
            Err(refused) => return (open, refused),
        }
    }
    panic!("{ENOUGH} sockets opened and none refused");
}

/// Asserts the per-client refusal of `scope` at `limit`.
#[track_caller]
fn assert_past_limit(refused: &Refused, scope: &str, limit: usize) {
    assert_eq!(refused.status, 429, "{refused:?}");
    assert_eq!(
        refused.body["error"]["code"], "too_many_connections",
        "{refused:?}"
    );
    assert!(refused.body["error"]["message"].is_string(), "{refused:?}");
    assert_eq!(
        refused.body["error"]["details"],
        json!({"scope": scope, "limit": limit}),
        "{refused:?}"
    );
    assert_eq!(refused.retry_after.as_deref(), Some("5"), "{refused:?}");
}

/// Says `hello` on `ws` for a fresh session of `game`; asserts the `ready`.
async fn say_hello(ws: &mut Socket, game: &str) {
    let session = fresh(game);
    let hello = json!({"type": "hello", "session_id": session, "player_id": format!("p-{session}"),
                       "attributes": {"country": "DE", "platform": "ios"}});
    ws.send(Message::text(hello.to_string()))
        .await
        .expect("send");
    let ready = tokio::time::timeout(PATIENCE, async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(t))) => {
                    let m: Value = serde_json::from_str(t.as_str()).expect("json");
                    if m["type"] == "ready" {
                        return m;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("socket ended before ready: {other:?}"),
            }
        }
    })
    .await
    .expect("ready in time");
    assert_eq!(ready["type"], "ready", "{ready}");
}

/// Closes `ws` and waits for the engine's answer to the close.
async fn close(mut ws: Socket) {
    ws.close(None).await.expect("close");
    let drained = tokio::time::timeout(PATIENCE, async {
        while let Some(Ok(_)) = ws.next().await {}
    })
    .await;
    assert!(drained.is_ok(), "the engine did not finish the close");
}

/// Opens a socket with `key` from `from` until the engine admits it (the place a closed
/// socket held is freed once the engine has seen the close); every refusal meanwhile must be
/// `status`.
async fn open_again(app: &TestApp, key: &str, from: Ipv4Addr, status: u16) -> Socket {
    tokio::time::timeout(PATIENCE, async {
        loop {
            match open_from(app, key, from).await {
                Ok(ws) => return ws,
                Err(refused) => assert_eq!(refused.status, status, "{refused:?}"),
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a freed place is taken again")
}

/// Sends `GET path` on a new connection from `from`, with a bearer `token` if any, and reads
/// everything until the engine closes the connection (the request asks it to).
async fn get_once(app: &TestApp, from: Ipv4Addr, path: &str, token: Option<&str>) -> Vec<u8> {
    let mut stream = tcp_from(app, from).await;
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{auth}\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    read_until_closed(&mut stream).await
}

/// A server whose sockets live as long as the test: no hello or idle deadline closes a held
/// socket while it runs.
async fn long_lived(tune: impl FnOnce(&mut offer_engine::config::Settings)) -> TestApp {
    spawn_tuned(default_backend(), |s| {
        s.websocket.hello_timeout_s = 600;
        s.websocket.idle_timeout_s = 600;
        tune(s);
    })
    .await
}

/// The value of the metric line that starts with `series ` in `metrics`.
fn metric(metrics: &str, series: &str) -> Option<f64> {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test]
async fn one_address_at_its_socket_limit_leaves_the_node_to_the_others() {
    let app = long_lived(|s| {
        s.server.max_connections = 16;
        s.websocket.max_sockets_per_address = 4;
    })
    .await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    let (mut held, refused) = fill(&app, &key, FIRST).await;
    assert_eq!(held.len(), 4);
    assert_past_limit(&refused, "address", 4);
    // The address's other requests, liveness among them, are not sockets: still served.
    let health = get_once(&app, FIRST, "/healthz", None).await;
    assert_eq!(parse_single(&health).status, 200);
    // Another address connects and plays, with the same key.
    let mut other = open_from(&app, &key, SECOND).await.expect("connects");
    say_hello(&mut other, &game).await;
    // A closed socket gives its place back: the first address opens one again, and only one.
    close(held.pop().expect("held")).await;
    let mut again = open_again(&app, &key, FIRST, 429).await;
    say_hello(&mut again, &game).await;
    let refused = open_from(&app, &key, FIRST)
        .await
        .expect_err("at the limit again");
    assert_past_limit(&refused, "address", 4);
    let metrics = String::from_utf8(get_once(&app, THIRD, "/metrics", None).await).expect("utf8");
    assert_eq!(
        metric(
            &metrics,
            "offer_connections_refused_total{reason=\"per_address\"}"
        ),
        Some(2.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn one_key_at_its_socket_limit_leaves_the_node_to_the_other_games() {
    let app = long_lived(|s| s.websocket.max_sockets_per_key = 3).await;
    let first = app.game_with(store_shelf()).await;
    let second = app.game_with(store_shelf()).await;
    let (held, refused) = fill(&app, &first.key, FIRST).await;
    assert_eq!(held.len(), 3);
    assert_past_limit(&refused, "key", 3);
    // The limit is the key's, from any address.
    let refused = open_from(&app, &first.key, SECOND)
        .await
        .expect_err("the key is at its limit");
    assert_past_limit(&refused, "key", 3);
    // Another game's key still connects, from the same address.
    let mut other = open_from(&app, &second.key, FIRST).await.expect("connects");
    say_hello(&mut other, &second.game).await;
}

#[tokio::test]
async fn concurrent_upgrades_are_counted_exactly() {
    let app = long_lived(|s| s.websocket.max_sockets_per_address = 5).await;
    let Sdk { key, .. } = app.game_with(store_shelf()).await;
    let attempts = (0..20).map(|_| open_from(&app, &key, FIRST));
    let outcomes = futures::future::join_all(attempts).await;
    let mut open = Vec::new();
    for outcome in outcomes {
        match outcome {
            Ok(ws) => open.push(ws),
            Err(refused) => assert_past_limit(&refused, "address", 5),
        }
    }
    assert_eq!(open.len(), 5);
    // Every place comes back once they close, and none more.
    for ws in open {
        close(ws).await;
    }
    let mut reopened = vec![open_again(&app, &key, FIRST, 429).await];
    while reopened.len() < 5 {
        reopened.push(open_again(&app, &key, FIRST, 429).await);
    }
    let refused = open_from(&app, &key, FIRST)
        .await
        .expect_err("at the limit");
    assert_past_limit(&refused, "address", 5);
}

#[tokio::test]
async fn a_node_full_of_sockets_still_answers_liveness_and_its_operators() {
    const MAX: usize = 6;
    let app = long_lived(|s| s.server.max_connections = MAX).await;
    let Sdk { game, key } = app.game_with(store_shelf()).await;
    // One address takes every place (the test's own kept-alive HTTP connection may hold one).
    let (mut held, refused) = fill(&app, &key, FIRST).await;
    assert!(!held.is_empty());
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.body["error"]["code"], "unavailable", "{refused:?}");
    // Liveness, from any address: the process answers.
    for from in [FIRST, SECOND] {
        let health = parse_single(&get_once(&app, from, "/healthz", None).await);
        assert_eq!(health.status, 200, "{health:?}");
        let body: Value = serde_json::from_slice(&health.body).expect("json");
        assert_eq!(body, json!({"status": "ok"}));
    }
    // Readiness: the node takes no new client.
    let ready = parse_single(&get_once(&app, SECOND, "/readyz", None).await);
    let body = ready.assert_error(503, "unavailable");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("server.max_connections")),
        "{body}"
    );
    // The studio reaches its games (the kill switch among them), and the metrics show the
    // pools and the refusals.
    let games = parse_single(&get_once(&app, SECOND, "/v1/games", Some(&app.admin)).await);
    assert_eq!(games.status, 200, "{games:?}");
    let dashboard = parse_single(&get_once(&app, SECOND, "/dashboard/sign-in", None).await);
    assert_eq!(dashboard.status, 200, "{dashboard:?}");
    // The reserve connections just answered close on the server's side a moment after the
    // client reads their end: scrape until only this scrape holds one (bounded).
    let mut metrics = String::new();
    for _ in 0..100 {
        metrics = String::from_utf8(get_once(&app, SECOND, "/metrics", None).await).expect("utf8");
        if metric(&metrics, "offer_connections_open{pool=\"reserve\"}") == Some(1.0) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(metric(&metrics, "offer_connections_max"), Some(MAX as f64));
    assert_eq!(
        metric(&metrics, "offer_connections_open{pool=\"general\"}"),
        Some(MAX as f64),
        "{metrics}"
    );
    // This scrape itself.
    assert_eq!(
        metric(&metrics, "offer_connections_open{pool=\"reserve\"}"),
        Some(1.0),
        "{metrics}"
    );
    assert!(
        metric(
            &metrics,
            "offer_connections_refused_total{reason=\"node_full\"}"
        )
        .is_some_and(|n| n >= 1.0),
        "{metrics}"
    );
    // A player's request is no operator's: refused, from any address.
    let status =
        parse_single(&get_once(&app, SECOND, &format!("/v1/sdk/status/{game}"), Some(&key)).await);
    status.assert_error(503, "unavailable");
    let refused = open_from(&app, &key, SECOND)
        .await
        .expect_err("the node is full");
    assert_eq!(refused.status, 503, "{refused:?}");
    // A closed socket frees its place: another opens in its stead.
    close(held.pop().expect("held")).await;
    let mut again = open_again(&app, &key, SECOND, 503).await;
    say_hello(&mut again, &game).await;
}

#[tokio::test]
async fn past_the_limit_a_reserve_connection_serves_one_request_and_closes() {
    let app = long_lived(|s| s.server.max_connections = 2).await;
    let Sdk { key, .. } = app.game_with(store_shelf()).await;
    let (_held, refused) = fill(&app, &key, FIRST).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    // Two probes written at once on one reserve connection: the first is answered, and the
    // connection closes instead of serving the second.
    let mut stream = tcp_from(&app, SECOND).await;
    stream
        .write_all(
            b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
        )
        .await
        .expect("write");
    let raw = read_until_closed(&mut stream).await;
    assert_eq!(parse_single(&raw).status, 200);
}

#[tokio::test]
async fn with_the_reserve_taken_too_the_liveness_probe_is_still_answered() {
    let app = long_lived(|s| {
        s.server.max_connections = 2;
        s.server.reserved_connections = 1;
    })
    .await;
    let Sdk { key, .. } = app.game_with(store_shelf()).await;
    let (_held, refused) = fill(&app, &key, FIRST).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    // The reserve's one place, held by a studio request whose body never comes.
    let mut slow = tcp_from(&app, SECOND).await;
    let head = format!(
        "POST /v1/games HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"name\": ",
        app.admin
    );
    slow.write_all(head.as_bytes()).await.expect("write");
    // No place is left anywhere: readiness is refused, liveness still answered.
    let ready = parse_single(&get_once(&app, THIRD, "/readyz", None).await);
    ready.assert_error(503, "unavailable");
    let health = parse_single(&get_once(&app, THIRD, "/healthz", None).await);
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(health.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&health.body).expect("json");
    assert_eq!(body, json!({"status": "ok"}));
}
