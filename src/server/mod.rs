//! The HTTP edge: accepts TCP connections, serves the router on them over HTTP/1.1 (with
//! upgrades, for the WebSocket), and holds every connection to limits a client cannot lift.
//!
//! - **Deadlines** (`server.header_timeout_ms`, `body_timeout_ms`, `idle_timeout_ms`): a
//!   connection that does not finish sending a request head, or a body, in time, that
//!   starts no new request after an answer, or that takes none of the answer sent to it, is
//!   closed without an answer. One sweeper enforces them for every connection
//!   (`registry`); nothing arms a timer per request.
//! - **A connection limit** (`server.max_connections`, capped by the open-file limit): past
//!   it a new connection is answered 503 `unavailable` and closed, so the process keeps the
//!   descriptors it needs to answer everyone else.
//! - **A reserve for the operators** (`server.reserved_connections`): past the limit, a
//!   connection whose first request is a probe's, `/metrics`', the dashboard's or the studio
//!   API's is still served, that one request only (`reserve`), so liveness and the kill switch
//!   never wait for a free place. `/readyz` says the node is full meanwhile.
//! - **Answers in the error shape before the router**: hyper's own answers to heads it cannot
//!   parse are replaced on the socket (`io`), and heads are limited to
//!   `server.max_header_bytes`.
//! - **Little memory for a connection without a request**: until its first head is whole, a
//!   connection holds only the bytes it sent, not hyper's buffers (`head`).
//! - **Small writes leave at once**: every accepted socket has `TCP_NODELAY` set, so an
//!   answer, an offer or a kill switch pushed to a WebSocket is never held back by Nagle's
//!   algorithm waiting for the client to acknowledge the previous write.
//! - **Shutdown**: the listener closes, connections between requests close at once, and the
//!   others close after their request in flight.

mod answers;
mod connection;
mod head;
mod io;
mod peer;
mod registry;
mod reserve;
mod service;
mod track;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};

use crate::config::ServerSettings;
use crate::metrics::{Connections, OpenConnection, Refusal};

use self::answers::{Answers, LINGER};
use self::connection::Guarded;
use self::head::first_head;
use self::io::EdgeIo;
pub use self::peer::Peer;
use self::registry::Registry;
pub use self::service::App;
use self::service::EdgeService;
use self::track::{Clock, Deadlines, Track};

/// Open files kept out of the connection limit: the listener, the runtime's own
/// descriptors, the store's connections, files, and sockets being refused.
const RESERVED_FILES: u64 = 256;

/// Sockets past the limit that may be lingering on their 503 at once; past that, a
/// connection over the limit is closed without an answer.
const LINGERING_REFUSALS: usize = 64;

/// Connections the kernel holds ready for `accept`. A burst of new connections (the
/// WebSockets of a restarted node reconnecting, say) that overflows this queue has its
/// handshakes dropped, and each dropped client waits a second or more before trying again.
/// Linux caps it at `net.core.somaxconn`.
const LISTEN_BACKLOG: u32 = 4096;

/// Least time between two log lines about refused connections.
const REFUSAL_WARNING_EVERY_MS: u64 = 10_000;

/// The limits in force (from `[server]`, the connection limit capped by the open-file limit).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most connections open at once in the general pool.
    pub max_connections: usize,
    /// Connections past `max_connections` kept for the operators' requests (see `reserve`).
    pub reserved_connections: usize,
    /// Largest request head.
    pub max_header_bytes: usize,
    deadlines: Deadlines,
}

impl Limits {
    /// The limits of `settings`. Raises this process's soft open-file limit to its hard limit
    /// and caps the connection limit below it (less the reserve), so a flood of connections
    /// meets the clear refusal instead of a process out of descriptors.
    pub fn from_settings(settings: &ServerSettings) -> Self {
        let files = rlimit::increase_nofile_limit(u64::MAX).unwrap_or(u64::MAX);
        let cap =
            usize::try_from(files.saturating_sub(RESERVED_FILES).max(1)).unwrap_or(usize::MAX);
        let max_connections = settings
            .max_connections
            .min(cap.saturating_sub(settings.reserved_connections).max(1));
        if max_connections < settings.max_connections {
            tracing::info!(
                configured = settings.max_connections,
                open_file_limit = files,
                max_connections,
                "server.max_connections capped by the open-file limit"
            );
        }
        Self {
            max_connections,
            reserved_connections: settings.reserved_connections,
            max_header_bytes: settings.max_header_bytes,
            deadlines: Deadlines {
                header_ms: settings.header_timeout_ms,
                body_ms: settings.body_timeout_ms,
                idle_ms: settings.idle_timeout_ms,
            },
        }
    }
}

