//! The per-session actor and its handle.
//!
//! A session actor owns one open player session: its live features (attributes, events
//! seen, spend) and, when a WebSocket is attached, its bounded outbound queue. Readers on
//! the offer path load the published [`PlayerContext`] without a message; the per-session
//! offer counters that frequency caps check are atomics, reserved with a compare-exchange,
//! so concurrent requests of one session can never exceed a cap.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use arc_swap::ArcSwap;
use chrono::{DateTime, Utc};
use offer_domain::game::Guardrails;
use offer_domain::pipeline::PlayerContext;
use uuid::Uuid;

/// Who a session is: fixed for its lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Client-chosen session id.
    pub session_id: Uuid,
    /// The game.
    pub game_id: Uuid,
    /// `true` for sandbox (test key) sessions, kept apart from production.
    pub sandbox: bool,
    /// The studio's player id.
    pub player_id: String,
}

/// Counters checked by frequency caps, shared lock-free between the actor and readers.
#[derive(Debug, Default)]
pub struct OfferCounters {
    shown: AtomicU32,
    /// Unix milliseconds of the last offer, 0 when none.
    last_ms: AtomicI64,
}

impl OfferCounters {
    /// Offers served this session.
    pub fn shown(&self) -> u32 {
        self.shown.load(Ordering::Acquire)
    }

    /// When the last offer was served.
    pub fn last(&self) -> Option<DateTime<Utc>> {
        match self.last_ms.load(Ordering::Acquire) {
            0 => None,
            ms => DateTime::from_timestamp_millis(ms),
        }
    }

    /// Reserves one offer slot under the guardrails' caps; `false` when a concurrent
    /// request took the last one.
    pub fn reserve(&self, guardrails: &Guardrails, now: DateTime<Utc>) -> bool {
        let max = guardrails.max_offers_per_session.unwrap_or(u32::MAX);
        let reserved = self
            .shown
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .is_ok();
        if !reserved {
            return false;
        }
        let now_ms = now.timestamp_millis();
        if let Some(interval) = guardrails.min_offer_interval_s {
            let min_gap = i64::from(interval) * 1000;
            let prev = self.last_ms.load(Ordering::Acquire);
            if prev != 0 && now_ms - prev < min_gap
                || self
                    .last_ms
                    .compare_exchange(prev, now_ms, Ordering::AcqRel, Ordering::Acquire)
                    .is_err()
            {
                self.shown.fetch_sub(1, Ordering::AcqRel);
                return false;
            }
        } else {
            self.last_ms.store(now_ms, Ordering::Release);
        }
        true
    }
}

/// How many server messages a session keeps for a reconnecting socket's `resume_from`.
pub const REPLAY_CAPACITY: usize = 64;

/// A server message for sockets, encoded at most once per wire format however many sessions
/// receive it (a kill-switch broadcast to 10k sockets encodes once, not 10k times). The body
/// has no `seq`: each socket splices its session's sequence number in front of the shared
/// encoding.
#[derive(Debug)]
pub struct OutboundMessage {
    body: serde_json::Value,
    json: OnceLock<Box<str>>,
    msgpack: OnceLock<Box<[u8]>>,
}

impl OutboundMessage {
    /// Wraps a message body (a flat object with `type`).
    pub fn new(body: serde_json::Value) -> Outbound {
        Arc::new(Self {
            body,
            json: OnceLock::new(),
            msgpack: OnceLock::new(),
        })
    }

    /// The message as a value (tests, logs).
    pub fn body(&self) -> &serde_json::Value {
        &self.body
    }

    /// The JSON encoding, made by `encode` on first use and shared afterwards.
    pub fn json(&self, encode: impl FnOnce(&serde_json::Value) -> Box<str>) -> &str {
        self.json.get_or_init(|| encode(&self.body))
    }

    /// The MessagePack encoding, made by `encode` on first use and shared afterwards.
    pub fn msgpack(&self, encode: impl FnOnce(&serde_json::Value) -> Box<[u8]>) -> &[u8] {
        self.msgpack.get_or_init(|| encode(&self.body))
    }
}

/// A message for the session's socket, shared by every recipient.
pub type Outbound = Arc<OutboundMessage>;

/// A message with the sequence number its session gave it.
#[derive(Debug, Clone)]
pub struct Sequenced {
    /// Increases by one per server message of the session, across reconnects.
    pub seq: u64,
    /// The message.
    pub msg: Outbound,
}

