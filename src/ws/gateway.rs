//! One task per socket: it reads client messages, writes the session's queued messages, sends
//! heartbeats and closes the socket with the right code.
//!
//! The task selects over the node's shutdown signal, its key's revocation, the session's
//! outbound queue, the socket (through a [`ReadGate`]: read only once it woke), the ping
//! timer and (until `hello`) the hello deadline. Every
//! server message after `hello` goes through the session's bounded queue (so it gets its
//! `seq` and a place in the replay ring), including the answers to this client's own
//! requests; before `hello` the few answers there are (errors, `seq` 0) are written directly,
//! each one spending the socket's [`Budget`], so a client that never says `hello` can make
//! the server write at most a handful of them.
//!
//! No write waits on the client for ever: a write blocked because the client stopped reading
//! races the session's cut signal (the queue filled: 4008) and the idle timeout (4008 as
//! well), so a client that neither reads nor lets the queue fill is still let go.

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures::SinkExt;
use offer_actors::{Delivery, Detached, GameHandle, ResumePoint, SessionHandle, SocketQueue};
use tokio::time::Instant;

use super::WsContext;
use super::budget::Budget;
use super::heartbeat::Heartbeat;
use super::protocol::{Format, ToOutbound as _};
use super::read_gate::ReadGate;
use crate::error::ApiError;
use crate::service::ServiceError;
use crate::service::play::decision_log::Served;
use crate::service::play::events;
use crate::service::play::inventory;
use crate::service::play::offers::serve;
use crate::service::play::sessions::{OpenSession, Opened, open_session};
use crate::service::studio::callers::SdkCaller;
use offer_wire::socket::InventoryItem;
use offer_wire::socket::{ClientMessage, ServerMessage};

/// Close codes the gateway uses.
mod code {
    /// The node shuts down, or the client went silent.
    pub const GOING_AWAY: u16 = 1001;
    /// A broken frame (protocol error).
    pub const PROTOCOL: u16 = 1002;
    /// A refused message beyond the socket's budget (see `ws::budget`).
    pub const INVALID_DATA: u16 = 1007;
    /// A frame over the configured maximum (64 KiB).
    pub const TOO_BIG: u16 = 1009;
    /// The socket's SDK key was revoked.
    pub const KEY_REVOKED: u16 = 4001;
    /// No `hello` within `websocket.hello_timeout_s` of the upgrade.
    pub const HELLO_TIMEOUT: u16 = 4002;
    /// The client did not read: its queue filled, or a write waited past the idle timeout.
    pub const SLOW_CONSUMER: u16 = 4008;
    /// Another socket resumed this session.
    pub const REPLACED: u16 = 4009;
    /// The session's player was erased (on any node): the session is gone for good.
    pub const PLAYER_ERASED: u16 = 4010;
}

