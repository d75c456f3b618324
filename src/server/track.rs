//! What the edge knows about one connection: where it stands in its request cycle and since
//! when, so that the sweeper can tell whether its time is up, and so that the connection's
//! I/O can tell hyper's own answers from the router's.
//!
//! Every field is an atomic written by the connection's own task and read by the sweeper.
//! The sweeper's verdict is only a hint: the connection task checks [`Track::expired`] again
//! before it closes, so a request that arrives just as a deadline passes is never cut off on
//! a stale reading.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering::Relaxed};
use std::task::Waker;
use std::time::Instant;

use futures::task::AtomicWaker;

/// "No such moment yet" in the millisecond stamps.
const NEVER: u64 = u64::MAX;

/// The sweeper found the connection past a deadline.
pub(super) const KILL: u8 = 1;
/// The server is shutting down: finish the request in flight, start no other.
pub(super) const DRAIN: u8 = 2;

/// Where a connection stands in its request cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Phase {
    /// Waiting for a request head: on a new connection, or after an answer was fully handed
    /// to the socket. Anything hyper writes now is its own answer to a head it could not
    /// parse, since no request of this connection is with the router.
    Head = 0,
    /// The router has the request; its body is still arriving.
    Body = 1,
    /// The router has the whole request and works on the answer, or the answer is being sent.
    Handling = 2,
    /// The connection was upgraded (a WebSocket): its socket belongs to the upgrade now.
    Upgraded = 3,
}

impl Phase {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Head,
            1 => Self::Body,
            2 => Self::Handling,
            _ => Self::Upgraded,
        }
    }
}

/// A millisecond clock shared by every connection, advanced by the sweeper at each tick, so
/// that stamping a moment costs one atomic load instead of a clock read.
pub(super) struct Clock {
    start: Instant,
    now_ms: AtomicU64,
}

impl Clock {
    /// A clock at zero.
    pub(super) fn new() -> Self {
        Self {
            start: Instant::now(),
            now_ms: AtomicU64::new(0),
        }
    }

    /// The time at the last tick, in milliseconds since the server started.
    pub(super) fn now(&self) -> u64 {
        self.now_ms.load(Relaxed)
    }

    /// Reads the real time, publishes it and returns it.
    pub(super) fn tick(&self) -> u64 {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(NEVER - 1);
        self.now_ms.store(ms, Relaxed);
        ms
    }
}

/// The three deadlines, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    /// A whole request head, from the connection's start or the next request's first byte.
    pub(super) header_ms: u64,
    /// A whole request body, from the end of its head.
    pub(super) body_ms: u64,
    /// No new request after an answer, or no progress writing an answer.
    pub(super) idle_ms: u64,
}

/// One connection's state (see the module documentation).
pub(super) struct Track {
    phase: AtomicU8,
    /// When the current phase began.
    since: AtomicU64,
    /// In [`Phase::Head`]: when the head's first byte arrived ([`NEVER`] before).
    first_byte: AtomicU64,
    /// In [`Phase::Head`]: bytes read since the phase began.
    head_bytes: AtomicU64,
    /// In [`Phase::Head`]: whether those bytes hold the end of the request line.
    line_ended: AtomicBool,
    /// The router's answer has been handed to hyper in full; the next flush of the socket
    /// (hyper flushes only once its buffer is empty) means it has left.
    answer_ended: AtomicBool,
    /// Since when the socket has refused to take more of an answer ([`NEVER`] if it takes).
    write_blocked: AtomicU64,
    /// [`KILL`] and [`DRAIN`] bits for the connection task.
    signals: AtomicU8,
    /// The connection task, woken when a signal is raised.
    waker: AtomicWaker,
}

impl Track {
    /// A connection accepted at `now`: waiting for its first head, whose time counts from now.
    pub(super) fn new(now: u64) -> Self {
        Self {
            phase: AtomicU8::new(Phase::Head as u8),
            since: AtomicU64::new(now),
            first_byte: AtomicU64::new(now),
            head_bytes: AtomicU64::new(0),
            line_ended: AtomicBool::new(false),
            answer_ended: AtomicBool::new(false),
            write_blocked: AtomicU64::new(NEVER),
            signals: AtomicU8::new(0),
            waker: AtomicWaker::new(),
        }
    }

    fn phase(&self) -> Phase {
        Phase::from_u8(self.phase.load(Relaxed))
    }

    /// Whether the connection was upgraded (a WebSocket): from then on nothing it reads or
    /// writes concerns the track.
    pub(super) fn upgraded(&self) -> bool {
        self.phase() == Phase::Upgraded
    }

    /// Whether the connection waits for a request head (no request of it is with the router).
    pub(super) fn between_requests(&self) -> bool {
        self.phase() == Phase::Head
    }

