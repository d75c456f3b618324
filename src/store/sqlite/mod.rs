//! The embedded store: SQLite in the engine's process, the default backend, so the service
//! runs with no setup and keeps everything across restarts.
//!
//! Everything the Redis backend keeps is kept here too, in one file (`schema.rs` lists the
//! tables): every document collection, the kill levels, wallets, lifetime spend, the
//! append-only ledger, the idempotency records, the day aggregates, the decision records, the
//! short-lived documents (until they expire) and the experiments' per-player totals. Each
//! group of store calls is implemented beside the SQL of its concern: `documents.rs`, `money.rs`, `retention.rs`, `decisions.rs`,
//! `expiring.rs`, `exposures.rs`, `erasure.rs` and `bus.rs`; this file holds the connections and the
//! readiness check.
//!
//! # Threads
//!
//! SQLite calls block, so none runs on a tokio worker:
//!
//! - every write goes to the writer thread (`writer.rs`), which owns the writing connection
//!   and commits concurrent writes together (group commit: one sync for many money events,
//!   each answered only after its group's `COMMIT`);
//! - reads of a file run on a small pool of read connections through `spawn_blocking`; in
//!   write-ahead-log mode they see the last commit and never wait for the writer;
//! - an in-memory store (`store.path = ":memory:"`) has one connection, the writer's, which
//!   serves its reads too.
//!
//! Every call is bounded by the store's timeout and answers [`StoreError::Unavailable`]
//! instead of hanging; a write whose caller gave up may still be committed later, as with
//! Redis (a money event retried with its `tx_id` then counts once).
//!
//! # Durability
//!
//! With `sync = full` an acknowledged write survives a power loss (the write-ahead log is
//! synced before the group is answered); with `sync = normal` it survives the engine process
//! crashing or being killed, but a power loss may lose the last groups.
//!
//! # One node per file
//!
//! The bus is a `tokio::sync::broadcast` channel in this process: it reaches the one node
//! there is. So that two engines never share a file without hearing each other, the store
//! holds an exclusive lock on `<file>.lock` while it is open; a second process opening the
//! same file is refused at start. Several nodes share state through Redis. Only the ledger
//! export ([`SqliteStore::open_read_only`]) opens a file beside its owner: read connections,
//! no lock, no writes.

mod bus;
mod decisions;
mod documents;
mod erasure;
mod error;
mod expiring;
mod exposures;
mod money;
mod retention;
mod schema;
mod writer;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use async_trait::async_trait;
use chrono::TimeDelta;
use rusqlite::Connection;
use serde::Deserialize;
use tokio::sync::{broadcast, oneshot};

use super::{Store, StoreError, StoreResult};
use offer_wire::bus::BusMessage;
pub use schema::Location;
use writer::{Command, Pending, Writer};

/// How many bus messages a slow subscriber may lag behind before it misses some.
const BUS_CAPACITY: usize = 1024;

/// Writes waiting for the writer thread; past this the store answers `Unavailable` at once
/// instead of queueing without bound.
const QUEUE_CAPACITY: usize = 8192;

/// Read connections of a file store (the machines have few cores; reads are short).
const READERS: usize = 4;

/// When an acknowledged write is safe (`store.sync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// Synced to disk before the answer: survives a power loss.
    Full,
    /// Handed to the operating system before the answer: survives a process crash.
    Normal,
}

/// How to open a [`SqliteStore`].
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// Where the data lives.
    pub location: Location,
    /// When an acknowledged write is safe (files only).
    pub sync: SyncMode,
    /// The bound on every call.
    pub timeout: Duration,
    /// How long a money event's `tx_id` is remembered, from when the engine received it.
    pub idempotency_retention: Duration,
    /// How long raw ledger lines are kept, from when the engine received them (`None`:
    /// forever); never shorter than `idempotency_retention`, which points at them.
    pub ledger_retention: Option<Duration>,
}

impl SqliteOptions {
    /// An in-memory store with the default bounds (tests and tools).
    pub fn in_memory() -> Self {
        Self {
            location: Location::Memory,
            sync: SyncMode::Full,
            timeout: Duration::from_secs(1),
            idempotency_retention: Duration::from_secs(90 * 86_400),
            ledger_retention: None,
        }
    }
}

/// A pool of read connections of one file, used round robin.
struct Readers {
    conns: Vec<Mutex<Connection>>,
    next: AtomicUsize,
}

impl Readers {
    /// Runs `work` on the next connection (blocking: call from `spawn_blocking`).
    fn with<T>(&self, work: impl FnOnce(&Connection) -> T) -> T {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len();
        // A panic during a read leaves the connection usable: take the lock over.
        let conn = self.conns[i].lock().unwrap_or_else(PoisonError::into_inner);
        work(&conn)
    }
}

/// The SQLite backend. Dropping it lets the writer finish what is queued, then closes the
/// file and releases it.
pub struct SqliteStore {
    queue: Option<SyncSender<Command>>,
    readers: Option<Arc<Readers>>,
    timeout: Duration,
    bus: broadcast::Sender<BusMessage>,
    writer: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("in_memory", &self.readers.is_none())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The lock file that makes one process the owner of `db`.
fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// Takes the exclusive lock on `db`'s lock file, or says who holds it.
fn claim(db: &Path) -> StoreResult<File> {
    let path = lock_path(db);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| StoreError::Unavailable(format!("cannot open {}: {e}", path.display())))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Unavailable(format!(
            "{} is in use by another engine process: one engine owns a SQLite file \
             (to run several nodes, share a Redis with store.redis_url)",
            db.display()
        ))),
        Err(std::fs::TryLockError::Error(e)) => Err(StoreError::Unavailable(format!(
            "cannot lock {}: {e}",
            path.display()
        ))),
    }
}

