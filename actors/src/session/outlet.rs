//! A session's outlet: its sequence numbers, its replay ring and its attached socket, under
//! one lock so that the order of the socket's queue is the order of `seq`.
//!
//! The lock is a plain mutex, never held across an await: every operation is a few
//! assignments and a non-blocking send.

use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::mpsc::error::TrySendError;

use super::message::{Outbound, Sequenced};
use super::queue::{Detached, Link, PushResult, SocketQueue, queue};
use super::replay::Replay;

/// The outcome of attaching a socket.
#[derive(Debug)]
pub struct Attached {
    /// The socket's queue; its first message is the `ready` built by the caller.
    pub queue: SocketQueue,
    /// Messages the client missed (`resume_from` still in the ring), to write before the
    /// queue; empty when not resumed.
    pub replay: Vec<Sequenced>,
}

/// Sequence numbers, the replay ring and the attached socket.
#[derive(Debug, Default)]
pub(super) struct Outlet {
    replay: Replay,
    link: Option<Link>,
    /// Sockets attached so far, to number the next one.
    links_made: u64,
}

/// Locks an outlet. A panic while holding the lock leaves consistent data (every step is a
/// plain assignment), so a poisoned lock is still usable.
pub(super) fn lock(outlet: &Mutex<Outlet>) -> MutexGuard<'_, Outlet> {
    outlet.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Outlet {
    /// Attaches a new socket with a queue of `capacity` messages, cutting off the socket
    /// attached before. When `resume_from` is still covered by the replay ring, the missed
    /// messages are returned for the socket to write first. `ready` builds the first queued
    /// message, learning whether the resume worked; it takes the next seq but stays out of
    /// the replay ring, so a later resume never replays it.
    pub(super) fn attach(
        &mut self,
        capacity: usize,
        resume_from: Option<u64>,
        ready: impl FnOnce(bool) -> Outbound,
    ) -> Attached {
        self.cut(Detached::Replaced);
        let missed = resume_from.and_then(|seq| self.replay.since(seq));
        // `ready` is numbered but not kept: each connection gets its own, never an old one.
        let first = self.replay.number(ready(missed.is_some()));
        self.links_made += 1;
        let (link, queue) = queue(self.links_made, capacity);
        // The queue is new and empty, so the first message always fits.
        let _ = link.try_send(first);
        self.link = Some(link);
        Attached {
            queue,
            replay: missed.unwrap_or_default(),
        }
    }

    /// Detaches `queue`'s socket when it closes; a socket that replaced it stays attached.
    pub(super) fn detach(&mut self, queue: &SocketQueue) {
        if self.link.as_ref().is_some_and(|l| l.leads_to(queue)) {
            self.link = None;
        }
    }

    /// Whether a socket is attached.
    pub(super) fn socket_attached(&self) -> bool {
        self.link.is_some()
    }

    /// The seq of the newest message (0 before the first).
    pub(super) fn last_seq(&self) -> u64 {
        self.replay.last_seq()
    }

    /// Forgets replayable messages up to `seq`, which the client has acknowledged.
    pub(super) fn ack(&mut self, seq: u64) {
        self.replay.ack(seq);
    }

    /// Numbers the message, keeps it for a resume and queues it for the attached socket
    /// without blocking. A full queue cuts the socket off.
    pub(super) fn push(&mut self, msg: Outbound) -> PushResult {
        let item = self.replay.sequence(msg);
        let Some(link) = &self.link else {
            return PushResult::NoSocket;
        };
        match link.try_send(item) {
            Ok(()) => PushResult::Queued,
            Err(TrySendError::Full(_)) => {
                self.cut(Detached::SlowConsumer);
                PushResult::Full
            }
            Err(TrySendError::Closed(_)) => {
                self.link = None;
                PushResult::NoSocket
            }
        }
    }

    /// Lets go of the attached socket, if any, telling it that its player was erased.
    pub(super) fn close_erased(&mut self) {
        self.cut(Detached::Erased);
    }

    /// Lets go of the attached socket, if any, telling it why.
    fn cut(&mut self, why: Detached) {
        if let Some(link) = self.link.take() {
            link.cut(why);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Delivery, OutboundMessage, REPLAY_CAPACITY};

    fn msg(kind: &str) -> Outbound {
        OutboundMessage::new(serde_json::json!({ "type": kind }))
    }

    /// Attaches and records whether `ready` was told the resume worked.
    fn attach(outlet: &mut Outlet, capacity: usize, resume_from: Option<u64>) -> (Attached, bool) {
        let mut resumed = None;
        let attached = outlet.attach(capacity, resume_from, |r| {
            resumed = Some(r);
            msg("ready")
        });
        (attached, resumed.expect("ready was built"))
    }

    fn seqs(messages: &[Sequenced]) -> Vec<u64> {
        messages.iter().map(|m| m.seq).collect()
    }

    #[test]
    fn ready_comes_first_and_takes_the_next_seq() {
        let mut outlet = Outlet::default();
        let (mut a, resumed) = attach(&mut outlet, 8, None);
        assert!(!resumed);
        assert!(a.replay.is_empty());
        assert_eq!(a.queue.try_recv().map(|m| m.seq), Some(1));
        assert_eq!(outlet.push(msg("offer")), PushResult::Queued);
        assert_eq!(a.queue.try_recv().map(|m| m.seq), Some(2));
        assert_eq!(outlet.last_seq(), 2);
    }

    #[test]
    fn messages_without_a_socket_are_kept_and_replayed_on_resume() {
        let mut outlet = Outlet::default();
        let (first, _) = attach(&mut outlet, 8, None);
        outlet.detach(&first.queue);
        assert!(!outlet.socket_attached());
        for _ in 0..3 {
            assert_eq!(outlet.push(msg("config")), PushResult::NoSocket);
        }
        // The client read the ready (seq 1) and resumes from it.
        let (mut second, resumed) = attach(&mut outlet, 8, Some(1));
        assert!(resumed);
        assert_eq!(seqs(&second.replay), [2, 3, 4]);
        // The new ready follows the replayed messages.
        assert_eq!(second.queue.try_recv().map(|m| m.seq), Some(5));
    }

    #[test]
    fn an_earlier_connections_ready_is_never_replayed() {
        let mut outlet = Outlet::default();
        for _ in 0..2 {
            let (a, _) = attach(&mut outlet, 8, None);
            outlet.push(msg("offer"));
            outlet.detach(&a.queue);
        }
        // Readies took seqs 1 and 3, offers 2 and 4: a resume from the very start replays
        // the offers only, then the new connection's own ready.
        let (mut a, resumed) = attach(&mut outlet, 8, Some(0));
        assert!(resumed);
        assert_eq!(seqs(&a.replay), [2, 4]);
        assert_eq!(a.queue.try_recv().map(|m| m.seq), Some(5));
        assert!(a.queue.try_recv().is_none());
    }

    #[test]
    fn a_resume_older_than_the_ring_replays_nothing() {
        let mut outlet = Outlet::default();
        for _ in 0..REPLAY_CAPACITY + 5 {
            outlet.push(msg("config"));
        }
        let (a, resumed) = attach(&mut outlet, 8, Some(2));
        assert!(!resumed, "seqs 3 to 5 were evicted: the resume is cut off");
        assert!(a.replay.is_empty());
        // A resume still inside the ring works.
        let (a, resumed) = attach(&mut outlet, 8, Some(10));
        assert!(resumed);
        assert_eq!(a.replay.first().map(|m| m.seq), Some(11));
    }

    #[test]
    fn acknowledged_messages_are_not_replayed() {
        let mut outlet = Outlet::default();
        for _ in 0..5 {
            outlet.push(msg("config"));
        }
        outlet.ack(3);
        let (a, resumed) = attach(&mut outlet, 8, Some(3));
        assert!(resumed);
        assert_eq!(seqs(&a.replay), [4, 5]);
        let (_, resumed) = attach(&mut outlet, 8, Some(2));
        assert!(!resumed);
    }

    #[test]
    fn a_full_queue_cuts_the_slow_consumer_off() {
        let mut outlet = Outlet::default();
        // The ready takes one of the four places.
        let (mut a, _) = attach(&mut outlet, 4, None);
        for _ in 0..3 {
            assert_eq!(outlet.push(msg("offer")), PushResult::Queued);
        }
        assert_eq!(outlet.push(msg("offer")), PushResult::Full);
        assert!(!outlet.socket_attached());
        // The backlog is dropped, not written: the socket only learns why it was cut.
        assert!(a.queue.try_recv().is_none());
        // Later messages are kept for a resume, not queued.
        assert_eq!(outlet.push(msg("offer")), PushResult::NoSocket);
        assert_eq!(outlet.last_seq(), 6);
    }

    #[tokio::test]
    async fn the_cut_off_socket_learns_why() {
        let mut outlet = Outlet::default();
        let (mut a, _) = attach(&mut outlet, 1, None);
        assert_eq!(outlet.push(msg("offer")), PushResult::Full);
        assert!(matches!(
            a.queue.recv().await,
            Delivery::Cut(Detached::SlowConsumer)
        ));
    }

    #[tokio::test]
    async fn a_new_socket_replaces_the_old_one() {
        let mut outlet = Outlet::default();
        let (mut old, _) = attach(&mut outlet, 8, None);
        let (new, _) = attach(&mut outlet, 8, Some(1));
        assert!(matches!(
            old.queue.recv().await,
            Delivery::Cut(Detached::Replaced)
        ));
        // The old socket closing afterwards does not detach the new one.
        outlet.detach(&old.queue);
        assert!(outlet.socket_attached());
        outlet.detach(&new.queue);
        assert!(!outlet.socket_attached());
    }
}
