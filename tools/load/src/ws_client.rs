//! WebSocket clients in this process: many sessions of the SDK protocol (`svc.v1.json`), each
//! sending `hello` and waiting for `ready`, then reading on so the server may push to it.
//!
//! A [`Fleet`] is one set of such sockets. Each socket's reader task reports the instant it
//! receives a text frame carrying a chosen marker (for example `"type":"kill_switch"`), so a
//! broadcast can be timed until its last recipient. The same code talks to the engine and to
//! the bare baseline ([`crate::ws_baseline`]), which answers `hello` the same way.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::{SinkExt as _, StreamExt as _, TryStreamExt as _};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use offer_wire::socket::{ClientMessage, Numbered, ServerMessage};

/// The JSON subprotocol of the SDK.
pub const PROTOCOL: &str = offer_wire::socket::JSON_PROTOCOL;
/// How long one socket may take to connect and get `ready`.
const HELLO_TIMEOUT: Duration = Duration::from_secs(60);

/// One client socket.
pub type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Small client buffers: the tool holds up to tens of thousands of sockets.
fn client_config() -> WebSocketConfig {
    WebSocketConfig::default()
        .read_buffer_size(4096)
        .write_buffer_size(0)
        .max_write_buffer_size(1 << 20)
}

/// Opens one socket to `url` with `key` as bearer and the JSON subprotocol, sends `hello`
/// for `session_id`/`player_id`, and reads until `ready`.
pub async fn open(url: &str, key: &str, session_id: uuid::Uuid, player_id: &str) -> Result<Socket> {
    let attempt = async {
        let mut request = url
            .into_client_request()
            .with_context(|| format!("bad WebSocket URL {url}"))?;
        let headers = request.headers_mut();
        headers.insert(
            "authorization",
            HeaderValue::from_str(&format!("Bearer {key}")).context("bad SDK key")?,
        );
        headers.insert("sec-websocket-protocol", HeaderValue::from_static(PROTOCOL));
        let (mut ws, _) =
            tokio_tungstenite::connect_async_with_config(request, Some(client_config()), true)
                .await
                .with_context(|| format!("connecting to {url}"))?;
        let hello = serde_json::to_string(&ClientMessage::hello(session_id, player_id))
            .context("encoding hello")?;
        ws.send(Message::text(hello))
            .await
            .context("sending hello")?;
        loop {
            match ws.next().await {
                Some(Ok(Message::Text(text))) => {
                    let Numbered { message, .. } = serde_json::from_str(text.as_str())
                        .with_context(|| format!("not a server message: {}", text.as_str()))?;
                    match message {
                        ServerMessage::Ready { .. } => return Ok(ws),
                        ServerMessage::Error { code, message } => {
                            bail!("hello answered with an error: {code}: {message}")
                        }
                        _ => {}
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e).context("reading the answer to hello"),
                None => bail!("the server closed the socket before ready"),
            }
        }
    };
    tokio::time::timeout(HELLO_TIMEOUT, attempt)
        .await
        .with_context(|| format!("no ready within {HELLO_TIMEOUT:?}"))?
}

/// Opens `n` sockets, at most `concurrency` handshakes at a time; session `i` is player
/// `p<i>` with a fresh session id.
pub async fn open_many(url: &str, key: &str, n: usize, concurrency: usize) -> Result<Vec<Socket>> {
    futures::stream::iter(0..n)
        .map(|i| async move {
            open(url, key, uuid::Uuid::new_v4(), &format!("p{i}"))
                .await
                .with_context(|| format!("socket {i}"))
        })
        .buffer_unordered(concurrency.max(1))
        .try_collect()
        .await
}

/// A set of open sessions whose reader tasks report marked messages.
pub struct Fleet {
    size: usize,
    readers: JoinSet<()>,
    arrivals: mpsc::UnboundedReceiver<Instant>,
    alive: Arc<AtomicUsize>,
}

impl Fleet {
    /// Opens `n` sessions (see [`open_many`]) and starts reading on each; a text frame that
    /// contains `marker` is reported with the instant it was read.
    pub async fn connect(
        url: &str,
        key: &str,
        n: usize,
        concurrency: usize,
        marker: &'static str,
    ) -> Result<Self> {
        let sockets = open_many(url, key, n, concurrency).await?;
        Ok(Self::reading(sockets, marker))
    }

    /// Starts reading on sockets already open (see [`Fleet::connect`]).
    pub fn reading(sockets: Vec<Socket>, marker: &'static str) -> Self {
        let n = sockets.len();
        let (tx, arrivals) = mpsc::unbounded_channel();
        let alive = Arc::new(AtomicUsize::new(sockets.len()));
        let mut readers = JoinSet::new();
        for mut ws in sockets {
            let tx = tx.clone();
            let alive = Arc::clone(&alive);
            readers.spawn(async move {
                // Reading also answers the server's pings.
                while let Some(Ok(msg)) = ws.next().await {
                    if let Message::Text(text) = msg
                        && text.contains(marker)
                        && tx.send(Instant::now()).is_err()
                    {
                        break;
                    }
                }
                alive.fetch_sub(1, Ordering::Relaxed);
            });
        }
        Self {
            size: n,
            readers,
            arrivals,
            alive,
        }
    }

    /// Sockets still open.
    pub fn alive(&self) -> usize {
        self.alive.load(Ordering::Relaxed)
    }

    /// Forgets arrivals reported so far (for example from a previous round's stragglers).
    pub fn drain(&mut self) {
        while self.arrivals.try_recv().is_ok() {}
    }

    /// Waits until every socket has reported one arrival, or `timeout`; returns the time
    /// from `start` to the last arrival, or an error saying how many had it.
    pub async fn until_all(&mut self, start: Instant, timeout: Duration) -> Result<Duration> {
        let arrivals = self.arrivals_until_all(start, timeout).await?;
        Ok(arrivals.last().copied().unwrap_or_default())
    }

    /// As [`Fleet::until_all`], but returns every socket's time from `start` to its
    /// arrival, ascending.
    pub async fn arrivals_until_all(
        &mut self,
        start: Instant,
        timeout: Duration,
    ) -> Result<Vec<Duration>> {
        let mut times = Vec::with_capacity(self.size);
        let deadline = tokio::time::Instant::from_std(start + timeout);
        while times.len() < self.size {
            match tokio::time::timeout_at(deadline, self.arrivals.recv()).await {
                Ok(Some(at)) => times.push(at.saturating_duration_since(start)),
                Ok(None) | Err(_) => bail!(
                    "only {} of {} sockets received the message within {timeout:?} \
                     ({} still open)",
                    times.len(),
                    self.size,
                    self.alive()
                ),
            }
        }
        times.sort_unstable();
        Ok(times)
    }

    /// Closes every socket (by dropping it).
    pub async fn close(mut self) {
        self.readers.shutdown().await;
    }
}