/// Whether a message could be queued for the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushResult {
    /// Queued.
    Queued,
    /// No socket attached (the message is kept for a resume).
    NoSocket,
    /// The queue was full: the client stopped reading, so the socket was cut off and its
    /// queue dropped.
    Full,
}

/// Why the session let go of a socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detached {
    /// The socket's queue filled up: the client does not read (close 4008).
    SlowConsumer,
    /// A newer socket resumed this session.
    Replaced,
}

/// The session's end of an attached socket.
struct Link {
    id: u64,
    tx: tokio::sync::mpsc::Sender<Sequenced>,
    cut: tokio::sync::watch::Sender<Option<Detached>>,
}

/// Sequence numbers, the replay ring and the attached socket, under one lock so that the
/// order of the queue is the order of `seq`. Never held across an await.
#[derive(Default)]
struct Outlet {
    next_seq: u64,
    /// Every message with a seq above `floor`, oldest first, at most [`REPLAY_CAPACITY`].
    ring: VecDeque<Sequenced>,
    /// Every seq up to this one has left the ring (evicted or acknowledged).
    floor: u64,
    link: Option<Link>,
    links_made: u64,
}

impl Outlet {
    fn sequence(&mut self, msg: Outbound) -> Sequenced {
        self.next_seq += 1;
        let item = Sequenced {
            seq: self.next_seq,
            msg,
        };
        if self.ring.len() == REPLAY_CAPACITY
            && let Some(old) = self.ring.pop_front()
        {
            self.floor = old.seq;
        }
        self.ring.push_back(item.clone());
        item
    }

    fn cut(&mut self, why: Detached) {
        if let Some(link) = self.link.take() {
            link.cut.send_replace(Some(why));
        }
    }
}

fn lock(outlet: &Mutex<Outlet>) -> MutexGuard<'_, Outlet> {
    // A panic while holding the lock leaves consistent data (every step is a plain
    // assignment), so a poisoned lock is still usable.
    outlet.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a socket task reads from its session.
#[derive(Debug)]
pub enum Delivery {
    /// The next message to write.
    Message(Sequenced),
    /// The session let go of this socket.
    Cut(Detached),
}

/// The socket's end of its session's bounded outbound queue.
pub struct SocketQueue {
    id: u64,
    rx: tokio::sync::mpsc::Receiver<Sequenced>,
    cut: tokio::sync::watch::Receiver<Option<Detached>>,
}

impl SocketQueue {
    /// The next message, or why the session let go (a cut wins over queued messages: a slow
    /// consumer's backlog is dropped, not written).
    pub async fn recv(&mut self) -> Delivery {
        if let Some(why) = *self.cut.borrow() {
            return Delivery::Cut(why);
        }
        tokio::select! {
            biased;
            why = Self::wait_cut(&mut self.cut) => Delivery::Cut(why),
            msg = self.rx.recv() => match msg {
                Some(m) => Delivery::Message(m),
                None => Delivery::Cut(Detached::Replaced),
            },
        }
    }

    /// Resolves when the session lets go of this socket (to abandon a blocked write).
    pub async fn cut(&mut self) -> Detached {
        Self::wait_cut(&mut self.cut).await
    }

    async fn wait_cut(cut: &mut tokio::sync::watch::Receiver<Option<Detached>>) -> Detached {
        match cut.wait_for(Option::is_some).await {
            Ok(why) => why.unwrap_or(Detached::Replaced),
            // The session itself is gone (stopped): treat as replaced.
            Err(_) => Detached::Replaced,
        }
    }

    /// A message already queued, without waiting (flushing on shutdown).
    pub fn try_recv(&mut self) -> Option<Sequenced> {
        if self.cut.borrow().is_some() {
            return None;
        }
        self.rx.try_recv().ok()
    }
}

/// The outcome of attaching a socket.
pub struct Attached {
    /// The socket's queue; its first message is the `ready` built by the caller.
    pub queue: SocketQueue,
    /// Messages the client missed (`resume_from` still in the ring), to write before the
    /// queue; empty when not resumed.
    pub replay: Vec<Sequenced>,
    /// Whether `resume_from` could be honoured.
    pub resumed: bool,
}

/// Milliseconds since `epoch`, for lock-free "last seen" stamps.
fn millis_since(epoch: Instant) -> i64 {
    i64::try_from(epoch.elapsed().as_millis()).unwrap_or(i64::MAX)
}

/// When a session was last used, written by readers without a message to the actor (a
/// message per request would wake the actor's thread on every offer).
#[derive(Debug)]
struct Activity {
    epoch: Instant,
    last_ms: AtomicI64,
}

