//! The bounded queue between a session and its attached socket.
//!
//! The session pushes without ever blocking; a queue that fills up means the client stopped
//! reading, so the session cuts the socket off instead of buffering without bound. A cut
//! also tells a socket that a newer one replaced it.
//!
//! Both ends share one small allocation: the queued messages, the cut and the socket task's
//! waker under one mutex. Every open socket has one, so it is kept small while the socket
//! is idle: one message waits in place, and a buffer for more is allocated only once two
//! wait at the same time, holding what is queued, nothing per unused place (a channel with a
//! cut signal beside it took about 1.4 KiB per socket before the first message).

use std::collections::VecDeque;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Poll, Waker};

use tokio::sync::mpsc::error::TrySendError;

use super::message::Sequenced;

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
    /// The session was closed because its player was erased: it never resumes.
    Erased,
}

/// What a socket task reads from its session.
#[derive(Debug)]
pub enum Delivery {
    /// The next message to write.
    Message(Sequenced),
    /// The session let go of this socket.
    Cut(Detached),
}

/// What both ends share.
#[derive(Debug)]
struct State {
    /// Messages queued, oldest first; at most `capacity`.
    items: Backlog,
    capacity: usize,
    /// Set once the session lets go of the socket (or drops its end: [`Detached::Replaced`]).
    cut: Option<Detached>,
    /// The socket's end was dropped: nothing reads any more.
    socket_gone: bool,
    /// The socket task waiting for a message or a cut.
    waker: Option<Waker>,
}

/// The queued messages: the oldest in place, the others behind it in a buffer that is
/// allocated only once two wait at the same time. A broadcast queues one message per socket,
/// which the socket takes before the next arrives, so it stays in the allocation the lock and
/// the waker share: no buffer per socket, and no second place in memory for the push and the
/// pop to touch. Whenever `head` is empty, so is `rest`.
#[derive(Debug, Default)]
struct Backlog {
    head: Option<Sequenced>,
    rest: VecDeque<Sequenced>,
}

impl Backlog {
    fn len(&self) -> usize {
        usize::from(self.head.is_some()) + self.rest.len()
    }

    fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    fn push_back(&mut self, item: Sequenced) {
        match self.head {
            None => self.head = Some(item),
            Some(_) => self.rest.push_back(item),
        }
    }

    fn pop_front(&mut self) -> Option<Sequenced> {
        let item = self.head.take()?;
        self.head = self.rest.pop_front();
        Some(item)
    }
}

type Shared = Arc<Mutex<State>>;

/// Locks the shared state. Every step under the lock is a plain assignment or a push or
/// pop, so a poisoned lock still holds consistent data.
fn lock(shared: &Mutex<State>) -> MutexGuard<'_, State> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Wakes the socket task, outside the lock.
fn wake(mut state: MutexGuard<'_, State>) {
    let waker = state.waker.take();
    drop(state);
    if let Some(waker) = waker {
        waker.wake();
    }
}

/// A new queue of `capacity` messages (at least one) for the socket numbered `id`: the
/// session's sending end and the socket's receiving end.
pub(super) fn queue(id: u64, capacity: usize) -> (Link, SocketQueue) {
    let shared = Arc::new(Mutex::new(State {
        items: Backlog::default(),
        capacity: capacity.max(1),
        cut: None,
        socket_gone: false,
        waker: None,
    }));
    (
        Link {
            id,
            shared: shared.clone(),
        },
        SocketQueue {
            id,
            shared,
            more: false,
        },
    )
}

/// The session's end of an attached socket.
#[derive(Debug)]
pub(super) struct Link {
    id: u64,
    shared: Shared,
}

impl Link {
    /// Whether this link leads to `queue`.
    pub(super) fn leads_to(&self, queue: &SocketQueue) -> bool {
        self.id == queue.id
    }

    /// Queues a message without waiting; fails when the queue is full or the socket gone.
    pub(super) fn try_send(&self, item: Sequenced) -> Result<(), TrySendError<Sequenced>> {
        let mut state = lock(&self.shared);
        if state.socket_gone {
            return Err(TrySendError::Closed(item));
        }
        if state.items.len() >= state.capacity {
            return Err(TrySendError::Full(item));
        }
        state.items.push_back(item);
        wake(state);
        Ok(())
    }

    /// Lets go of the socket, telling it why.
    pub(super) fn cut(self, why: Detached) {
        let mut state = lock(&self.shared);
        state.cut.get_or_insert(why);
        state.items = Backlog::default();
        wake(state);
    }
}

impl Drop for Link {
    /// A session that goes without cutting the socket off (it stopped) reads as replaced.
    fn drop(&mut self) {
        let mut state = lock(&self.shared);
        if state.cut.is_none() {
            state.cut = Some(Detached::Replaced);
            wake(state);
        }
    }
}

/// The socket's end of its session's bounded outbound queue.
#[derive(Debug)]
pub struct SocketQueue {
    id: u64,
    shared: Shared,
    /// Whether the last message taken left others behind it (as the queue stood then).
    more: bool,
}

impl SocketQueue {
    /// The next message, or why the session let go (a cut wins over queued messages: a slow
    /// consumer's backlog is dropped, not written).
    pub async fn recv(&mut self) -> Delivery {
        poll_fn(|cx| {
            let mut state = lock(&self.shared);
            if let Some(why) = state.cut {
                return Poll::Ready(Delivery::Cut(why));
            }
            if let Some(item) = state.items.pop_front() {
                self.more = !state.items.is_empty();
                return Poll::Ready(Delivery::Message(item));
            }
            register(&mut state, cx.waker());
            Poll::Pending
        })
        .await
    }