    /// Bytes arrived from the client.
    pub(super) fn on_read(&self, now: u64, bytes: &[u8]) {
        if self.phase() != Phase::Head || bytes.is_empty() {
            return;
        }
        if self.first_byte.load(Relaxed) == NEVER {
            self.first_byte.store(now, Relaxed);
        }
        let len = u64::try_from(bytes.len()).unwrap_or(NEVER);
        self.head_bytes
            .store(self.head_bytes.load(Relaxed).saturating_add(len), Relaxed);
        if !self.line_ended.load(Relaxed) && bytes.contains(&b'\n') {
            self.line_ended.store(true, Relaxed);
        }
    }

    /// Whether this phase read at least `max` bytes without the end of the request line: a
    /// head refused for its size was refused for its request line alone.
    pub(super) fn line_overflowed(&self, max: usize) -> bool {
        let max = u64::try_from(max).unwrap_or(NEVER);
        self.head_bytes.load(Relaxed) >= max && !self.line_ended.load(Relaxed)
    }

    /// hyper parsed a request head and hands it to the router.
    pub(super) fn on_request(&self, now: u64, without_body: bool) {
        let phase = if without_body {
            Phase::Handling
        } else {
            Phase::Body
        };
        self.answer_ended.store(false, Relaxed);
        self.since.store(now, Relaxed);
        self.phase.store(phase as u8, Relaxed);
    }

    /// The request body arrived in full, or the router let go of it.
    pub(super) fn on_request_body_end(&self) {
        let _ =
            self.phase
                .compare_exchange(Phase::Body as u8, Phase::Handling as u8, Relaxed, Relaxed);
    }

    /// The router's answer was handed to hyper in full.
    pub(super) fn on_answer_end(&self) {
        self.answer_ended.store(true, Relaxed);
    }

    /// The router switched protocols (a WebSocket).
    pub(super) fn on_upgrade(&self) {
        self.phase.store(Phase::Upgraded as u8, Relaxed);
    }

    /// hyper flushed the socket with nothing left in its buffer: if the answer had ended, it
    /// has now left entirely, and the connection waits for its next request.
    pub(super) fn on_flush(&self, now: u64) {
        if matches!(self.phase(), Phase::Body | Phase::Handling)
            && self.answer_ended.swap(false, Relaxed)
        {
            self.since.store(now, Relaxed);
            self.first_byte.store(NEVER, Relaxed);
            self.head_bytes.store(0, Relaxed);
            self.line_ended.store(false, Relaxed);
            self.phase.store(Phase::Head as u8, Relaxed);
        }
    }

    /// A write to the socket went through (`blocked == false`) or had to wait.
    pub(super) fn on_write(&self, now: u64, blocked: bool) {
        let current = self.write_blocked.load(Relaxed);
        if blocked {
            if current == NEVER {
                self.write_blocked.store(now, Relaxed);
            }
        } else if current != NEVER {
            self.write_blocked.store(NEVER, Relaxed);
        }
    }

    /// Whether a deadline of this connection has passed at `now`.
    pub(super) fn expired(&self, now: u64, deadlines: &Deadlines) -> bool {
        let phase = self.phase();
        if phase == Phase::Upgraded {
            return false;
        }
        let blocked = self.write_blocked.load(Relaxed);
        if blocked != NEVER && now.saturating_sub(blocked) >= deadlines.idle_ms {
            return true;
        }
        match phase {
            Phase::Head => match self.first_byte.load(Relaxed) {
                NEVER => now.saturating_sub(self.since.load(Relaxed)) >= deadlines.idle_ms,
                first => now.saturating_sub(first) >= deadlines.header_ms,
            },
            Phase::Body => now.saturating_sub(self.since.load(Relaxed)) >= deadlines.body_ms,
            Phase::Handling | Phase::Upgraded => false,
        }
    }

    /// Raises `signal` ([`KILL`] or [`DRAIN`]) and wakes the connection task.
    pub(super) fn raise(&self, signal: u8) {
        self.signals.fetch_or(signal, Relaxed);
        self.waker.wake();
    }

    /// Forgets the connection task's waker once the task ends. An upgraded socket keeps its
    /// track for as long as it is open, and a waker kept here would keep the ended task's
    /// memory (about 400 bytes) allocated with it.
    pub(super) fn forget_task(&self) {
        drop(self.waker.take());
    }

    /// The signals raised so far; [`KILL`] is cleared by reading it.
    pub(super) fn take_signals(&self, waker: &Waker) -> u8 {
        self.waker.register(waker);
        if self.signals.load(Relaxed) == 0 {
            return 0;
        }
        self.signals.fetch_and(!KILL, Relaxed)
    }
}
