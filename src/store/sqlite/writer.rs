//! The writer thread: the one connection that writes, and group commit.
//!
//! Every write of the store (documents, kill levels, money events) is a [`Job`] sent over a
//! bounded channel to this thread, which owns the writing connection. The thread takes the
//! first job, then everything else already queued (up to [`MAX_GROUP`]), and runs them in
//! one transaction, each job in its own `SAVEPOINT`: a job that fails is rolled back alone
//! and the rest of the group goes on. Only after the group's `COMMIT` (one sync to disk for
//! the whole group) is any job of it answered, so an acknowledged write is on disk, and a
//! group whose commit fails answers every one of its jobs with that failure. Concurrent
//! requests therefore share one sync instead of paying one each, and the more are waiting,
//! the larger the group.
//!
//! A job whose caller has stopped waiting (it answered 503 after the store's timeout) is
//! dropped unrun. At most every [`MARK_EVERY`] a group also notes when its ledger lines were
//! received, and between groups the thread deletes expired idempotency records and raw
//! ledger lines ([`super::retention`]), expired decision records ([`super::decisions`]) and
//! expired short-lived documents ([`super::expiring`]): once at start, then every
//! [`SWEEP_EVERY`].
//!
//! An in-memory store has only this connection, so its reads come here too ([`Command::Read`]);
//! they run after the group's commit, outside any transaction.

use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use rusqlite::{Connection, TransactionBehavior};
use tokio::sync::oneshot;

use super::super::{StoreError, StoreResult};
use super::{decisions, expiring, retention};

/// Most jobs committed together.
pub const MAX_GROUP: usize = 512;

/// Time between two sweeps of expired records.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

/// Time between two `received` marks: how much longer than the retention a record may stay.
const MARK_EVERY: Duration = Duration::from_secs(60);

/// A read, run on the writer's connection (in-memory stores only); it sends its own answer.
pub type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

/// What the store sends the writer thread.
pub enum Command {
    /// A write, committed with its group.
    Write(Box<dyn Job>),
    /// A read of an in-memory store.
    Read(ReadJob),
}

/// A write waiting for its group.
pub trait Job: Send {
    /// Whether the caller stopped waiting (then the job is not run).
    fn abandoned(&self) -> bool;
    /// Runs the job's statements; `false` when they failed and must be rolled back.
    fn run(&mut self, conn: &Connection) -> bool;
    /// Answers the caller once the group's transaction ended: `committed` is the commit's
    /// failure, if any.
    fn answer(self: Box<Self>, committed: Result<(), String>);
}

/// A write job made of a closure and the channel its caller waits on.
pub struct Pending<T, F> {
    work: Option<F>,
    outcome: Option<StoreResult<T>>,
    reply: oneshot::Sender<StoreResult<T>>,
}

impl<T, F> Pending<T, F> {
    /// The job, and where its answer arrives.
    pub fn new(work: F) -> (Self, oneshot::Receiver<StoreResult<T>>) {
        let (reply, answer) = oneshot::channel();
        let job = Self {
            work: Some(work),
            outcome: None,
            reply,
        };
        (job, answer)
    }
}

impl<T, F> Job for Pending<T, F>
where
    T: Send,
    F: FnOnce(&Connection) -> StoreResult<T> + Send,
{
    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }

    fn run(&mut self, conn: &Connection) -> bool {
        let outcome = match self.work.take() {
            Some(work) => work(conn),
            None => Err(StoreError::Unavailable("a write job ran twice".into())),
        };
        let ok = outcome.is_ok();
        self.outcome = Some(outcome);
        ok
    }

    fn answer(self: Box<Self>, committed: Result<(), String>) {
        let answer = match (committed, self.outcome) {
            (Err(why), _) => Err(StoreError::Unavailable(why)),
            (Ok(()), Some(outcome)) => outcome,
            (Ok(()), None) => Err(StoreError::Unavailable("a write job never ran".into())),
        };
        // The caller may have stopped waiting meanwhile; nothing is left to tell it.
        let _ = self.reply.send(answer);
    }
}

/// The writer thread's state.
pub struct Writer {
    conn: Connection,
    queue: Receiver<Command>,
    retention: TimeDelta,
    /// How long raw ledger lines are kept (`None`: forever).
    ledger_retention: Option<TimeDelta>,
    /// When the last `received` mark was committed (`None`: not since the start).
    marked: Option<Instant>,
    /// The lock that makes this process the file's only owner, held while the thread runs.
    _owner: Option<std::fs::File>,
}

impl Writer {
    /// A writer over `conn` fed by `queue`, deleting idempotency records older than
    /// `retention` and raw ledger lines older than `ledger_retention`; `owner` is released
    /// when the thread ends.
    pub fn new(
        conn: Connection,
        queue: Receiver<Command>,
        retention: TimeDelta,
        ledger_retention: Option<TimeDelta>,
        owner: Option<std::fs::File>,
    ) -> Self {
        Self {
            conn,
            queue,
            retention,
            ledger_retention,
            marked: None,
            _owner: owner,
        }
    }