    /// Resolves when the session lets go of this socket (to abandon a blocked write).
    pub async fn cut(&mut self) -> Detached {
        poll_fn(|cx| {
            let mut state = lock(&self.shared);
            match state.cut {
                Some(why) => Poll::Ready(why),
                None => {
                    register(&mut state, cx.waker());
                    Poll::Pending
                }
            }
        })
        .await
    }

    /// A message already queued, without waiting (flushing on shutdown).
    pub fn try_recv(&mut self) -> Option<Sequenced> {
        let mut state = lock(&self.shared);
        if state.cut.is_some() {
            return None;
        }
        let item = state.items.pop_front();
        self.more = !state.items.is_empty();
        item
    }

    /// Whether the message last taken had others queued behind it. A writer that took one
    /// message reads this, not the queue, to learn whether there is a batch to take: a lone
    /// message (a broadcast) costs one lock, not two. A message queued since is taken on
    /// the writer's next turn.
    pub fn more_queued(&self) -> bool {
        self.more
    }
}

/// Keeps the socket task's waker, replacing an older one of another task.
fn register(state: &mut State, waker: &Waker) {
    match &state.waker {
        Some(kept) if kept.will_wake(waker) => {}
        _ => state.waker = Some(waker.clone()),
    }
}

impl Drop for SocketQueue {
    /// The session's next push finds the socket gone and forgets it.
    fn drop(&mut self) {
        let mut state = lock(&self.shared);
        state.socket_gone = true;
        state.items = Backlog::default();
        state.waker = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::OutboundMessage;

    fn message(seq: u64) -> Sequenced {
        Sequenced {
            seq,
            msg: OutboundMessage::new(serde_json::json!({ "type": "n" })),
        }
    }

    #[test]
    fn messages_leave_in_the_order_they_came_however_pushes_and_takes_mix() {
        let (link, mut queue) = queue(1, 8);
        let mut taken = Vec::new();
        let mut next = 1;
        // Pushes of 1, 2, 3 and 1 messages, with one or two taken after each.
        for (pushes, takes) in [(1, 1), (2, 1), (3, 2), (1, 2)] {
            for _ in 0..pushes {
                assert!(link.try_send(message(next)).is_ok());
                next += 1;
            }
            for _ in 0..takes {
                taken.extend(queue.try_recv().map(|m| m.seq));
            }
        }
        while let Some(m) = queue.try_recv() {
            taken.push(m.seq);
        }
        assert_eq!(taken, (1..next).collect::<Vec<_>>());
    }

    #[test]
    fn the_queue_holds_at_most_its_capacity() {
        let (link, mut queue) = queue(1, 2);
        assert!(link.try_send(message(1)).is_ok());
        assert!(link.try_send(message(2)).is_ok());
        assert!(matches!(
            link.try_send(message(3)),
            Err(TrySendError::Full(_))
        ));
        assert_eq!(queue.try_recv().map(|m| m.seq), Some(1));
        // Reading one makes room for one.
        assert!(link.try_send(message(3)).is_ok());
        assert_eq!(queue.try_recv().map(|m| m.seq), Some(2));
        assert_eq!(queue.try_recv().map(|m| m.seq), Some(3));
        assert!(queue.try_recv().is_none());
    }

    #[tokio::test]
    async fn the_queue_tells_whether_a_message_had_others_behind_it() {
        let (link, mut queue) = queue(1, 4);
        assert!(link.try_send(message(1)).is_ok());
        assert!(matches!(queue.recv().await, Delivery::Message(_)));
        assert!(!queue.more_queued(), "a lone message");
        assert!(link.try_send(message(2)).is_ok());
        assert!(link.try_send(message(3)).is_ok());
        assert!(matches!(queue.recv().await, Delivery::Message(_)));
        assert!(queue.more_queued());
        assert_eq!(queue.try_recv().map(|m| m.seq), Some(3));
        assert!(!queue.more_queued());
    }

    #[test]
    fn a_zero_capacity_still_holds_one_message() {
        let (link, _queue) = queue(1, 0);
        assert!(link.try_send(message(1)).is_ok());
        assert!(link.try_send(message(2)).is_err());
    }

    #[tokio::test]
    async fn a_cut_wins_over_queued_messages() {
        let (link, mut queue) = queue(1, 4);
        assert!(link.try_send(message(1)).is_ok());
        link.cut(Detached::SlowConsumer);
        assert!(matches!(
            queue.recv().await,
            Delivery::Cut(Detached::SlowConsumer)
        ));
        assert!(queue.try_recv().is_none());
        assert_eq!(queue.cut().await, Detached::SlowConsumer);
    }

    #[test]
    fn a_dropped_socket_end_refuses_messages() {
        let (link, queue) = queue(1, 4);
        drop(queue);
        assert!(matches!(
            link.try_send(message(1)),
            Err(TrySendError::Closed(_))
        ));
    }

    #[tokio::test]
    async fn a_waiting_socket_wakes_for_a_message_and_for_a_cut() {
        let (link, mut queue) = queue(1, 4);
        let reader = tokio::spawn(async move {
            let first = queue.recv().await;
            let second = queue.recv().await;
            (first, second)
        });
        // The reader runs until it waits on the empty queue.
        tokio::task::yield_now().await;
        assert!(link.try_send(message(1)).is_ok());
        tokio::task::yield_now().await;
        link.cut(Detached::Replaced);
        let (first, second) = reader.await.expect("the reader finished");
        assert!(matches!(first, Delivery::Message(m) if m.seq == 1));
        assert!(matches!(second, Delivery::Cut(Detached::Replaced)));
    }

    #[tokio::test]
    async fn a_dropped_session_end_reads_as_replaced() {
        let (link, mut queue) = queue(1, 4);
        drop(link);
        assert!(matches!(
            queue.recv().await,
            Delivery::Cut(Detached::Replaced)
        ));
    }
}