/// Messages written before one flush.
const WRITE_BATCH: usize = 32;
/// How long a closing socket may take to flush and hand-shake.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Why the loop ends: a close frame to send, or nothing (the client is gone).
type Close = Option<(u16, &'static str)>;

/// The close of a client that does not take what is written to it.
const STALLED: Close = Some((code::SLOW_CONSUMER, "slow_consumer"));

/// The session a `hello` opened on this socket.
struct Live {
    session: SessionHandle,
    game: GameHandle,
    queue: SocketQueue,
}

/// One connection's state.
struct Conn {
    state: WsContext,
    caller: SdkCaller,
    format: Format,
    socket: WebSocket,
    live: Option<Live>,
    /// Refused messages this socket may still send.
    budget: Budget,
    /// How long one write may wait on the client.
    stall: Duration,
}

/// What woke the task.
enum Step {
    Shutdown,
    Revoked,
    Deliver(Delivery),
    Incoming(Option<Result<Message, axum::Error>>),
    Tick,
    HelloTimeout,
}

/// Serves one upgraded socket until it closes.
pub async fn run(state: WsContext, caller: SdkCaller, format: Format, socket: WebSocket) {
    let cfg = state.services.settings.websocket.clone();
    // Counted until this task ends: the node's shutdown waits for every socket's close.
    let _open = state.hub.open_socket();
    let hub = state.hub.clone();
    let revocation = state.auth.watch_revocation(&caller.key.key_hash);
    let now = Instant::now();
    let ping_every = Duration::from_secs(cfg.ping_interval_s.max(1));
    let idle = Duration::from_secs(cfg.idle_timeout_s.max(1));
    let mut heartbeat = Heartbeat::new(now + ping_every, ping_every);
    // The loop's only reader of the socket until it ends (`finish` reads on its own).
    let read_gate = ReadGate::default();
    let mut last_heard = now;
    // Made once, not per turn of the loop: after its first poll each reads a flag only.
    let shutdown = hub.closing.wait();
    tokio::pin!(shutdown);
    let revoked = revocation.revoked();
    tokio::pin!(revoked);
    let hello_deadline =
        tokio::time::sleep_until(now + Duration::from_secs(cfg.hello_timeout_s.max(1)));
    tokio::pin!(hello_deadline);
    let mut conn = Conn {
        state,
        caller,
        format,
        socket,
        live: None,
        budget: Budget::new(now),
        stall: idle,
    };
    let close: Close = loop {
        let step = tokio::select! {
            biased;
            () = &mut shutdown => Step::Shutdown,
            () = &mut revoked => Step::Revoked,
            d = next_delivery(&mut conn.live) => Step::Deliver(d),
            m = read_gate.next(&mut conn.socket) => Step::Incoming(m),
            () = heartbeat.due() => Step::Tick,
            () = &mut hello_deadline, if conn.live.is_none() => Step::HelloTimeout,
        };
        match step {
            Step::Shutdown => {
                Box::pin(conn.flush_queued()).await;
                break Some((code::GOING_AWAY, "shutting_down"));
            }
            Step::Revoked => break Some((code::KEY_REVOKED, "key_revoked")),
            Step::HelloTimeout => break Some((code::HELLO_TIMEOUT, "hello_timeout")),
            Step::Deliver(Delivery::Message(first)) => {
                if let Err(close) = conn.write_batch(first).await {
                    break close;
                }
            }
            Step::Deliver(Delivery::Cut(why)) => break Some(cut_close(why)),
            Step::Incoming(None) => break None,
            Step::Incoming(Some(Err(e))) => break Some(read_error_close(&e)),
            Step::Incoming(Some(Ok(msg))) => {
                last_heard = Instant::now();
                match msg {
                    Message::Close(_) => break None,
                    Message::Ping(_) | Message::Pong(_) => {}
                    // Boxed, like the close below: what handling a client message awaits
                    // (the decoded message, an answer, its write) would otherwise be part of
                    // the task of every open socket, idle or not, for as long as it is open.
                    frame => {
                        if let Err(close) = Box::pin(conn.handle(frame)).await {
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
    Box::pin(conn.finish(close)).await;
}

async fn next_delivery(live: &mut Option<Live>) -> Delivery {
    match live {
        Some(live) => live.queue.recv().await,
        None => std::future::pending().await,
    }
}

/// Resolves when the session lets go of the socket; never before `hello`.
async fn cut_of(live: &mut Option<Live>) -> Detached {
    match live {
        Some(live) => live.queue.cut().await,
        None => std::future::pending().await,
    }
}

fn cut_close(why: Detached) -> (u16, &'static str) {
    match why {
        Detached::SlowConsumer => (code::SLOW_CONSUMER, "slow_consumer"),
        Detached::Replaced => (code::REPLACED, "session_resumed_elsewhere"),
        Detached::Erased => (code::PLAYER_ERASED, "player_erased"),
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
    /// Writes one frame, abandoning it if the session cuts this socket off meanwhile or the
    /// client does not take it within the idle timeout.
    async fn write(&mut self, msg: Message) -> Result<(), Close> {
        let stall = self.stall;
        let socket = &mut self.socket;
        // The send is polled first: a write the socket takes at once sets up no timer.
        tokio::select! {
            biased;
            r = socket.send(msg) => r.map_err(|_| None),
            why = cut_of(&mut self.live) => Err(Some(cut_close(why))),
            // Made on its first poll: a write the socket takes at once reads no clock.
            () = async { tokio::time::sleep(stall).await } => Err(STALLED),
        }
    }

    /// Writes `first` and whatever else is queued (up to a batch), then flushes once.
    ///
    /// The batch leaves the queue before the writes, as it always has (so a client that
    /// stops reading is cut off at the same point), and a lone message, as in a broadcast,
    /// takes no list and no second look at the queue: `rest` allocates only from a second
    /// message on.
    async fn write_batch(&mut self, first: offer_actors::Sequenced) -> Result<(), Close> {
        let Some(live) = &mut self.live else {
            return Ok(());
        };
        let format = self.format;
        let stall = self.stall;
        let socket = &mut self.socket;
        let queue = &mut live.queue;
        let mut rest = Vec::new();
        while queue.more_queued() && rest.len() + 1 < WRITE_BATCH {
            match queue.try_recv() {
                Some(m) => rest.push(m),
                None => break,
            }
        }
        let send_all = async {
            for m in std::iter::once(first).chain(rest) {
                socket.feed(format.frame(m.seq, &m.msg)).await?;
            }
            socket.flush().await
        };
        tokio::select! {
            biased;
            r = send_all => r.map_err(|_| None),
            why = queue.cut() => Err(Some(cut_close(why))),
            // Made on its first poll: a batch the socket takes at once reads no clock.
            () = async { tokio::time::sleep(stall).await } => Err(STALLED),
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

    /// Answers a refused message with `msg`, spending the budget; closes with 1007 when the
    /// budget is spent.
    async fn refuse(&mut self, msg: ServerMessage) -> Result<(), Close> {
        if !self.budget.spend(Instant::now()) {
            return Err(Some((code::INVALID_DATA, "malformed_messages")));
        }
        self.reply(msg).await
    }

    /// Handles one data frame. A malformed or misplaced message is refused against the
    /// budget; so, before `hello`, is every message that gets an error.
    async fn handle(&mut self, frame: Message) -> Result<(), Close> {
        let decoded = self.format.decode(&frame).unwrap_or_else(|| {
            Err(format!(
                "this socket ({}) takes {} frames",
                self.format.protocol(),
                match self.format {
                    Format::Json => "text",
                    Format::MsgPack => "binary",
                }
            ))
        });
        let msg = match decoded {
            Ok(msg) => msg,
            Err(reason) => {
                return self
                    .refuse(ServerMessage::error("bad_message", reason))
                    .await;
            }
        };
        match msg {
            ClientMessage::Hello {
                session_id,
                player_id,
                attributes,
                resume_from,
                epoch,
                player_token,
            } => {
                let resume = resume_from
                    .zip(epoch.as_deref())
                    .map(|(seq, epoch)| ResumePoint { epoch, seq });
                let body = OpenSession {
                    session_id,
                    player_id,
                    attributes,
                    player_token,
                };
                // Boxed, like `event` below, so that the box of a small message (an `ack`)
                // stays small: opening a session awaits the store and the game's loading.
                Box::pin(self.hello(body, resume)).await
            }
            ClientMessage::Ack { seq } => {
                if let Some(live) = &self.live {
                    live.session.ack(seq);
                }
                Ok(())
            }
            ClientMessage::Event { .. } | ClientMessage::OfferRequest { .. }
                if self.live.is_none() =>
            {
                self.refuse(ServerMessage::error("bad_message", "send hello first"))
                    .await
            }
            ClientMessage::Event { event } => Box::pin(self.event(event)).await,
            ClientMessage::OfferRequest { trigger_context } => {
                if !trigger_context.is_valid() {
                    return self
                        .reply(ServerMessage::error(
                            "validation_failed",
                            "trigger_context.event_type must be a snake_case event name",
                        ))
                        .await;
                }
                self.offer(&trigger_context.event_type);
                Ok(())
            }
        }
    }

    async fn hello(
        &mut self,
        body: OpenSession,
        resume: Option<ResumePoint<'_>>,
    ) -> Result<(), Close> {
        if self.live.is_some() {
            return self
                .refuse(ServerMessage::error(
                    "bad_message",
                    "hello was already sent on this socket",
                ))
                .await;
        }
        let key_id = self.caller.key.key_id;
        let opened = open_session(
            &self.state.services,
            self.caller.key.game_id,
            self.caller.env,
            body,
            || self.state.new_players.admit(key_id),
        )
        .await;
        let Opened { session, game, .. } = match opened {
            Ok(opened) => opened,
            // Before `hello` every error answer spends the budget.
            Err(e) => return self.refuse(api_error(&e.into())).await,
        };
        super::hub::note_config(&self.state, &game.view());
        let info = session.info();
        let held = match inventory::read(
            self.state.services.store.as_ref(),
            info.game_id,
            self.caller.env,
            &info.player_id,
        )
        .await
        {
            Ok(held) => held,
            Err(e) => return self.refuse(api_error(&e.into())).await,
        };
        let ready_game = game.clone();
        let epoch = session.epoch().to_owned();
        let attached = session.attach(
            self.state.services.settings.websocket.outbound_queue,
            resume,
            move |resumed| {
                let view = ready_game.view();
                ServerMessage::Ready {
                    kill_switch: view.kill_switch.clone(),
                    mode: view.game.mode,
                    config_version: view.version,
                    resumed,
                    epoch: Some(epoch),
                    inventory: InventoryItem::list(held.clone()),
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

    /// Receives one event through the events entry point and pushes its answers (the
    /// balance or inventory it left, or why it was refused); a trigger event then asks for
    /// an offer, unless the event was refused before being applied.
    async fn event(&mut self, event: offer_wire::event::SdkEvent) -> Result<(), Close> {
        let Some(live) = &self.live else {
            return Ok(());
        };
        let (session, game) = (live.session.clone(), live.game.clone());
        let received = events::receive(
            &self.state.services,
            &game,
            self.caller.env,
            events::Sender::Socket(&session),
            std::slice::from_ref(&event),
        )
        .await;
        let (answers, checked): (Vec<ServerMessage>, bool) = match received {
            Ok(applied) => (applied.into_iter().flat_map(answers_of).collect(), true),
            // The socket words an invalid event by its reasons alone.
            Err(ServiceError::Validation(errors)) => {
                let reasons: Vec<&str> = errors.iter().map(|f| f.reason.as_str()).collect();
                let refusal = ServerMessage::error("validation_failed", reasons.join("; "));
                (vec![refusal], false)
            }
            Err(e @ ServiceError::SdkDisabled) => (vec![api_error(&e.into())], false),
            // Failed while applied: the event passed its checks.
            Err(e) => (vec![api_error(&e.into())], true),
        };
        for answer in answers {
            session.push(answer.outbound());
        }
        if checked && event.is_trigger() {
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
        let msg = match serve(&self.state.services, &live.game, &live.session, event_type) {
            Served::Offer(offer) => ServerMessage::Offer(offer),
            Served::NoOffer(reason, _) => ServerMessage::NoOffer {
                outcome: reason.as_str().into(),
            },
        };
        live.session.push(msg.outbound());
    }
}

/// What a socket is answered for one applied event: its new balance and inventory, or its
/// refusal.
fn answers_of(applied: events::Applied) -> Vec<ServerMessage> {
    match applied {
        events::Applied::Accepted { balance, inventory } => {
            let balance = balance.map(
                |events::Balance {
                     currency_id,
                     balance,
                 }| ServerMessage::Balance {
                    currency_id,
                    balance,
                },
            );
            let inventory = inventory.map(|held| ServerMessage::Inventory {
                items: InventoryItem::list(held),
            });
            balance.into_iter().chain(inventory).collect()
        }
        events::Applied::Rejected(refusal) => {
            vec![ServerMessage::error(refusal.code(), refusal.message())]
        }
    }
}

/// An `error` message with the REST error's stable code; a validation failure names every
/// field and reason in its message (the socket has no `details`).
fn api_error(e: &ApiError) -> ServerMessage {
    let (_, code) = e.status_code();
    let message = match e {
        ApiError::Service(ServiceError::Validation(errors)) if !errors.is_empty() => {
            let reasons: Vec<String> = errors
                .iter()
                .map(|f| format!("{}: {}", f.field, f.reason))
                .collect();
            format!("{e}: {}", reasons.join("; "))
        }
        _ => e.to_string(),
    };
    ServerMessage::error(code, message)
}