impl Activity {
    fn touch(&self) {
        self.last_ms
            .store(millis_since(self.epoch), Ordering::Relaxed);
    }

    fn idle_for(&self) -> Duration {
        let idle = millis_since(self.epoch) - self.last_ms.load(Ordering::Relaxed);
        Duration::from_millis(u64::try_from(idle).unwrap_or(0))
    }
}

/// The actor owning one session.
pub struct SessionActor {
    player: Arc<ArcSwap<PlayerContext>>,
    outlet: Arc<Mutex<Outlet>>,
    activity: Arc<Activity>,
    idle_ttl: Duration,
    on_stop: Option<Box<dyn FnOnce() + Send>>,
}

impl Actor for SessionActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let check = (self.idle_ttl / 4).max(Duration::from_millis(250));
        ctx.run_interval(check, |actor, ctx| {
            let socket_open = lock(&actor.outlet).link.is_some();
            if !socket_open && actor.activity.idle_for() > actor.idle_ttl {
                ctx.stop();
            }
        });
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        if let Some(deregister) = self.on_stop.take() {
            deregister();
        }
    }
}

/// A change to the session's features.
#[derive(Debug, Message)]
#[rtype(result = "()")]
pub enum SessionChange {
    /// The session's first telemetry event (any type but `session_start`): the player now
    /// has features. Later events are counted on the handle without a message, since a
    /// message per event would wake the actor's thread on every event.
    EventSeen,
    /// Real money was spent.
    Spent(i64),
    /// Attributes were (re)sent, e.g. by a WebSocket `hello`.
    Attributes(Box<PlayerContext>),
}

impl Handler<SessionChange> for SessionActor {
    type Result = ();
    fn handle(&mut self, msg: SessionChange, _: &mut Context<Self>) {
        self.activity.touch();
        let mut next = PlayerContext::clone(&self.player.load());
        match msg {
            SessionChange::EventSeen => next.events_seen = next.events_seen.saturating_add(1),
            SessionChange::Spent(cents) => {
                next.spend_cents = next.spend_cents.saturating_add(cents)
            }
            SessionChange::Attributes(fresh) => {
                next.country = fresh.country;
                next.platform = fresh.platform;
                next.attributes = fresh.attributes;
            }
        }
        self.player.store(Arc::new(next));
    }
}

/// The handle the rest of the service uses. One `Arc`, so cloning it on the hot path is a
/// single reference-count increment.
#[derive(Clone)]
pub struct SessionHandle(Arc<SessionShared>);

/// What a [`SessionHandle`] shares with the actor and other handles.
struct SessionShared {
    addr: Addr<SessionActor>,
    info: SessionInfo,
    player: Arc<ArcSwap<PlayerContext>>,
    counters: OfferCounters,
    /// Telemetry events seen this session (the published context only learns of the first).
    events: AtomicU32,
    outlet: Arc<Mutex<Outlet>>,
    activity: Arc<Activity>,
}

impl SessionHandle {
    /// Starts the actor on `arbiter`.
    pub(crate) fn start(
        arbiter: &actix_rt::ArbiterHandle,
        info: SessionInfo,
        player: PlayerContext,
        idle_ttl: Duration,
        on_stop: Box<dyn FnOnce() + Send>,
    ) -> Self {
        let player = Arc::new(ArcSwap::from_pointee(player));
        let actor_player = player.clone();
        let outlet = Arc::new(Mutex::new(Outlet::default()));
        let actor_outlet = outlet.clone();
        let activity = Arc::new(Activity {
            epoch: Instant::now(),
            last_ms: AtomicI64::new(0),
        });
        let actor_activity = activity.clone();
        let addr = SessionActor::start_in_arbiter(arbiter, move |_| SessionActor {
            player: actor_player,
            outlet: actor_outlet,
            activity: actor_activity,
            idle_ttl,
            on_stop: Some(on_stop),
        });
        Self(Arc::new(SessionShared {
            addr,
            info,
            player,
            counters: OfferCounters::default(),
            events: AtomicU32::new(0),
            outlet,
            activity,
        }))
    }

    /// Marks the session as used now (keeps it from idling out) without a message.
    pub fn touch(&self) {
        self.0.activity.touch();
    }

    /// Who the session is.
    pub fn info(&self) -> &SessionInfo {
        &self.0.info
    }

