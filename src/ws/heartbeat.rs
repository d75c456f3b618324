//! A socket's heartbeat: when its next ping is due, without polling a timer on every turn of
//! the socket task's loop.
//!
//! A socket task selects over its heartbeat each time it has nothing else to do, and a
//! broadcast turns the loop of every socket. Polling a tokio timer each time checks the
//! task's budget and registers its waker again; here the timer is polled once to register
//! the task, and after that only once its deadline has passed (a copy of the deadline kept
//! beside the flag, so a turn of the loop reads neither the boxed timer nor the driver's
//! state: a broadcast turns thousands of loops, and each box is one more place in memory).

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::task::Poll;
use std::time::Duration;

use tokio::time::{Instant, Sleep};

/// Pings due every `every`, the first at the start given.
pub struct Heartbeat {
    /// The next ping's deadline. Boxed, as in tokio's `Interval`, so the socket task's
    /// future does not carry a timer entry inline.
    timer: Pin<Box<Sleep>>,
    /// The timer's deadline, kept here so that an armed heartbeat learns it is not due
    /// without reading the box.
    deadline: Instant,
    every: Duration,
    /// The timer was polled since its last reset and holds this task's waker.
    armed: bool,
}

impl Heartbeat {
    /// A heartbeat whose first ping is due at `first`, then every `every` (a late ping
    /// leaves the later ones on their schedule, like tokio's `Interval`).
    pub fn new(first: Instant, every: Duration) -> Self {
        Self {
            timer: Box::pin(tokio::time::sleep_until(first)),
            deadline: first,
            every,
            armed: false,
        }
    }

    /// Resolves when the next ping is due, and moves the deadline on by one period.
    ///
    /// The future must be polled by the task that will send the pings: once armed, the
    /// timer wakes the task that polled it.
    pub fn due(&mut self) -> impl Future<Output = ()> + '_ {
        poll_fn(move |cx| {
            // Before its deadline an armed timer has not fired: the task is registered, and
            // the driver wakes it once the deadline passes.
            if self.armed && Instant::now() < self.deadline {
                return Poll::Pending;
            }
            // Unconstrained: a poll the task's budget turned away would not register the
            // task, and an armed timer is not polled again until it fires.
            let mut timer = tokio::task::unconstrained(self.timer.as_mut());
            match Pin::new(&mut timer).poll(cx) {
                Poll::Ready(()) => {
                    let next = self.deadline + self.every;
                    self.timer.as_mut().reset(next);
                    self.deadline = next;
                    self.armed = false;
                    Poll::Ready(())
                }
                Poll::Pending => {
                    self.armed = true;
                    Poll::Pending
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn pings_fall_due_period_after_period_however_often_the_loop_turns() {
        let start = Instant::now();
        let every = Duration::from_millis(20);
        let mut heartbeat = Heartbeat::new(start + every, every);
        let mut due_at = Vec::new();
        let turns = async {
            while due_at.len() < 3 {
                // Turns of a socket's loop between pings poll the heartbeat again and again.
                tokio::select! {
                    () = heartbeat.due() => due_at.push(Instant::now()),
                    () = tokio::time::sleep(Duration::from_millis(3)) => {}
                }
            }
        };
        let done = tokio::time::timeout(Duration::from_secs(10), turns).await;
        assert!(done.is_ok(), "three pings fell due");
        for (n, at) in (1..).zip(&due_at) {
            assert!(*at >= start + every * n, "ping {n} not before its time");
        }
    }
}
