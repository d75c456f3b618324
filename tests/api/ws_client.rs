//! A WebSocket SDK client for the tests: connect with a subprotocol, say `hello`, send and
//! read messages in either wire format (JSON text or MessagePack binary frames), wait for
//! a message of one type or for the server's close code; and the message bodies the tests
//! send. The messages are the protocol's own types (`offer_wire::socket`); the tests see
//! them as JSON values, to send malformed ones too and to look at fields one by one.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use offer_domain::holdout::is_holdout;
use offer_wire::socket::{ClientMessage, Numbered};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::header::{AUTHORIZATION, SEC_WEBSOCKET_PROTOCOL};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use uuid::Uuid;

use super::helpers::TestApp;

/// Only to avoid hangs: every wait in the WebSocket tests is bounded by this.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub use offer_wire::socket::JSON_PROTOCOL;
use offer_wire::socket::MSGPACK_PROTOCOL;

/// The wire format of a connection.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fmt {
    Json,
    MsgPack,
}

/// One SDK socket and the format it speaks.
pub struct Client {
    /// The raw socket, for tests that send malformed frames, split it or close it.
    pub ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    fmt: Fmt,
}

/// Opens `/v1/sdk/ws` with `key`, offering `proto` as `Sec-WebSocket-Protocol` (none: no
/// header, which the server refuses); the error is the server's refusal, for tests of bad
/// keys and subprotocols.
pub async fn try_connect(app: &TestApp, key: &str, proto: Option<&str>) -> Result<Client, WsError> {
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
    let fmt = if proto == Some(MSGPACK_PROTOCOL) {
        Fmt::MsgPack
    } else {
        Fmt::Json
    };
    Ok(Client { ws, fmt })
}

/// Opens `/v1/sdk/ws` with `key` in format `fmt`; panics when refused.
pub async fn connect(app: &TestApp, key: &str, fmt: Fmt) -> Client {
    let proto = match fmt {
        Fmt::Json => JSON_PROTOCOL,
        Fmt::MsgPack => MSGPACK_PROTOCOL,
    };
    try_connect(app, key, Some(proto)).await.expect("connects")
}

impl Client {
    /// Sends `v` (a [`ClientMessage`], or a JSON value for a message the protocol does not
    /// allow) encoded in this connection's format.
    pub async fn send(&mut self, v: impl Serialize) {
        let frame = match self.fmt {
            Fmt::Json => Message::text(serde_json::to_string(&v).expect("json")),
            Fmt::MsgPack => Message::binary(rmp_serde::to_vec_named(&v).expect("msgpack")),
        };
        self.ws.send(frame).await.expect("send");
    }

    /// The next data message, decoded; panics on close or silence, and on a message a
    /// client could not read as a server message.
    pub async fn recv(&mut self) -> Value {
        let v = self.recv_frame().await;
        if let Err(e) = serde_json::from_value::<Numbered>(v.clone()) {
            panic!("not a server message ({e}): {v}");
        }
        v
    }

    /// The next data frame, decoded.
    async fn recv_frame(&mut self) -> Value {
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
    pub async fn recv_type(&mut self, kind: &str) -> Value {
        loop {
            let m = self.recv().await;
            if m["type"] == kind {
                return m;
            }
        }
    }

    /// The next message that answers this client (broadcasts skipped: a kill switch set
    /// just before `hello` may still be fanning out).
    pub async fn recv_answer(&mut self) -> Value {
        loop {
            let m = self.recv().await;
            if m["type"] != "kill_switch" && m["type"] != "config" {
                return m;
            }
        }
    }

    /// Reads (and drops) everything until the server's close frame; returns its code. The
    /// whole wait is bounded, so a socket kept busy with pings still fails the test.
    pub async fn close_code(&mut self) -> u16 {
        let wait = async {
            loop {
                match self.ws.next().await {
                    Some(Ok(Message::Close(Some(CloseFrame { code, .. })))) => return code.into(),
                    Some(Ok(Message::Close(None))) => panic!("close without a code"),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => panic!("socket error before the close frame: {e}"),
                    None => panic!("socket ended without a close frame"),
                }
            }
        };
        tokio::time::timeout(PATIENCE, wait)
            .await
            .expect("the server closes in time")
    }

    /// Opens `session` for player `p-{session}`, or resumes it after `resume` (the last
    /// `seq` read and the epoch of the `ready` it was read under); returns the first answer
    /// (`ready`, or the first replayed message of a resume).
    pub async fn hello(&mut self, session: Uuid, resume: Option<(u64, &str)>) -> Value {
        let hello = ClientMessage::Hello {
            session_id: session,
            player_id: format!("p-{session}"),
            attributes: [("country", "DE"), ("platform", "ios")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), json!(v)))
                .collect(),
            resume_from: resume.map(|(seq, _)| seq),
            epoch: resume.map(|(_, epoch)| epoch.to_owned()),
            player_token: None,
        };
        self.send(hello).await;
        self.recv().await
    }
}

/// A session id whose player (`p-{session}`, as [`Client::hello`] names it) is outside the
/// game's holdout, so the offer pipeline is not skipped for it.
pub fn fresh(game: &str) -> Uuid {
    let game_id: Uuid = game.parse().expect("game id is a uuid");
    loop {
        let session = Uuid::new_v4();
        if !is_holdout(&format!("p-{session}"), game_id) {
            return session;
        }
    }
}

/// The client message asking for an offer on `event_type`, as a JSON value (a test may
/// add to it).
pub fn offer_request(event_type: &str) -> Value {
    serde_json::to_value(ClientMessage::offer_request(event_type)).expect("json")
}

/// Fields of a server message whose values differ by nature from one session or run to the
/// next (ids, times, versions, the session's epoch, the wording of a decoder's message).
pub const VARYING_FIELDS: [&str; 6] = [
    "offer_id",
    "epoch",
    "expires_at",
    "updated_at",
    "config_version",
    "message",
];

/// The client message carrying one game event, as a JSON value: the event may be one the
/// server refuses, which `ClientMessage` cannot hold.
pub fn event(event: Value) -> Value {
    json!({"type": "event", "event": event})
}

/// Asserts that message `m` has every field of the object `expected` (its other fields are
/// not looked at).
#[track_caller]
pub fn assert_fields(m: &Value, expected: Value) {
    for (field, value) in expected.as_object().expect("expected fields are an object") {
        assert_eq!(&m[field], value, "field {field} of {m}");
    }
}