/// Binds the listener on `addr`, with room for a burst of connections (see
/// `LISTEN_BACKLOG`).
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    // As the standard library's listener does: a restarted node can bind again at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// What every connection of a server shares.
struct Shared {
    /// hyper's HTTP/1.1 settings.
    http: hyper::server::conn::http1::Builder,
    /// The same, without keep-alive: a reserve connection serves one request.
    http_once: hyper::server::conn::http1::Builder,
    /// Open and refused connections, as `/metrics` and `/readyz` show them.
    connections: Arc<Connections>,
    clock: Clock,
    limits: Limits,
    answers: Answers,
    registry: Registry,
}

/// A server bound to its listener, not yet serving.
pub struct Server<A> {
    listener: TcpListener,
    app: A,
    shared: Arc<Shared>,
    /// Places under `server.max_connections`.
    slots: Arc<Semaphore>,
    /// Places under `server.reserved_connections`, once `slots` has none.
    reserve: Arc<Semaphore>,
    /// Places for lingering refusals.
    refusals: Arc<Semaphore>,
    /// When refusals were last logged (0: never), so a flood logs one line every few seconds.
    last_refusal_warning: AtomicU64,
}

impl<A: App> Server<A> {
    /// Serves `app` on `listener` within `limits`, reporting connections to `connections`.
    pub async fn new(
        listener: TcpListener,
        app: A,
        limits: Limits,
        connections: Arc<Connections>,
    ) -> Self {
        let mut http = hyper::server::conn::http1::Builder::new();
        // hyper's read buffer bounds a request head; its own refusal (431) is replaced by
        // the error shape on the socket.
        http.max_buf_size(limits.max_header_bytes);
        let mut http_once = http.clone();
        http_once.keep_alive(false);
        let slots = Arc::new(Semaphore::new(limits.max_connections));
        let reserve = Arc::new(Semaphore::new(limits.reserved_connections));
        connections.set_max(limits.max_connections);
        Self {
            listener,
            app,
            slots,
            reserve,
            refusals: Arc::new(Semaphore::new(LINGERING_REFUSALS)),
            last_refusal_warning: AtomicU64::new(0),
            shared: Arc::new(Shared {
                http,
                http_once,
                connections,
                clock: Clock::new(),
                limits,
                answers: Answers::render().await,
                registry: Registry::new(),
            }),
        }
    }

