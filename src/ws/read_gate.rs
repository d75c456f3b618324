//! Reading a socket only when something may have arrived.
//!
//! A socket task selects over its socket's read side each time it has nothing else to do,
//! and a broadcast turns the loop of every socket. Polling the read side of an idle socket
//! goes down every layer under the WebSocket (its frame reader, which readies its buffer
//! first, the upgraded connection, the edge's stream and the TCP stream's readiness) only to
//! learn that nothing came: most of a broadcast's work per socket, for no byte read.
//!
//! A [`ReadGate`] polls the read side with a waker of its own, which records that the read
//! side woke before it wakes the task. After a poll that found nothing, the gate answers
//! `Pending` itself until that waker fires; after a poll that read something, the next poll
//! goes down again (more may be buffered, with no new readiness to announce it).

use std::future::{Future, poll_fn};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;
use futures::{Stream, StreamExt};

/// What the read side's waker shares with the gate.
#[derive(Default)]
struct Woken {
    /// The read side must be polled: it woke, or its last poll read something.
    flag: AtomicBool,
    /// The task that polls the gate.
    task: AtomicWaker,
}

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    /// Set before the task is woken, so the poll the wake causes finds it.
    fn wake_by_ref(self: &Arc<Self>) {
        self.flag.store(true, Ordering::Release);
        self.task.wake();
    }
}

/// Polls a stream (a socket's read side) only when it woke since it last found nothing.
pub struct ReadGate {
    woken: Arc<Woken>,
    /// The waker the stream is polled with: `woken`'s.
    waker: Waker,
}

impl Default for ReadGate {
    fn default() -> Self {
        let woken = Arc::new(Woken {
            flag: AtomicBool::new(true),
            task: AtomicWaker::new(),
        });
        let waker = Waker::from(woken.clone());
        Self { woken, waker }
    }
}

impl ReadGate {
    /// The stream's next item, polling the stream only when it may have one.
    ///
    /// The gate must be the only reader of `stream` that waits on it: a stream polled
    /// elsewhere with another waker would not wake the gate.
    pub fn next<'a, S: Stream + Unpin>(
        &'a self,
        stream: &'a mut S,
    ) -> impl Future<Output = Option<S::Item>> + 'a {
        poll_fn(move |cx| self.poll_next(stream, cx))
    }

    fn poll_next<S: Stream + Unpin>(
        &self,
        stream: &mut S,
        cx: &Context<'_>,
    ) -> Poll<Option<S::Item>> {
        // Cleared before the poll: a wake during or after it sets it again.
        if !self.woken.flag.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        self.woken.task.register(cx.waker());
        let polled = stream.poll_next_unpin(&mut Context::from_waker(&self.waker));
        if polled.is_ready() {
            self.woken.flag.store(true, Ordering::Release);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::channel::mpsc;

    use super::*;

    #[tokio::test]
    async fn every_item_is_read_and_a_silent_stream_is_not_polled() {
        let (tx, mut rx) = mpsc::unbounded::<u32>();
        let gate = ReadGate::default();
        let reader = tokio::spawn(async move {
            let mut read = Vec::new();
            while let Some(n) = gate.next(&mut rx).await {
                read.push(n);
                // Turns of a socket's loop with nothing to read poll the gate again and
                // again.
                for _ in 0..3 {
                    let turn = tokio::time::timeout(Duration::ZERO, gate.next(&mut rx)).await;
                    if let Ok(Some(n)) = turn {
                        read.push(n);
                    }
                }
            }
            read
        });
        for n in 0..5 {
            tx.unbounded_send(n).expect("the reader is there");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Two at once: the second is buffered behind the first, with no wake of its own.
        tx.unbounded_send(5).expect("the reader is there");
        tx.unbounded_send(6).expect("the reader is there");
        drop(tx);
        let read = tokio::time::timeout(Duration::from_secs(5), reader).await;
        assert!(
            matches!(&read, Ok(Ok(read)) if *read == [0, 1, 2, 3, 4, 5, 6]),
            "{read:?}"
        );
    }

    #[test]
    fn a_stream_that_found_nothing_is_polled_again_only_once_woken() {
        let (tx, mut rx) = mpsc::unbounded::<u32>();
        let gate = ReadGate::default();
        let cx = Context::from_waker(Waker::noop());
        assert!(gate.poll_next(&mut rx, &cx).is_pending());
        assert!(
            !gate.woken.flag.load(Ordering::Acquire),
            "nothing to read: the gate stays shut"
        );
        tx.unbounded_send(1).expect("the reader is there");
        assert!(gate.woken.flag.load(Ordering::Acquire), "the send woke it");
        assert_eq!(gate.poll_next(&mut rx, &cx), Poll::Ready(Some(1)));
        assert!(
            gate.woken.flag.load(Ordering::Acquire),
            "read: polled again"
        );
    }
}
