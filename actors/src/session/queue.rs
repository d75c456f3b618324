//! The bounded queue between a session and its attached socket.
//!
//! The session pushes without ever blocking; a queue that fills up means the client stopped
//! reading, so the session cuts the socket off instead of buffering without bound. A cut
//! also tells a socket that a newer one replaced it.

use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, watch};

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
}

/// What a socket task reads from its session.
#[derive(Debug)]
pub enum Delivery {
    /// The next message to write.
    Message(Sequenced),
    /// The session let go of this socket.
    Cut(Detached),
}

/// A new queue of `capacity` messages (at least one) for the socket numbered `id`: the
/// session's sending end and the socket's receiving end.
pub(super) fn queue(id: u64, capacity: usize) -> (Link, SocketQueue) {
    let (tx, rx) = mpsc::channel(capacity.max(1));
    let (cut_tx, cut_rx) = watch::channel(None);
    (
        Link {
            id,
            tx,
            cut: cut_tx,
        },
        SocketQueue {
            id,
            rx,
            cut: cut_rx,
        },
    )
}

/// The session's end of an attached socket.
#[derive(Debug)]
pub(super) struct Link {
    id: u64,
    tx: mpsc::Sender<Sequenced>,
    cut: watch::Sender<Option<Detached>>,
}

impl Link {
    /// Whether this link leads to `queue`.
    pub(super) fn leads_to(&self, queue: &SocketQueue) -> bool {
        self.id == queue.id
    }

    /// Queues a message without waiting; fails when the queue is full or the socket gone.
    pub(super) fn try_send(&self, item: Sequenced) -> Result<(), TrySendError<Sequenced>> {
        self.tx.try_send(item)
    }

    /// Lets go of the socket, telling it why.
    pub(super) fn cut(self, why: Detached) {
        self.cut.send_replace(Some(why));
    }
}

/// The socket's end of its session's bounded outbound queue.
#[derive(Debug)]
pub struct SocketQueue {
    id: u64,
    rx: mpsc::Receiver<Sequenced>,
    cut: watch::Receiver<Option<Detached>>,
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

    async fn wait_cut(cut: &mut watch::Receiver<Option<Detached>>) -> Detached {
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
