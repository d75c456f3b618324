//! The bounded pool receipts (and the stores' server notifications) are verified on.
//! Checking an App Store chain costs a few
//! milliseconds of one core, a Google signature under one: run on the async threads, a flood
//! of forged receipts would stall every request of the node. So each check runs on a blocking
//! thread, at most `workers` at once, and at most `queue` more wait for one; a receipt
//! arriving beyond that is refused at once as unavailable (503 with `Retry-After`), before
//! anything is parsed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use offer_receipts::AppleRoots;
use offer_wire::event::Receipt;
use tokio::sync::Semaphore;

use super::verify::{Expected, Invalid, Verified, verify};
use crate::service::{ServiceError, ServiceResult};

/// This node's receipt verifiers.
pub struct VerifyPool {
    /// The Apple roots a chain must end in: Apple Root CA - G3 and the configured extras.
    roots: Arc<AppleRoots>,
    /// One permit per verifier.
    workers: Arc<Semaphore>,
    /// Receipts admitted: verifying or waiting for a verifier.
    admitted: Arc<AtomicUsize>,
    /// The most receipts admitted at once: the verifiers and the queue.
    limit: usize,
}

/// One admitted receipt; leaving (answered, or its caller gone) frees its place.
struct Admission(Arc<AtomicUsize>);

impl Drop for Admission {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl VerifyPool {
    /// `workers` verifiers (at least 1) with room for `queue` waiting receipts, trusting
    /// `roots`.
    pub fn new(roots: AppleRoots, workers: usize, queue: usize) -> Self {
        let workers = workers.max(1);
        Self {
            roots: Arc::new(roots),
            workers: Arc::new(Semaphore::new(workers)),
            admitted: Arc::new(AtomicUsize::new(0)),
            limit: workers.saturating_add(queue),
        }
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
    /// or [`ServiceError::Unavailable`] when the pool is full (nothing ran). Every check of a
    /// store's signature goes through here (receipts, server notifications), so together they
    /// hold at most the pool's threads.
    pub async fn run<T: Send + 'static>(
        &self,
        check: impl FnOnce(&AppleRoots) -> T + Send + 'static,
    ) -> ServiceResult<T> {
        if self.admitted.fetch_add(1, Ordering::AcqRel) >= self.limit {
            self.admitted.fetch_sub(1, Ordering::AcqRel);
            tracing::warn!(
                limit = self.limit,
                "store signature verifiers full: refused"
            );
            return Err(ServiceError::Unavailable);
        }
        let _admission = Admission(Arc::clone(&self.admitted));
        let permit = Arc::clone(&self.workers)
            .acquire_owned()
            .await
            .map_err(|_| ServiceError::Unavailable)?;
        let roots = Arc::clone(&self.roots);
        // The permit goes with the check: a caller that stops waiting does not free a
        // verifier still busy with its document.
        tokio::task::spawn_blocking(move || {
            let verdict = check(&roots);
            drop(permit);
            verdict
        })
        .await
        .map_err(|err| ServiceError::Internal(format!("store signature verifier stopped: {err}")))
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
    async fn a_receipt_is_judged_on_the_pool() {
        let pool = VerifyPool::new(AppleRoots::apple(), 1, 0);
        let verdict = pool
            .verify(receipt(), nothing_configured())
            .await
            .expect("admitted");
        assert_eq!(
            verdict.map_err(|invalid| invalid.reason),
            Err("store_not_configured")
        );
        assert_eq!(
            pool.admitted.load(Ordering::Acquire),
            0,
            "its place is free"
        );
    }

    #[tokio::test]
    async fn beyond_the_workers_and_the_queue_a_receipt_is_refused_at_once() {
        let pool = VerifyPool::new(AppleRoots::apple(), 1, 1);
        // Hold the only verifier, so that admitted receipts wait.
        let held = Arc::clone(&pool.workers)
            .acquire_owned()
            .await
            .expect("a permit");
        let first = pool.verify(receipt(), nothing_configured());
        let second = pool.verify(receipt(), nothing_configured());
        let third = pool.verify(receipt(), nothing_configured());
        tokio::pin!(first, second);
        // The first two are admitted and wait; the third finds the pool full.
        assert!(futures::poll!(&mut first).is_pending());
        assert!(futures::poll!(&mut second).is_pending());
        assert!(matches!(third.await, Err(ServiceError::Unavailable)));
        drop(held);
        assert!(first.await.is_ok());
        assert!(second.await.is_ok());
    }
}