impl SqliteStore {
    /// Opens (or creates) the store. Blocking: it opens files, may recover the write-ahead
    /// log of a crashed run and deletes expired idempotency records, so call it outside the
    /// tokio workers (`spawn_blocking`). Fails with [`StoreError::Unavailable`] when the file
    /// cannot be opened or another process owns it, and [`StoreError::Corrupt`] when it is
    /// not a store this build can read.
    pub fn open(options: &SqliteOptions) -> StoreResult<Self> {
        let owner = match &options.location {
            Location::File(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        StoreError::Unavailable(format!("cannot create {}: {e}", dir.display()))
                    })?;
                }
                Some(claim(path)?)
            }
            Location::Memory => None,
        };
        let conn = schema::open_writer(&options.location, options.sync, options.timeout)?;
        let readers = match &options.location {
            Location::File(path) => {
                let conns = (0..READERS)
                    .map(|_| schema::open_reader(path, options.timeout).map(Mutex::new))
                    .collect::<StoreResult<Vec<_>>>()?;
                Some(Arc::new(Readers {
                    conns,
                    next: AtomicUsize::new(0),
                }))
            }
            Location::Memory => None,
        };
        let retention = TimeDelta::from_std(options.idempotency_retention)
            .map_err(|e| StoreError::Unavailable(format!("idempotency retention: {e}")))?;
        let ledger_retention = options
            .ledger_retention
            .map(|keep| {
                TimeDelta::from_std(keep.max(options.idempotency_retention))
                    .map_err(|e| StoreError::Unavailable(format!("ledger retention: {e}")))
            })
            .transpose()?;
        let (queue, inbox) = std::sync::mpsc::sync_channel(QUEUE_CAPACITY);
        let writer = Writer::new(conn, inbox, retention, ledger_retention, owner);
        let writer = std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || writer.run())
            .map_err(|e| StoreError::Unavailable(format!("cannot start the writer: {e}")))?;
        let (bus, _) = broadcast::channel(BUS_CAPACITY);
        Ok(Self {
            queue: Some(queue),
            readers,
            timeout: options.timeout,
            bus,
            writer: Some(writer),
        })
    }

    /// Opens an existing file to read it beside the engine that owns it (the ledger export):
    /// read connections only, no lock and no writer, so every write answers
    /// [`StoreError::Unavailable`]. Blocking, like [`SqliteStore::open`].
    pub fn open_read_only(path: &Path, timeout: Duration) -> StoreResult<Self> {
        if !path.is_file() {
            return Err(StoreError::Unavailable(format!(
                "{} is not a store file",
                path.display()
            )));
        }
        let conns = (0..READERS)
            .map(|_| schema::open_reader(path, timeout).map(Mutex::new))
            .collect::<StoreResult<Vec<_>>>()?;
        let (bus, _) = broadcast::channel(BUS_CAPACITY);
        Ok(Self {
            queue: None,
            readers: Some(Arc::new(Readers {
                conns,
                next: AtomicUsize::new(0),
            })),
            timeout,
            bus,
            writer: None,
        })
    }

    /// Hands a command to the writer thread without ever blocking.
    fn send(&self, command: Command) -> StoreResult<()> {
        let queue = self
            .queue
            .as_ref()
            .ok_or_else(|| StoreError::Unavailable("the store is closed".into()))?;
        queue.try_send(command).map_err(|err| match err {
            TrySendError::Full(_) => {
                StoreError::Unavailable("too many writes are waiting for the disk".into())
            }
            TrySendError::Disconnected(_) => {
                StoreError::Unavailable("the store's writer has stopped".into())
            }
        })
    }

    /// Waits for an answer within the timeout.
    async fn answer<T>(
        &self,
        what: &str,
        answer: oneshot::Receiver<StoreResult<T>>,
    ) -> StoreResult<T> {
        match tokio::time::timeout(self.timeout, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(StoreError::Unavailable(format!(
                "{what}: the store's writer dropped the call"
            ))),
            Err(_) => Err(StoreError::Unavailable(format!(
                "{what}: no answer within {:?}",
                self.timeout
            ))),
        }
    }

    /// Runs `work` on the writer thread with the next group; answers after its commit.
    async fn write<T, F>(&self, what: &str, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (job, answer) = Pending::new(work);
        self.send(Command::Write(Box::new(job)))?;
        self.answer(what, answer).await
    }

    /// Runs `work` on a read connection (a file store) or the writer's (in memory).
    async fn read<T, F>(&self, what: &str, work: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        match &self.readers {
            Some(readers) => {
                let readers = Arc::clone(readers);
                // The answer travels over the channel; a read whose caller timed out finishes
                // on its blocking thread and is dropped.
                drop(tokio::task::spawn_blocking(move || {
                    let _ = reply.send(readers.with(work));
                }));
            }
            None => self.send(Command::Read(Box::new(move |conn| {
                let _ = reply.send(work(conn));
            })))?,
        }
        self.answer(what, answer).await
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing the queue lets the writer finish what is queued and stop; joining it means
        // the file is closed and its lock released when the store is gone.
        drop(self.queue.take());
        if let Some(writer) = self.writer.take()
            && writer.join().is_err()
        {
            tracing::error!("the store's writer thread panicked");
        }
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn ping(&self) -> StoreResult<()> {
        if self.writer.as_ref().is_none_or(JoinHandle::is_finished) {
            return Err(StoreError::Unavailable(
                "the store's writer has stopped".into(),
            ));
        }
        self.read("ping", |conn| {
            conn.query_row("SELECT 1", [], |_| Ok(()))?;
            Ok(())
        })
        .await
    }
}
