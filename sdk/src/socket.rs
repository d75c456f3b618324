//! One WebSocket connection of the session: `hello` (resuming from the last `seq`), then every
//! server message becomes state and a callback, and the game's offer requests go out, until
//! the socket closes.

use std::sync::atomic::Ordering;

use futures::{SinkExt as _, StreamExt as _};
use offer_domain::kill_level::KillLevel;
use offer_domain::offer::KillSwitch;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;

use crate::backoff::Backoff;
use crate::callback::SdkCallback;
use crate::player_token::{InUse, Refusal};
use crate::protocol::{self, Numbered, ServerMessage};
use crate::shared::{CONNECT_TIMEOUT, ConnectionError, Shared};

/// Acknowledge the server's messages every this many.
const ACK_EVERY: u64 = 16;

/// The outcome of [`SdkCallback::NoOffer`] for an offer asked for while no socket is up.
pub const OFFLINE: &str = "offline";

/// Where the session's messages stopped, kept across connections: the last `seq` read and
/// the epoch of the `ready` it was read under. A reconnection resumes from it; the engine
/// honours that only within the same epoch (a restarted engine starts a new one), so a new
/// history never passes for the one the SDK read.
#[derive(Debug, Default)]
pub struct Position {
    /// The last `seq` read, `None` before the first.
    seq: Option<u64>,
    /// The epoch of the last `ready`, `None` before the first (or from an engine older than
    /// epochs).
    epoch: Option<String>,
}

/// Connects, sends `hello` (with the player token `token`, the one the session opened with)
/// and serves the socket until it closes. `position` is kept across connections; `backoff` is
/// reset once `ready` arrives; `requests` are the game's offer requests
/// (`trigger_context.event_type`). A player token refused in answer to `hello` ends the
/// connection: the next waits for the game's new token.
pub async fn serve(
    shared: &Shared,
    player_id: &str,
    token: &InUse,
    position: &mut Position,
    backoff: &mut Backoff,
    requests: &mut UnboundedReceiver<String>,
) -> Result<(), ConnectionError> {
    let mut request = shared.config.ws_url().into_client_request()?;
    let headers = request.headers_mut();
    let bearer = HeaderValue::from_str(&format!("Bearer {}", shared.config.api_key))
        .map_err(|e| ConnectionError::Socket(e.into()))?;
    headers.insert("authorization", bearer);
    headers.insert(
        "sec-websocket-protocol",
        HeaderValue::from_static(protocol::SUBPROTOCOL),
    );
    let (mut ws, _) =
        tokio::time::timeout(CONNECT_TIMEOUT, tokio_tungstenite::connect_async(request))
            .await
            .map_err(|_| ConnectionError::Timeout)??;
    ws.send(Message::text(protocol::hello(
        shared.session_id,
        player_id,
        token.text.as_deref(),
        position.seq,
        position.epoch.as_deref(),
    )))
    .await?;
    let mut unacked = 0u64;
    let ended = loop {
        tokio::select! {
            frame = ws.next() => {
                let text = match frame {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => break Err(e.into()),
                    None => break Err(ConnectionError::Closed),
                };
                let Ok(Numbered { seq, message }) = serde_json::from_str::<Numbered>(text.as_str())
                else {
                    continue;
                };
                if seq > 0 {
                    position.seq = Some(seq);
                    unacked += 1;
                }
                if let ServerMessage::Error { code, message: said } = &message
                    && !shared.connected.load(Ordering::SeqCst)
                    && let Some(refusal) = Refusal::of(code, said)
                {
                    // `hello` was refused: everything after it would be too.
                    shared.token_refused(token, refusal.clone());
                    break Err(ConnectionError::PlayerToken(refusal));
                }
                if let ServerMessage::Ready { epoch, .. } = &message {
                    // Every later seq is numbered under this `ready`'s epoch (replayed
                    // messages came before it, under the same one).
                    position.epoch.clone_from(epoch);
                    backoff.reset();
                    shared.connected.store(true, Ordering::SeqCst);
                }
                apply(shared, &message);
                if let Some(callback) = protocol::into_callback(message) {
                    shared.emit(callback);
                }
                if unacked >= ACK_EVERY && let Some(seq) = position.seq {
                    if let Err(e) = ws.send(Message::text(protocol::ack(seq))).await {
                        break Err(e.into());
                    }
                    unacked = 0;
                }
            }
            Some(event_type) = requests.recv() => {
                if let Err(e) = ws.send(Message::text(protocol::offer_request(&event_type))).await {
                    shared.emit(SdkCallback::NoOffer { outcome: OFFLINE.into() });
                    break Err(e.into());
                }
            }
        }
    };
    shared.connected.store(false, Ordering::SeqCst);
    // Requests that raced the socket's end get their answer too.
    while requests.try_recv().is_ok() {
        shared.emit(SdkCallback::NoOffer {
            outcome: OFFLINE.into(),
        });
    }
    ended
}

/// What a server message changes in the SDK's state (the cache included); its callback is
/// emitted by the caller.
fn apply(shared: &Shared, message: &ServerMessage) {
    match message {
        ServerMessage::Ready {
            kill_switch,
            mode,
            config_version,
            ..
        } => shared.apply(
            |s| {
                s.kill_switch = kill_switch.clone();
                s.mode = *mode;
                s.config_version = *config_version;
            },
            false,
        ),
        ServerMessage::KillSwitch {
            level,
            reason,
            updated_at,
        } => {
            shared.apply(
                |s| {
                    s.kill_switch = KillSwitch {
                        level: *level,
                        reason: reason.clone(),
                        updated_at: *updated_at,
                    };
                },
                false,
            );
            if *level < KillLevel::SdkOff {
                shared.flush.notify_one();
            }
        }
        ServerMessage::Config {
            config_version,
            custom_page,
        } => shared.apply(
            |s| {
                s.config_version = *config_version;
                s.custom_page = protocol::page_fields(custom_page.as_ref());
            },
            false,
        ),
        _ => {}
    }
}
