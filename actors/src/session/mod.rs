//! The per-session actor and its handle.
//!
//! A session actor owns one open player session: its live features (attributes, events
//! seen, spend) and, when a WebSocket is attached, its bounded outbound queue. Readers on
//! the offer path load the published [`PlayerContext`] without a message; the per-session
//! offer counters that frequency caps check are atomics ([`OfferCounters`]).
//!
//! The files: `counters` (frequency-cap counters), `message` (shared, numbered socket
//! messages), `replay` (the ring a resume is answered from), `queue` (the bounded queue to
//! the socket), `outlet` (the ring and the queue under one lock), `activity` (idle time).
//!
//! Each session actor draws a random epoch when it starts. Its `seq`s only mean something
//! with that epoch: a session read back from the store (on a restarted node, another node,
//! or after it idled out) numbers its messages from 1 again, so a client's `resume_from` is
//! honoured only when it comes with the epoch of the actor that numbered it
//! ([`ResumePoint`]); otherwise a new history whose seqs happen to cover the old one would
//! pass for the client's.

mod activity;
mod counters;
mod message;
mod outlet;
mod queue;
mod replay;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use actix::{Actor, ActorContext, Addr, AsyncContext, Context, Handler, Message};
use arc_swap::ArcSwap;
use offer_domain::environment::Environment;
use offer_domain::pipeline::PlayerContext;
use uuid::Uuid;

use activity::Activity;
pub use counters::OfferCounters;
pub use message::{Outbound, OutboundMessage, Sequenced};
pub use outlet::Attached;
use outlet::{Outlet, lock};
pub use queue::{Delivery, Detached, PushResult, SocketQueue};
pub use replay::REPLAY_CAPACITY;

/// Who a session is: fixed for its lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Client-chosen session id.
    pub session_id: Uuid,
    /// The game.
    pub game_id: Uuid,
    /// Production or sandbox: sandbox sessions are kept apart from production.
    pub env: Environment,
    /// The studio's player id.
    pub player_id: String,
}

/// Where a reconnecting client says it stopped: the last `seq` it read and the epoch of the
/// session that numbered it (from that session's `ready`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePoint<'a> {
    /// The epoch the client was told in `ready`.
    pub epoch: &'a str,
    /// The last `seq` it read.
    pub seq: u64,
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
            let socket_open = lock(&actor.outlet).socket_attached();
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
    /// Random per actor: tells this session's seqs from those of an earlier actor of the
    /// same session id (see the module's documentation).
    epoch: Box<str>,
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
        let activity = Arc::new(Activity::new());
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
            epoch: new_epoch(),
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

    /// This session's epoch: sent to the client in `ready`, which names it in a resume.
    pub fn epoch(&self) -> &str {
        &self.0.epoch
    }

    /// Attaches a new socket with a queue of `capacity` messages, replacing (and cutting
    /// off) any socket attached before. When `resume` has this session's epoch and its seq
    /// is still in the replay ring, the missed messages are returned for the socket to write
    /// first; a resume point of another epoch is not honoured, whatever its seq. `ready`
    /// builds the first queued message (it learns whether the resume worked); it is
    /// sequenced under the same lock, so no other message can overtake it, and never kept
    /// for a later resume (each connection gets its own `ready`, never an earlier
    /// connection's).
    pub fn attach(
        &self,
        capacity: usize,
        resume: Option<ResumePoint<'_>>,
        ready: impl FnOnce(bool) -> Outbound,
    ) -> Attached {
        let resume_from = resume
            .filter(|point| point.epoch == self.epoch())
            .map(|point| point.seq);
        let attached = lock(&self.0.outlet).attach(capacity, resume_from, ready);
        self.touch();
        attached
    }

    /// Detaches `queue`'s socket when it closes; a socket that replaced it stays attached.
    pub fn detach(&self, queue: &SocketQueue) {
        lock(&self.0.outlet).detach(queue);
        self.touch();
    }

    /// Whether a socket is attached (a slow consumer's was cut off).
    pub fn socket_attached(&self) -> bool {
        lock(&self.0.outlet).socket_attached()
    }

    /// The seq of the session's newest message (0 before the first): where a client that
    /// has read everything would resume from.
    pub fn last_seq(&self) -> u64 {
        lock(&self.0.outlet).last_seq()
    }

    /// Forgets replayable messages up to `seq`, which the client has acknowledged.
    pub fn ack(&self, seq: u64) {
        lock(&self.0.outlet).ack(seq);
    }

    /// Gives the message the session's next seq, keeps it for a resume and queues it for
    /// the attached socket without blocking. A full queue cuts the socket off (4008): its
    /// queue is dropped, so a client that stops reading never grows the server's memory.
    pub fn push(&self, msg: Outbound) -> PushResult {
        lock(&self.0.outlet).push(msg)
    }
}

/// A new random epoch: 16 hex digits (64 random bits), a string so that every client reads
/// it whole (a JSON number that large loses digits in some languages).
fn new_epoch() -> Box<str> {
    format!("{:016x}", rand::random::<u64>()).into_boxed_str()
}
