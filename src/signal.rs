//! A one-way signal that many socket tasks wait on: the node's shutdown and each SDK key's
//! revocation.
//!
//! A socket task selects over its signals on every turn of its loop, and a broadcast turns
//! the loop of every socket of the node. A wait that took a lock on each poll (a `watch`
//! channel's waiter list, or its value's read lock) would have every socket take a lock
//! that all of them share, once per message written. A [`Signal`] is a flag and a
//! [`Notify`]: the flag is set before the waiters are woken, a wait registers its task on
//! its first poll, and every later poll reads the flag only.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

/// A signal that fires once and stays fired.
#[derive(Debug, Default)]
pub struct Signal {
    fired: AtomicBool,
    waiters: Notify,
}

impl Signal {
    /// Fires the signal and wakes every wait. The flag is set before the wake, so a woken
    /// wait always finds it.
    pub fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        self.waiters.notify_waiters();
    }

    /// Whether the signal has fired.
    pub fn fired(&self) -> bool {
        self.fired.load(Ordering::Acquire)
    }

    /// Resolves once the signal has fired (at once when it already has).
    ///
    /// The first poll registers the task with the waiters; every later poll reads the flag
    /// only. So the future must stay with the task that first polled it, as a socket task's
    /// does: the waker kept is that task's.
    pub fn wait(&self) -> Wait<'_> {
        Wait {
            signal: self,
            notified: self.waiters.notified(),
            registered: false,
        }
    }
}

pin_project! {
    /// A wait for a [`Signal`] (see [`Signal::wait`]).
    pub struct Wait<'a> {
        signal: &'a Signal,
        #[pin]
        notified: Notified<'a>,
        registered: bool,
    }
}

impl Future for Wait<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        if this.signal.fired() {
            return Poll::Ready(());
        }
        if !*this.registered {
            // Ready only after `fire`, whose flag is set: read again below.
            let _ = this.notified.poll(cx);
            *this.registered = true;
            if this.signal.fired() {
                return Poll::Ready(());
            }
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    /// Whether a wait resolves without waiting.
    async fn resolved(signal: &Signal) -> bool {
        tokio::time::timeout(Duration::ZERO, signal.wait())
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_wait_resolves_once_fired_and_at_once_afterwards() {
        let signal = Signal::default();
        assert!(!signal.fired());
        assert!(!resolved(&signal).await);
        signal.fire();
        assert!(signal.fired());
        assert!(resolved(&signal).await);
    }

    #[tokio::test]
    async fn a_wait_kept_across_polls_is_woken_by_the_signal() {
        let signal = Arc::new(Signal::default());
        let waiting = signal.clone();
        let (polled_tx, polled_rx) = tokio::sync::oneshot::channel();
        let task = tokio::spawn(async move {
            let mut wait = std::pin::pin!(waiting.wait());
            // Polled on several turns before the signal, as a socket task's loop does.
            for _ in 0..3 {
                let turn = tokio::time::timeout(Duration::ZERO, wait.as_mut());
                assert!(turn.await.is_err(), "not fired yet");
            }
            let _ = polled_tx.send(());
            wait.await;
        });
        polled_rx.await.expect("the task polled the wait");
        signal.fire();
        let woken = tokio::time::timeout(Duration::from_secs(5), task).await;
        assert!(matches!(woken, Ok(Ok(()))), "the signal woke the task");
    }
}