    /// Serves the queue until every sender is gone, then closes the connection.
    pub fn run(mut self) {
        let mut sweeping = true;
        let mut next_sweep = Instant::now();
        loop {
            if sweeping {
                sweeping = self.sweep_chunk();
                if !sweeping {
                    next_sweep = Instant::now() + SWEEP_EVERY;
                }
            }
            let first = if sweeping {
                match self.queue.try_recv() {
                    Ok(command) => command,
                    Err(TryRecvError::Empty) => continue,
                    Err(TryRecvError::Disconnected) => return,
                }
            } else {
                let wait = next_sweep.saturating_duration_since(Instant::now());
                match self.queue.recv_timeout(wait) {
                    Ok(command) => command,
                    Err(RecvTimeoutError::Timeout) => {
                        sweeping = true;
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => return,
                }
            };
            let mut writes = Vec::new();
            let mut reads = Vec::new();
            let mut next = Some(first);
            while let Some(command) = next {
                match command {
                    Command::Write(job) => writes.push(job),
                    Command::Read(read) => reads.push(read),
                }
                next = if writes.len() + reads.len() < MAX_GROUP {
                    self.queue.try_recv().ok()
                } else {
                    None
                };
            }
            self.commit_group(writes);
            for read in reads {
                read(&self.conn);
            }
        }
    }

    /// Runs one group in one transaction and answers each of its jobs after the commit.
    fn commit_group(&mut self, jobs: Vec<Box<dyn Job>>) {
        let mut jobs: Vec<Box<dyn Job>> = jobs.into_iter().filter(|j| !j.abandoned()).collect();
        if jobs.is_empty() {
            return;
        }
        let mark = self.marked.is_none_or(|at| at.elapsed() >= MARK_EVERY);
        let committed = transact(&mut self.conn, &mut jobs, mark).map_err(|err| {
            tracing::error!(error = %err, jobs = jobs.len(), "a group of store writes failed");
            format!("the write was not committed: {err}")
        });
        if mark && committed.is_ok() {
            self.marked = Some(Instant::now());
        }
        for job in jobs {
            job.answer(committed.clone());
        }
    }

    /// Deletes one chunk of each kind of expired record: idempotency records, raw ledger
    /// lines (when a ledger retention is set, and only once no idempotency record is left
    /// to delete), decision records, short-lived documents and old players' day totals;
    /// `true` while more may be left. Once nothing is
    /// left, forgets the `received` marks no sweep needs any more.
    fn sweep_chunk(&mut self) -> bool {
        let (retention, ledger_retention) = (self.retention, self.ledger_retention);
        let swept = (|| -> StoreResult<bool> {
            let now = Utc::now();
            let tx = self.conn.transaction()?;
            // A retention reaching before the first representable time expires nothing.
            let tx_cutoff = now.checked_sub_signed(retention);
            let tx_ids = match tx_cutoff {
                Some(cutoff) => retention::prune(&tx, cutoff)?,
                None => 0,
            };
            let ledger_cutoff = ledger_retention.and_then(|keep| now.checked_sub_signed(keep));
            let lines = match ledger_cutoff {
                Some(cutoff) if tx_ids < retention::CHUNK => retention::prune_ledger(&tx, cutoff)?,
                _ => 0,
            };
            let decided = decisions::prune(&tx, now, retention::CHUNK)?;
            let expired = expiring::prune(&tx, now, retention::CHUNK)?;
            let player_days = retention::prune_player_days(&tx, now)?;
            let more = [tx_ids, lines, decided, expired, player_days].contains(&retention::CHUNK);
            // The marks the oldest sweep still needs: the ledger's when it is pruned too.
            let oldest = match ledger_retention {
                Some(_) => ledger_cutoff,
                None => tx_cutoff,
            };
            if let Some(cutoff) = oldest.filter(|_| !more) {
                retention::forget_marks(&tx, cutoff)?;
            }
            tx.commit()?;
            Ok(more)
        })();
        match swept {
            Ok(more) => more,
            Err(err) => {
                tracing::warn!(error = %err, "could not delete expired records");
                false
            }
        }
    }
}

/// The group's transaction: every job in its own savepoint, the `received` mark when `mark`,
/// then one commit.
fn transact(conn: &mut Connection, jobs: &mut [Box<dyn Job>], mark: bool) -> StoreResult<()> {
    let mut tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for job in jobs.iter_mut() {
        let savepoint = tx.savepoint()?;
        if job.run(&savepoint) {
            savepoint.commit()?;
        } else {
            // Dropping rolls back to the savepoint and releases it; `finish` reports a failure.
            savepoint.finish()?;
        }
    }
    if mark {
        retention::mark(&tx, Utc::now())?;
    }
    Ok(tx.commit()?)
}
