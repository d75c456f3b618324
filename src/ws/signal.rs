//! Waiting for a node-wide signal (the node's shutdown) without taking the signal's lock on
//! every poll.
//!
//! A socket task selects over its signals on every turn of its loop, and a broadcast turns
//! the loop of every socket. A `watch` wait takes the lock of its channel's waiter list each
//! time it is polled, and every socket of the node shares that channel: ten thousand sockets
//! took it twice each per broadcast. The wait here is polled once to register the task, and
//! after that only when the signal's value says it fired.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;

/// Polls `inner` the first time and then only once `fired` reads true; `waiting` records
/// that `inner` has registered the task.
///
/// Sound for a signal whose value only ever turns true and is set before its waiters are
/// woken (a `watch` sets its value, then wakes): a poll before the value is set finds
/// `inner` still registered, and the poll after the wake finds the value. `inner` must not
/// stop early under tokio's task budget (wrap it in `tokio::task::unconstrained`), or its
/// first poll could return without registering; and it stays with the task that polls it
/// first, whose waker it keeps.
pub fn gated<'a, F: Future>(
    mut inner: Pin<&'a mut F>,
    waiting: &'a mut bool,
    fired: impl Fn() -> bool + 'a,
) -> impl Future<Output = F::Output> + 'a {
    poll_fn(move |cx| {
        if *waiting && !fired() {
            return Poll::Pending;
        }
        let polled = inner.as_mut().poll(cx);
        *waiting = polled.is_pending();
        polled
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use tokio::sync::watch;

    use super::*;

    #[tokio::test]
    async fn a_registered_wait_wakes_when_the_signal_fires() {
        let tx = Arc::new(watch::channel(false).0);
        let mut rx = tx.subscribe();
        let seen = tx.clone();
        let (polled_tx, polled_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let inner = tokio::task::unconstrained(rx.wait_for(|fired| *fired));
            let mut inner = std::pin::pin!(inner);
            let mut waiting = false;
            // Polled on several turns, as a socket task's loop does.
            for _ in 0..3 {
                let turn = gated(inner.as_mut(), &mut waiting, || *seen.borrow());
                assert!(tokio::time::timeout(Duration::ZERO, turn).await.is_err());
                assert!(waiting, "registered on the first poll");
            }
            let _ = polled_tx.send(());
            gated(inner.as_mut(), &mut waiting, || *seen.borrow())
                .await
                .is_ok()
        });
        polled_rx.await.expect("the task polled the wait");
        tx.send_replace(true);
        let woken = tokio::time::timeout(Duration::from_secs(5), task).await;
        assert!(matches!(woken, Ok(Ok(true))), "the signal woke the task");
    }
}