    /// Accepts and serves connections until `shutdown` turns true; then closes the listener,
    /// tells every connection to finish its request in flight, and returns once they have
    /// all closed. Upgraded sockets (WebSockets) are not waited for: they close with the
    /// WebSocket hub.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let shared = self.shared.clone();
        let serving = async move {
            let stop = async {
                let _ = shutdown.wait_for(|stop| *stop).await;
            };
            tokio::pin!(stop);
            loop {
                tokio::select! {
                    biased;
                    () = &mut stop => break,
                    accepted = self.listener.accept() => match accepted {
                        Ok((stream, remote)) => self.admit(stream, remote),
                        Err(e) => accept_failed(&e).await,
                    },
                }
            }
            drop(self.listener);
            self.shared.registry.drain_all();
            self.shared.registry.emptied().await;
        };
        tokio::select! {
            () = serving => {}
            () = shared.registry.sweep(&shared.clock, shared.limits.deadlines) => {}
        }
    }

    /// Serves a new connection, from the reserve past the limit (if its first request is one
    /// the reserve serves), or refuses it.
    fn admit(&self, stream: TcpStream, remote: SocketAddr) {
        // Answers, offers and pushes are small writes that must leave at once: without this,
        // a write made while the client has not yet acknowledged the last one waits for that
        // acknowledgement, which the client may delay by tens of milliseconds.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY could not be set");
        }
        let connections = &self.shared.connections;
        let slot = match self.slots.clone().try_acquire_owned() {
            Ok(place) => Slot::new(place, connections.opened(false), false),
            Err(_) => {
                self.warn_full();
                match self.reserve.clone().try_acquire_owned() {
                    Ok(place) => Slot::new(place, connections.opened(true), true),
                    Err(_) => {
                        self.refuse(stream);
                        return;
                    }
                }
            }
        };
        let shared = self.shared.clone();
        let app = self.app.clone();
        let track = Arc::new(Track::new(shared.clock.now()));
        let registered = Registered {
            id: shared.registry.insert(track.clone()),
            shared: shared.clone(),
        };
        tokio::spawn(async move {
            let mut stream = stream;
            let head = if slot.reserve {
                // The operators' clients send their request at once: a silent connection must
                // not hold a place of the reserve for the whole header deadline.
                tokio::time::timeout(LINGER, first_head(&mut stream, &track, &shared))
                    .await
                    .ok()
                    .flatten()
            } else {
                first_head(&mut stream, &track, &shared).await
            };
            let Some(head) = head else {
                return;
            };
            let builder = if slot.reserve {
                if !reserve::serves(&head) {
                    shared.connections.refused(Refusal::NodeFull);
                    answers::linger(stream, shared.answers.too_many_connections(), slot).await;
                    return;
                }
                &shared.http_once
            } else {
                &shared.http
            };
            let io = EdgeIo::new(stream, head, track.clone(), shared.clone(), slot);
            let service = EdgeService::new(app, track.clone(), shared.clone(), remote);
            let http = builder
                .serve_connection(TokioIo::new(io), service)
                .with_upgrades();
            // Boxed, so that the task of a connection still waiting for its head stays small.
            Box::pin(Guarded::new(http, track, shared)).await;
            drop(registered);
        });
    }

    /// Logs that the general pool is full, at most once every few seconds.
    fn warn_full(&self) {
        let now = self.shared.clock.now();
        let last = self.last_refusal_warning.load(Relaxed);
        if last == 0 || now.saturating_sub(last) >= REFUSAL_WARNING_EVERY_MS {
            self.last_refusal_warning.store(now.max(1), Relaxed);
            tracing::warn!(
                max_connections = self.shared.limits.max_connections,
                reserved_connections = self.shared.limits.reserved_connections,
                "server.max_connections reached: refusing connections but the operators' \
                 (probes, metrics, dashboard, studio API), served from the reserve"
            );
        }
    }

    /// Answers 503 in the error shape once the request begins (a liveness probe 200: the
    /// process answers), if few refusals are already lingering; otherwise closes at once.
    fn refuse(&self, stream: TcpStream) {
        self.shared.connections.refused(Refusal::NodeFull);
        if let Ok(place) = self.refusals.clone().try_acquire_owned() {
            tokio::spawn(answers::refuse(stream, self.shared.answers.clone(), place));
        }
    }
}

/// A connection's place, in the general pool or in the reserve, given back when the
/// connection ends (an upgraded socket's when the socket closes), and counted in `/metrics`
/// while it is held.
struct Slot {
    _place: OwnedSemaphorePermit,
    _open: OpenConnection,
    /// Taken from the reserve: the connection serves one request the reserve serves.
    reserve: bool,
}

impl Slot {
    fn new(place: OwnedSemaphorePermit, open: OpenConnection, reserve: bool) -> Self {
        Self {
            _place: place,
            _open: open,
            reserve,
        }
    }
}

/// A connection's entry in the registry, removed when its task ends in any way.
struct Registered {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.shared.registry.remove(self.id);
    }
}

/// After a failed `accept`: a connection the client abandoned is nothing; anything else
/// (out of descriptors, out of memory) is waited out briefly so the loop does not spin.
async fn accept_failed(e: &std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::warn!(error = %e, "accepting a connection failed; retrying in 100 ms");
    tokio::time::sleep(Duration::from_millis(100)).await;
}
