//! A session and its handle.
//!
//! A session holds one open player session: its live features (attributes, events seen,
//! spend) and, when a WebSocket is attached, its bounded outbound queue. Readers on the
//! offer path load the published [`PlayerContext`] without a lock; the per-session offer
//! counters that frequency caps check are atomics ([`OfferCounters`]).
//!
//! A session has no actor of its own: every change to it is a few atomic or short locked
//! steps that the handle makes where it is called (a feature change replaces the published
//! context with a compare-and-swap), and the registry's sweeper forgets a session without a
//! socket once it has been idle for its time (`SessionHandle::expired`). An actor per
//! session cost about 870 bytes of every open session (its task, mailbox and idle timer) for
//! two rare messages and a timer.
//!
//! The files: `counters` (frequency-cap counters), `message` (shared, numbered socket
//! messages), `replay` (the ring a resume is answered from), `queue` (the bounded queue to
//! the socket), `outlet` (the ring and the queue under one lock), `activity` (idle time).
//!
//! Each session draws a random epoch when it starts. Its `seq`s only mean something with
//! that epoch: a session read back from the store (on a restarted node, another node, or
//! after it idled out) numbers its messages from 1 again, so a client's `resume_from` is
//! honoured only when it comes with the epoch of the session that numbered it
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

use arc_swap::ArcSwap;
use offer_domain::environment::Environment;
use offer_domain::pipeline::PlayerContext;
use uuid::Uuid;

use activity::Activity;
pub use counters::OfferCounters;
pub use message::{Body, Outbound, OutboundMessage, Sequenced};
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

/// A change to the session's features.
#[derive(Debug, Clone, Copy)]
pub enum SessionChange {
    /// The session's first telemetry event (any type but `session_start`): the player now
    /// has features. Later events are only counted ([`SessionHandle::event_seen`]).
    EventSeen,
    /// Real money was spent.
    Spent(i64),
}

impl SessionChange {
    fn apply(self, player: &mut PlayerContext) {
        match self {
            Self::EventSeen => player.events_seen = player.events_seen.saturating_add(1),
            Self::Spent(cents) => player.spend_cents = player.spend_cents.saturating_add(cents),
        }
    }
}

/// The handle the rest of the service uses. One `Arc`, so cloning it on the hot path is a
/// single reference-count increment.
#[derive(Clone)]
pub struct SessionHandle(Arc<SessionShared>);

/// What every [`SessionHandle`] of one session shares: one allocation per session.
struct SessionShared {
    info: SessionInfo,
    player: ArcSwap<PlayerContext>,
    counters: OfferCounters,
    /// Telemetry events seen this session (the published context only learns of the first).
    events: AtomicU32,
    outlet: Mutex<Outlet>,
    activity: Activity,
    /// Random per session start: tells this session's seqs from those of an earlier start of
    /// the same session id (see the module's documentation).
    epoch: Box<str>,
}

impl SessionHandle {
    /// A session just opened (or read back from the store).
    pub(crate) fn new(info: SessionInfo, player: PlayerContext) -> Self {
        Self(Arc::new(SessionShared {
            info,
            player: ArcSwap::from_pointee(player),
            counters: OfferCounters::default(),
            events: AtomicU32::new(0),
            outlet: Mutex::new(Outlet::default()),
            activity: Activity::new(),
            epoch: new_epoch(),
        }))
    }

    /// Whether the session may be forgotten: no socket attached, and unused for longer than
    /// `idle_ttl`.
    pub(crate) fn expired(&self, idle_ttl: Duration) -> bool {
        !self.socket_attached() && self.0.activity.idle_for() > idle_ttl
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

    /// Counts a telemetry event; only the first one of the session changes the published
    /// context.
    pub fn event_seen(&self) {
        if self.0.events.fetch_add(1, Ordering::Relaxed) == 0 {
            self.change(SessionChange::EventSeen);
        } else {
            self.touch();
        }
    }

    /// The frequency-cap counters.
    pub fn counters(&self) -> &OfferCounters {
        &self.0.counters
    }

    /// Applies a feature change: publishes a new context (readers keep the one they
    /// loaded). Concurrent changes are retried on the newer context, so none is lost.
    pub fn change(&self, change: SessionChange) {
        self.touch();
        self.0.player.rcu(|published| {
            let mut next = PlayerContext::clone(published);
            change.apply(&mut next);
            next
        });
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

    /// Lets go of the attached socket, telling it that the session's player was erased
    /// (the registry forgets the session at the same time).
    pub(crate) fn close_erased(&self) {
        lock(&self.0.outlet).close_erased();
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

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> SessionHandle {
        let game_id = Uuid::new_v4();
        SessionHandle::new(
            SessionInfo {
                session_id: Uuid::new_v4(),
                game_id,
                env: Environment::Production,
                player_id: "p1".into(),
            },
            PlayerContext::new("p1", game_id),
        )
    }

    #[test]
    fn changes_publish_a_new_context_and_keep_the_old_one_whole() {
        let s = session();
        let before = s.player(false);
        s.change(SessionChange::Spent(250));
        s.change(SessionChange::Spent(100));
        assert_eq!(s.player(false).spend_cents, 350);
        assert_eq!(
            before.spend_cents, 0,
            "a reader's loaded context never changes"
        );
    }

    #[test]
    fn only_the_first_event_changes_the_published_context() {
        let s = session();
        for _ in 0..3 {
            s.event_seen();
        }
        assert_eq!(s.player(false).events_seen, 1);
        // With the counters filled in, every event counts.
        assert_eq!(s.player(true).events_seen, 3);
    }

    #[test]
    fn a_session_with_a_socket_never_expires() {
        let s = session();
        let attached = s.attach(4, None, |_| {
            OutboundMessage::new(serde_json::json!({ "type": "ready" }))
        });
        assert!(!s.expired(Duration::ZERO));
        s.detach(&attached.queue);
        assert!(!s.expired(Duration::from_secs(3600)), "just used");
    }
}
