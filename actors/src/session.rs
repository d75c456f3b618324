//! The per-session actor and its handle.
//!
//! A session actor owns one open player session: its live features (attributes, events
//! seen, spend) and, when a WebSocket is attached, its bounded outbound queue. Readers on
//! the offer path load the published [`PlayerContext`] without a message; the per-session
//! offer counters that frequency caps check are atomics, reserved with a compare-exchange,
//! so concurrent requests of one session can never exceed a cap.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
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

/// A message for the session's socket. The gateway encodes it once per socket.
pub type Outbound = Arc<serde_json::Value>;

/// Whether a message could be queued for the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushResult {
    /// Queued.
    Queued,
    /// No socket attached.
    NoSocket,
    /// The queue is full: the client stopped reading.
    Full,
}

/// Milliseconds since `epoch`, for lock-free "last seen" stamps.
fn millis_since(epoch: Instant) -> i64 {
    i64::try_from(epoch.elapsed().as_millis()).unwrap_or(i64::MAX)
}

/// When a session was last used, written by readers without a message to the actor.
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
    outbound: Option<tokio::sync::mpsc::Sender<Outbound>>,
    activity: Arc<Activity>,
    idle_ttl: Duration,
    on_stop: Option<Box<dyn FnOnce() + Send>>,
}

impl Actor for SessionActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        let check = (self.idle_ttl / 4).max(Duration::from_millis(250));
        ctx.run_interval(check, |actor, ctx| {
            let socket_open = actor.outbound.as_ref().is_some_and(|tx| !tx.is_closed());
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
    /// A telemetry event was seen (any type but `session_start`).
    EventSeen,
    /// Real money was spent.
    Spent(i64),
    /// Attributes were (re)sent, e.g. by a WebSocket `hello`.
    Attributes(Box<PlayerContext>),
}

/// Attaches (or detaches, with `None`) the socket's outbound queue.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Attach(pub Option<tokio::sync::mpsc::Sender<Outbound>>);

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

impl Handler<Attach> for SessionActor {
    type Result = ();
    fn handle(&mut self, msg: Attach, _: &mut Context<Self>) {
        self.activity.touch();
        self.outbound = msg.0;
    }
}

/// The handle the rest of the service uses. One `Arc`, so cloning it on the hot path is a
/// single reference-count increment.
#[derive(Clone)]
pub struct SessionHandle(Arc<SessionShared>);

/// What a [`SessionHandle`] shares with the actor and other handles.
struct SessionShared {
    addr: Addr<SessionActor>,
    info: Arc<SessionInfo>,
    player: Arc<ArcSwap<PlayerContext>>,
    counters: Arc<OfferCounters>,
    outbound: Arc<ArcSwap<Option<tokio::sync::mpsc::Sender<Outbound>>>>,
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
        let activity = Arc::new(Activity {
            epoch: Instant::now(),
            last_ms: AtomicI64::new(0),
        });
        let actor_activity = activity.clone();
        let addr = SessionActor::start_in_arbiter(arbiter, move |_| SessionActor {
            player: actor_player,
            outbound: None,
            activity: actor_activity,
            idle_ttl,
            on_stop: Some(on_stop),
        });
        Self(Arc::new(SessionShared {
            addr,
            info: Arc::new(info),
            player,
            counters: Arc::default(),
            outbound: Arc::new(ArcSwap::from_pointee(None)),
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
    pub fn player(&self) -> PlayerContext {
        let mut p = PlayerContext::clone(&self.0.player.load());
        p.offers_shown = self.0.counters.shown();
        p.last_offer_at = self.0.counters.last();
        p
    }

    /// The frequency-cap counters.
    pub fn counters(&self) -> &OfferCounters {
        &self.0.counters
    }

    /// Applies a feature change without waiting.
    pub fn change(&self, change: SessionChange) {
        self.0.addr.do_send(change);
    }

    /// Attaches a socket's outbound queue (the previous socket, if any, is dropped from
    /// this session: a resume replaces it).
    pub fn attach(&self, tx: Option<tokio::sync::mpsc::Sender<Outbound>>) {
        self.0.outbound.store(Arc::new(tx.clone()));
        self.0.addr.do_send(Attach(tx));
    }

    /// Queues a message for the attached socket without blocking.
    pub fn push(&self, msg: Outbound) -> PushResult {
        match self.0.outbound.load().as_ref() {
            None => PushResult::NoSocket,
            Some(tx) => match tx.try_send(msg) {
                Ok(()) => PushResult::Queued,
                Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => PushResult::Full,
                Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => PushResult::NoSocket,
            },
        }
    }
}
