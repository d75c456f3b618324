//! `ws-baseline`: a bare tokio-tungstenite broadcast server, the floor the engine's
//! kill-switch fan-out is compared with.
//!
//! It accepts WebSocket connections (echoing the `svc.v1.json` subprotocol), answers any text
//! frame with a pre-encoded `ready`, except the text frame `go`, which sends one pre-encoded
//! `kill_switch` message (the engine's own message type, so of its size) to every connected socket
//! through a `tokio::sync::broadcast` channel. No HTTP, no sessions, no sequence numbers: just
//! the socket work of a fan-out. Its buffers are the engine's defaults (1 KiB read, 4 KiB
//! write).

use std::net::SocketAddr;

use anyhow::{Context, Result};
use futures::{SinkExt as _, StreamExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use offer_domain::game::Mode;
use offer_domain::kill_level::KillLevel;
use offer_domain::offer::KillSwitch;
use offer_wire::socket::{Numbered, ServerMessage};

use crate::ws_client::PROTOCOL;

/// The trigger frame.
pub const GO: &str = "go";
/// The answer to `hello` (the engine's `ready` of a new session) and the broadcast message
/// (the engine's `kill_switch`, as the load test sets it), encoded once as the engine
/// frames them.
fn frames() -> Result<(Message, Message)> {
    let now = chrono::Utc::now();
    let ready = Numbered {
        seq: 1,
        message: ServerMessage::Ready {
            kill_switch: KillSwitch::default(),
            mode: Mode::Shadow,
            config_version: 1,
            resumed: false,
            epoch: Some("0000000000000001".into()),
            inventory: Vec::new(),
        },
    };
    let kill = Numbered {
        seq: 2,
        message: ServerMessage::KillSwitch {
            level: KillLevel::OffersOff,
            reason: "load test".into(),
            updated_at: now,
        },
    };
    let text = |m: &Numbered| serde_json::to_string(m).map(Message::text);
    Ok((
        text(&ready).context("encoding ready")?,
        text(&kill).context("encoding kill_switch")?,
    ))
}

/// Serves until killed.
pub async fn serve(bind: SocketAddr) -> Result<()> {
    crate::fdlimit::raise_to_hard()?;
    let listener = TcpListener::bind(bind)
        .await
        .with_context(|| format!("binding {bind}"))?;
    eprintln!("ws-baseline listening on {bind}");
    let (fanout, _) = broadcast::channel::<Message>(16);
    let (ready, kill) = frames()?;
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // EMFILE and friends: keep serving the sockets already open.
                eprintln!("accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        tokio::spawn(connection(
            stream,
            fanout.clone(),
            ready.clone(),
            kill.clone(),
        ));
    }
}

/// One socket: answers hello, triggers or relays the broadcast.
async fn connection(
    stream: TcpStream,
    fanout: broadcast::Sender<Message>,
    ready: Message,
    kill: Message,
) {
    // Errors end this socket only.
    let _ = stream.set_nodelay(true);
    let config = WebSocketConfig::default()
        .read_buffer_size(1024)
        .write_buffer_size(4096)
        .max_write_buffer_size(4096 + 2 * 65_536);
    let Ok(mut ws) =
        tokio_tungstenite::accept_hdr_async_with_config(stream, echo_protocol, Some(config)).await
    else {
        return;
    };
    let mut rx = fanout.subscribe();
    loop {
        tokio::select! {
            incoming = ws.next() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if text.as_str() == GO {
                        // Nobody subscribed is impossible: this socket is.
                        let _ = fanout.send(kill.clone());
                    } else if ws.send(ready.clone()).await.is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            },
            out = rx.recv() => match out {
                Ok(msg) => {
                    if ws.send(msg).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            },
        }
    }
}

/// Echoes the JSON subprotocol when the client asked for one.
// The signature is the one tungstenite's handshake `Callback` requires.
#[allow(clippy::result_large_err)]
fn echo_protocol(request: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
    if request.headers().contains_key("sec-websocket-protocol") {
        response
            .headers_mut()
            .insert("sec-websocket-protocol", HeaderValue::from_static(PROTOCOL));
    }
    Ok(response)
}
