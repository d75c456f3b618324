//! One task per socket: it reads client messages, writes the session's queued messages, sends
//! heartbeats and closes the socket with the right code.
//!
//! The task selects over the node's shutdown signal, the session's outbound queue, the socket
//! and the ping timer. Every server message goes through the session's bounded queue (so it
//! gets its `seq` and a place in the replay ring), including the answers to this client's own
//! requests. A write that blocks because the client stopped reading races the session's cut
//! signal: when the queue fills, the session drops it and the task closes with 4008 instead of
//! waiting on the client forever.

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures::SinkExt;
use offer_actors::{Delivery, Detached, GameHandle, SessionHandle, SocketQueue};
use tokio::time::Instant;

use super::protocol::{ClientMessage, Format, ServerMessage};
use crate::auth::SdkCaller;
use crate::error::ApiError;
use crate::events;
use crate::http::sdk::{KILL_SDK_OFF, OpenSession, open_session};
use crate::offers::{Served, serve};
use crate::state::AppState;

/// Close codes the gateway uses.
mod code {
    /// The node shuts down, or the client went silent.
    pub const GOING_AWAY: u16 = 1001;
    /// A broken frame (protocol error).
    pub const PROTOCOL: u16 = 1002;
    /// Three malformed messages in a row.
    pub const INVALID_DATA: u16 = 1007;
    /// A frame over the configured maximum (64 KiB).
    pub const TOO_BIG: u16 = 1009;
    /// The client did not read and its queue filled.
    pub const SLOW_CONSUMER: u16 = 4008;
    /// Another socket resumed this session.
    pub const REPLACED: u16 = 4009;
    /// The socket's SDK key was revoked.
    pub const KEY_REVOKED: u16 = 4001;
}