    /// The live features, with this session's offer counters filled in.
    ///
    /// The counters only matter to frequency caps, so without caps (`with_counters` false)
    /// the published context is shared as is, with no copy on the hot path.
    pub fn player(&self, with_counters: bool) -> Arc<PlayerContext> {
        let published = self.0.player.load_full();
        if !with_counters {
            return published;
        }
        let mut p = PlayerContext::clone(&published);
        p.offers_shown = self.0.counters.shown();
        p.last_offer_at = self.0.counters.last();
        p.events_seen = self.0.events.load(Ordering::Relaxed);
        Arc::new(p)
    }

    /// Counts a telemetry event; only the first one of the session messages the actor.
    pub fn event_seen(&self) {
        self.touch();
        if self.0.events.fetch_add(1, Ordering::Relaxed) == 0 {
            self.0.addr.do_send(SessionChange::EventSeen);
        }
    }

    /// The frequency-cap counters.
    pub fn counters(&self) -> &OfferCounters {
        &self.0.counters
    }

    /// Applies a feature change without waiting.
    pub fn change(&self, change: SessionChange) {
        self.0.addr.do_send(change);
    }

    /// Attaches a new socket with a queue of `capacity` messages, replacing (and cutting
    /// off) any socket attached before. When `resume_from` is still in the replay ring the
    /// missed messages are returned for the socket to write first. `ready` builds the first
    /// queued message (it learns whether the resume worked); it is sequenced under the same
    /// lock, so no other message can overtake it.
    pub fn attach(
        &self,
        capacity: usize,
        resume_from: Option<u64>,
        ready: impl FnOnce(bool) -> Outbound,
    ) -> Attached {
        let (tx, rx) = tokio::sync::mpsc::channel(capacity.max(1));
        let (cut_tx, cut_rx) = tokio::sync::watch::channel(None);
        let mut outlet = lock(&self.0.outlet);
        outlet.cut(Detached::Replaced);
        let resumable = resume_from.filter(|&k| k >= outlet.floor && k <= outlet.next_seq);
        let replay: Vec<Sequenced> = match resumable {
            Some(k) => outlet.ring.iter().filter(|m| m.seq > k).cloned().collect(),
            None => Vec::new(),
        };
        let first = outlet.sequence(ready(resumable.is_some()));
        // The queue is new and empty, so the first message always fits.
        let _ = tx.try_send(first);
        outlet.links_made += 1;
        let id = outlet.links_made;
        outlet.link = Some(Link {
            id,
            tx,
            cut: cut_tx,
        });
        drop(outlet);
        self.touch();
        Attached {
            queue: SocketQueue {
                id,
                rx,
                cut: cut_rx,
            },
            replay,
            resumed: resumable.is_some(),
        }
    }

    /// Detaches `queue`'s socket when it closes; a socket that replaced it stays attached.
    pub fn detach(&self, queue: &SocketQueue) {
        let mut outlet = lock(&self.0.outlet);
        if outlet.link.as_ref().is_some_and(|l| l.id == queue.id) {
            outlet.link = None;
        }
        drop(outlet);
        self.touch();
    }

    /// Whether a socket is attached (a slow consumer's was cut off).
    pub fn socket_attached(&self) -> bool {
        lock(&self.0.outlet).link.is_some()
    }

    /// The seq of the session's newest message (0 before the first): where a client that
    /// has read everything would resume from.
    pub fn last_seq(&self) -> u64 {
        lock(&self.0.outlet).next_seq
    }

    /// Forgets replayable messages up to `seq`, which the client has acknowledged.
    pub fn ack(&self, seq: u64) {
        let mut outlet = lock(&self.0.outlet);
        while outlet.ring.front().is_some_and(|m| m.seq <= seq) {
            if let Some(m) = outlet.ring.pop_front() {
                outlet.floor = m.seq;
            }
        }
    }

    /// Gives the message the session's next seq, keeps it for a resume and queues it for
    /// the attached socket without blocking. A full queue cuts the socket off (4008): its
    /// queue is dropped, so a client that stops reading never grows the server's memory.
    pub fn push(&self, msg: Outbound) -> PushResult {
        let mut outlet = lock(&self.0.outlet);
        let item = outlet.sequence(msg);
        let Some(link) = &outlet.link else {
            return PushResult::NoSocket;
        };
        match link.tx.try_send(item) {
            Ok(()) => PushResult::Queued,
            Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {
                outlet.cut(Detached::SlowConsumer);
                PushResult::Full
            }
            Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => {
                outlet.link = None;
                PushResult::NoSocket
            }
        }
    }
}
