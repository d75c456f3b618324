//! The pool the stores' signatures are verified on: purchases' receipts and the App Store's
//! server notifications. Checking an App Store chain costs a few milliseconds of one core, a
//! Google signature under one: run on the async threads, a flood of forged receipts would
//! stall every request of the node. So each check runs on one of `workers` threads of its
//! own, at most `queue` more checks wait for one, and a check arriving beyond that is refused
//! at once as unavailable (503 with `Retry-After`), before anything is parsed.
//!
//! Bounding the threads bounds how many checks run, not their share of the CPU: with as many
//! verifiers as cores, a flood would still take the cores from the offer path. So the
//! verifier threads run under Linux's `SCHED_IDLE` policy: they get a core only when nothing
//! of normal priority wants it, and a thread serving offers that wakes up takes the core from
//! a verifier at once instead of waiting for the verifier's time slice to end. Checks then
//! wait longer under load, and a flood fills the queue and is refused sooner; an idle node
//! verifies at full speed. Where the policy cannot be set, the threads fall back to a nice
//! value of at least [`VERIFIER_NICE`].

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use offer_receipts::AppleRoots;
use offer_wire::event::Receipt;
use thread_priority::{NormalThreadSchedulePolicy, ThreadSchedulePolicy};
use tokio::sync::oneshot;

use super::verify::{Expected, Invalid, Verified, verify};
use crate::service::{ServiceError, ServiceResult};

/// The nice value the verifier threads take (or keep, when the process already runs nicer)
/// where `SCHED_IDLE` is refused: the scheduler then gives a thread of nice 0 about nine
/// times a verifier's share of a core.
pub const VERIFIER_NICE: i32 = 10;

/// One check, handed to a verifier with the roots.
type Job = Box<dyn FnOnce(&AppleRoots) + Send>;

/// This node's signature verifiers.
pub struct VerifyPool {
    /// Where checks wait for a verifier: at most `queue` of them.
    jobs: SyncSender<Job>,
}

impl VerifyPool {
    /// Starts `workers` verifier threads (at least 1) with room for `queue` waiting checks
    /// (at least 1: a check waits there, however briefly, until a verifier takes it), trusting
    /// `roots`. The threads end when the pool is dropped.
    pub fn new(roots: AppleRoots, workers: usize, queue: usize) -> Self {
        let (jobs, waiting) = sync_channel::<Job>(queue.max(1));
        let waiting = Arc::new(Mutex::new(waiting));
        let roots = Arc::new(roots);
        for n in 0..workers.max(1) {
            let (waiting, roots) = (Arc::clone(&waiting), Arc::clone(&roots));
            let started = std::thread::Builder::new()
                .name(format!("receipt-verifier-{n}"))
                .spawn(move || verifier(&waiting, &roots));
            if let Err(err) = started {
                tracing::error!(error = %err, "a receipt verifier thread did not start");
            }
        }
        Self { jobs }
    }

    /// Verifies `receipt` against `expected` on a verifier: the verdict, or
    /// [`ServiceError::Unavailable`] when the pool is full (nothing was checked; the client
    /// retries the same purchase).
    pub async fn verify(
        &self,
        receipt: Receipt,
        expected: Expected,
    ) -> ServiceResult<Result<Verified, Invalid>> {
        self.run(move |roots| verify(&receipt, &expected, roots))
            .await
    }

    /// Runs `check`, given the Apple roots this node trusts, on a verifier: what it returns,
    /// or [`ServiceError::Unavailable`] when `queue` checks wait already (nothing ran). Every
    /// check of a store's signature goes through here, so together they hold at most the
    /// pool's threads.
    pub async fn run<T: Send + 'static>(
        &self,
        check: impl FnOnce(&AppleRoots) -> T + Send + 'static,
    ) -> ServiceResult<T> {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move |roots| {
            // A caller that stopped waiting no longer wants the answer.
            let _ = answer.send(check(roots));
        });
        match self.jobs.try_send(job) {
            Ok(()) => answered.await.map_err(|_| {
                ServiceError::Internal("a store signature check stopped before answering".into())
            }),
            Err(TrySendError::Full(_)) => {
                tracing::warn!("store signature verifiers full: refused");
                Err(ServiceError::Unavailable)
            }
            Err(TrySendError::Disconnected(_)) => {
                tracing::error!("no store signature verifier is running");
                Err(ServiceError::Unavailable)
            }
        }
    }
}