/// Malformed messages in a row that close the socket.
const MAX_MALFORMED: u8 = 3;
/// Messages written before one flush.
const WRITE_BATCH: usize = 32;
/// How long a closing socket may take to flush and hand-shake.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Why the loop ends: a close frame to send, or nothing (the client is gone).
type Close = Option<(u16, &'static str)>;

/// The session a `hello` opened on this socket.
struct Live {
    session: SessionHandle,
    game: GameHandle,
    queue: SocketQueue,
}

/// One connection's state.
struct Conn {
    state: AppState,
    caller: SdkCaller,
    format: Format,
    socket: WebSocket,
    live: Option<Live>,
    malformed: u8,
}

/// What woke the task.
enum Step {
    Shutdown,
    Deliver(Delivery),
    Incoming(Option<Result<Message, axum::Error>>),
    Tick,
}

/// Serves one upgraded socket until it closes.
pub async fn run(state: AppState, caller: SdkCaller, format: Format, socket: WebSocket) {
    let cfg = state.settings.websocket.clone();
    let mut closing = state.closing.subscribe();
    let ping_every = Duration::from_secs(cfg.ping_interval_s.max(1));
    let idle = Duration::from_secs(cfg.idle_timeout_s.max(1));
    let mut ping = tokio::time::interval_at(Instant::now() + ping_every, ping_every);
    let mut last_heard = Instant::now();
    let mut conn = Conn {
        state,
        caller,
        format,
        socket,
        live: None,
        malformed: 0,
    };
    let close: Close = loop {
        let step = tokio::select! {
            biased;
            _ = closing.wait_for(|c| *c) => Step::Shutdown,
            d = next_delivery(&mut conn.live) => Step::Deliver(d),
            m = conn.socket.recv() => Step::Incoming(m),
            _ = ping.tick() => Step::Tick,
        };
        match step {
            Step::Shutdown => {
                conn.flush_queued().await;
                break Some((code::GOING_AWAY, "shutting_down"));
            }
            Step::Deliver(Delivery::Message(first)) => {
                if let Err(close) = conn.write_batch(first).await {
                    break close;
                }
            }
            Step::Deliver(Delivery::Cut(why)) => break Some(cut_close(why)),
            Step::Incoming(None) => break None,
            Step::Incoming(Some(Err(e))) => break Some(read_error_close(&e)),
            Step::Incoming(Some(Ok(_))) | Step::Tick
                if conn.state.auth.is_revoked(&conn.caller.key.key_hash) =>
            {
                break Some((code::KEY_REVOKED, "key_revoked"));
            }
            Step::Incoming(Some(Ok(msg))) => {
                last_heard = Instant::now();
                match msg {
                    Message::Close(_) => break None,
                    Message::Ping(_) | Message::Pong(_) => {}
                    frame => {
                        if let Err(close) = conn.handle(frame).await {
                            break close;
                        }
                    }
                }
            }
            Step::Tick => {
                if last_heard.elapsed() >= idle {
                    break Some((code::GOING_AWAY, "idle_timeout"));
                }
                if let Err(close) = conn.write(Message::Ping(Default::default())).await {
                    break close;
                }
            }
        }
    };
    conn.finish(close).await;
}

async fn next_delivery(live: &mut Option<Live>) -> Delivery {
    match live {
        Some(live) => live.queue.recv().await,
        None => std::future::pending().await,
    }
}

fn cut_close(why: Detached) -> (u16, &'static str) {
    match why {
        Detached::SlowConsumer => (code::SLOW_CONSUMER, "slow_consumer"),
        Detached::Replaced => (code::REPLACED, "session_resumed_elsewhere"),
    }
}

/// The close code of a read error (the framework reports limits only through its message).
fn read_error_close(e: &axum::Error) -> (u16, &'static str) {
    let text = e.to_string();
    if text.starts_with("Space limit exceeded") {
        (code::TOO_BIG, "frame_too_large")
    } else if text.starts_with("UTF-8 encoding error") {
        (code::INVALID_DATA, "invalid_utf8")
    } else {
        (code::PROTOCOL, "protocol_error")
    }
}

impl Conn {
    /// Writes one frame, abandoning it if the session cuts this socket off meanwhile.
    async fn write(&mut self, msg: Message) -> Result<(), Close> {
        let socket = &mut self.socket;
        match &mut self.live {
            Some(live) => tokio::select! {
                r = socket.send(msg) => r.map_err(|_| None),
                why = live.queue.cut() => Err(Some(cut_close(why))),
            },
            None => socket.send(msg).await.map_err(|_| None),
        }
    }

    /// Writes `first` and whatever else is queued (up to a batch), then flushes once.
    async fn write_batch(&mut self, first: offer_actors::Sequenced) -> Result<(), Close> {
        let Some(live) = &mut self.live else {
            return Ok(());
        };
        let format = self.format;
        let socket = &mut self.socket;
        let queue = &mut live.queue;
        let mut batch = Vec::with_capacity(4);
        batch.push(format.frame(first.seq, &first.msg));
        while batch.len() < WRITE_BATCH {
            match queue.try_recv() {
                Some(m) => batch.push(format.frame(m.seq, &m.msg)),
                None => break,
            }
        }
        let send_all = async {
            for frame in batch {
                socket.feed(frame).await?;
            }
            socket.flush().await
        };
        tokio::select! {
            r = send_all => r.map_err(|_| None),
            why = queue.cut() => Err(Some(cut_close(why))),
        }
    }

    /// On shutdown: writes what is already queued, within the close grace.
    async fn flush_queued(&mut self) {
        let Some(live) = &mut self.live else {
            return;
        };
        let format = self.format;
        let socket = &mut self.socket;
        let queue = &mut live.queue;
        let flush = async {
            while let Some(m) = queue.try_recv() {
                socket.feed(format.frame(m.seq, &m.msg)).await?;
            }
            socket.flush().await
        };
        let _ = tokio::time::timeout(CLOSE_GRACE, flush).await;
    }

    /// Detaches from the session, sends the close frame and waits (bounded) for the close
    /// handshake, so the client reads the code before the connection goes.
    async fn finish(mut self, close: Close) {
        if let Some(live) = self.live.take() {
            live.session.detach(&live.queue);
            drop(live);
        }
        let socket = &mut self.socket;
        let handshake = async {
            if let Some((code, reason)) = close {
                let frame = Message::Close(Some(CloseFrame {
                    code,
                    reason: reason.into(),
                }));
                if socket.send(frame).await.is_err() {
                    return;
                }
            }
            // Reading on flushes the reply to a client's close, or waits for the client's
            // reply to ours; it ends at once when the connection is already gone.
            while let Some(Ok(_)) = socket.recv().await {}
        };
        let _ = tokio::time::timeout(CLOSE_GRACE, handshake).await;
    }

    /// Answers `msg` through the session's queue, or directly (seq 0) before `hello`.
    async fn reply(&mut self, msg: ServerMessage) -> Result<(), Close> {
        match &self.live {
            Some(live) => {
                live.session.push(msg.outbound());
                Ok(())
            }
            None => {
                let frame = self.format.frame(0, &msg.outbound());
                self.write(frame).await
            }
        }
    }

    /// Handles one data frame.
    async fn handle(&mut self, frame: Message) -> Result<(), Close> {
        let decoded = self.format.decode(&frame).unwrap_or_else(|| {
            Err(match self.format {
                Format::Json => "this socket (svc.v1.json) takes text frames".to_owned(),
                Format::MsgPack => "this socket (svc.v1.msgpack) takes binary frames".to_owned(),
            })
        });
        let msg = match decoded {
            Ok(msg) => {
                self.malformed = 0;
                msg
            }
            Err(reason) => {
                self.malformed += 1;
                if self.malformed >= MAX_MALFORMED {
                    return Err(Some((code::INVALID_DATA, "malformed_messages")));
                }
                return self
                    .reply(ServerMessage::error("bad_message", reason))
                    .await;
            }
        };
        match msg {
            ClientMessage::Hello {
                session_id,
                player_id,
                attributes,
                resume_from,
            } => {
                self.hello(session_id, player_id, attributes, resume_from)
                    .await
            }
            ClientMessage::Ack { seq } => {
                if let Some(live) = &self.live {
                    live.session.ack(seq);
                }
                Ok(())
            }
            ClientMessage::Event { event } => self.event(event).await,
            ClientMessage::OfferRequest { trigger_context } => {
                let event_type = trigger_context.event_type;
                if !offer_domain::validation::is_snake_case(&event_type, 64) {
                    return self
                        .reply(ServerMessage::error(
                            "validation_failed",
                            "trigger_context.event_type must be a snake_case event name",
                        ))
                        .await;
                }
                if self.live.is_none() {
                    return self.reply(no_session()).await;
                }
                self.offer(&event_type);
                Ok(())
            }
        }
    }

    async fn hello(
        &mut self,
        session_id: uuid::Uuid,
        player_id: String,
        attributes: serde_json::Map<String, serde_json::Value>,
        resume_from: Option<u64>,
    ) -> Result<(), Close> {
        if self.live.is_some() {
            return self
                .reply(ServerMessage::error(
                    "bad_message",
                    "hello was already sent on this socket",
                ))
                .await;
        }
        let body = OpenSession {
            session_id,
            player_id,
            attributes,
        };
        let (session, _created, game) = match open_session(&self.state, &self.caller, body).await {
            Ok(opened) => opened,
            Err(e) => return self.reply(api_error(&e)).await,
        };
        super::note_config(&self.state, &game.view());
        let ready_game = game.clone();
        let attached = session.attach(
            self.state.settings.websocket.outbound_queue,
            resume_from,
            move |resumed| {
                let view = ready_game.view();
                ServerMessage::Ready {
                    kill_switch: view.kill_switch.clone(),
                    mode: view.game.mode,
                    config_version: view.version,
                    resumed,
                }
                .outbound()
            },
        );
        self.live = Some(Live {
            session,
            game,
            queue: attached.queue,
        });
        for missed in attached.replay {
            let frame = self.format.frame(missed.seq, &missed.msg);
            self.write(frame).await?;
        }
        Ok(())
    }

    async fn event(&mut self, event: events::SdkEvent) -> Result<(), Close> {
        let Some(live) = &self.live else {
            return self.reply(no_session()).await;
        };
        let (session, game) = (live.session.clone(), live.game.clone());
        let view = game.view();
        if let Err(reason) = events::validate(&view.game, &event) {
            return self
                .reply(ServerMessage::error("validation_failed", reason))
                .await;
        }
        if view.kill_switch.level >= KILL_SDK_OFF {
            return self.reply(api_error(&ApiError::SdkDisabled)).await;
        }
        drop(view);
        let answer =
            match events::apply(&self.state, &game, &session, self.caller.env, &event).await {
                Ok(events::Applied::Accepted(Some((currency_id, balance)))) => {
                    Some(ServerMessage::Balance {
                        currency_id,
                        balance,
                    })
                }
                Ok(events::Applied::Accepted(None)) => None,
                Ok(events::Applied::Rejected(code, message)) => {
                    Some(ServerMessage::error(code, message))
                }
                Err(e) => Some(api_error(&e)),
            };
        if let Some(answer) = answer {
            session.push(answer.outbound());
        }
        if event.is_trigger() {
            self.offer(event.kind());
        }
        Ok(())
    }

    /// Runs the offer pipeline and pushes `offer` or `no_offer`.
    fn offer(&self, event_type: &str) {
        let Some(live) = &self.live else {
            return;
        };
        live.session.touch();
        let msg = match serve(&self.state, &live.game, &live.session, event_type) {
            Served::Offer(offer) => ServerMessage::Offer(offer),
            Served::NoOffer(reason, _) => ServerMessage::NoOffer {
                outcome: reason.as_str(),
            },
        };
        live.session.push(msg.outbound());
    }
}

fn no_session() -> ServerMessage {
    ServerMessage::error("bad_message", "send hello first")
}

/// An `error` message with the REST error's stable code.
fn api_error(e: &ApiError) -> ServerMessage {
    let (_, code) = e.status_code();
    ServerMessage::error(code, e.to_string())
}