/// One verifier thread: lowers its own CPU priority, then runs the checks it is handed until
/// the pool is gone. A check that panics costs its own answer only.
fn verifier(waiting: &Mutex<Receiver<Job>>, roots: &AppleRoots) {
    lower_priority();
    loop {
        let job = waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv();
        let Ok(job) = job else { return };
        if std::panic::catch_unwind(AssertUnwindSafe(|| job(roots))).is_err() {
            tracing::error!("a store signature check panicked");
        }
    }
}

/// Puts the calling thread under `SCHED_IDLE` (which needs no privilege), or, where that is
/// refused, gives it a nice value of at least [`VERIFIER_NICE`] (Linux sets both per thread).
/// A failure only costs the fairness.
fn lower_priority() {
    let idle = thread_priority::set_thread_priority_and_policy(
        thread_priority::thread_native_id(),
        thread_priority::ThreadPriority::Min,
        ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
    );
    if idle.is_ok() {
        return;
    }
    let lowered = rustix::process::getpriority_process(None).and_then(|current| {
        rustix::process::setpriority_process(
            Some(rustix::thread::gettid()),
            current.max(VERIFIER_NICE),
        )
    });
    if let Err(err) = lowered {
        tracing::warn!(error = %err, "a receipt verifier keeps the normal CPU priority");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use offer_domain::environment::Environment;

    fn nothing_configured() -> Expected {
        Expected {
            env: Environment::Production,
            app_store: None,
            google_play: None,
        }
    }

    fn receipt() -> Receipt {
        Receipt::GooglePlay {
            purchase_data: "{}".into(),
            signature: "AA==".into(),
        }
    }

    #[tokio::test]
    async fn a_receipt_is_judged_on_a_verifier_that_runs_only_on_idle_cores() {
        let pool = VerifyPool::new(AppleRoots::apple(), 1, 1);
        let verdict = pool
            .verify(receipt(), nothing_configured())
            .await
            .expect("admitted");
        assert_eq!(
            verdict.map_err(|invalid| invalid.reason),
            Err("store_not_configured")
        );
        let policy = pool
            .run(|_| thread_priority::thread_schedule_policy())
            .await
            .expect("ran")
            .expect("read");
        assert_eq!(
            policy,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle)
        );
        // The threads serving requests keep the normal policy.
        assert_eq!(
            thread_priority::thread_schedule_policy().expect("read"),
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Other)
        );
    }

    #[tokio::test]
    async fn beyond_the_workers_and_the_queue_a_check_is_refused_at_once() {
        let pool = Arc::new(VerifyPool::new(AppleRoots::apple(), 1, 1));
        // Hold the only verifier, so that the next check waits in the queue.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let (started, running) = oneshot::channel();
        let busy = {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move {
                pool.run(move |_| {
                    let _ = started.send(());
                    let _ = held.recv();
                })
                .await
            })
        };
        running.await.expect("the verifier took the first check");
        // The second check goes into the queue when first polled, and waits there.
        let queued = pool.verify(receipt(), nothing_configured());
        tokio::pin!(queued);
        assert!(futures::poll!(&mut queued).is_pending());
        // The third finds the queue full.
        assert!(matches!(
            pool.run(|_| ()).await,
            Err(ServiceError::Unavailable)
        ));
        release.send(()).expect("the verifier waits");
        assert!(busy.await.expect("joined").is_ok());
        assert!(queued.await.is_ok());
    }
}
