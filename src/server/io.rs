//! The socket as hyper sees it: a TCP stream that reports what passes through it to the
//! connection's [`Track`], and that puts the documented error shape in place of hyper's own
//! answers.
//!
//! hyper answers a request head it cannot parse (a malformed request line or header, a
//! `Content-Length` that is not a number, bytes of a TLS handshake, a head over the size
//! limit) by itself, with an empty body, and offers no hook to change that answer. It writes
//! nothing else while no request of the connection is with the router: so whatever it writes
//! then (see [`Track::between_requests`]) is such an answer. This stream reads the status
//! hyper chose, sends the error-shaped answer for it instead, and reports hyper's bytes as
//! written. hyper closes the connection after such an answer; the socket then lingers (see
//! [`linger`]) so the client reads the answer.
//!
//! It first reads back the bytes of the first head, which the edge read before hyper took
//! over ([`super::head`]). It also holds the connection's slot under `server.max_connections`
//! (or in the reserve), so that an upgraded socket (a WebSocket, which outlives the HTTP connection) keeps counting
//! until it closes.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

use super::answers::linger;
use super::track::Track;
use super::{Shared, Slot};

/// Whether this connection's socket carried an answer of the edge instead of hyper's.
enum OwnAnswer {
    /// No: bytes pass through.
    None,
    /// Yes, `sent` bytes of `answer` so far.
    Sending { answer: Bytes, sent: usize },
    /// Yes, all of it; what hyper writes next is discarded.
    Sent,
}

/// A client's TCP stream under the edge's watch (see the module documentation).
pub(super) struct EdgeIo {
    /// Always `Some` until dropped; taken by [`Drop`] when the socket must linger.
    stream: Option<TcpStream>,
    /// Bytes the edge read before hyper took over (the first head), read back first.
    replay: Vec<u8>,
    /// How much of `replay` was read back.
    replayed: usize,
    track: Arc<Track>,
    shared: Arc<Shared>,
    /// The connection's place under `server.max_connections` (or in the reserve).
    slot: Option<Slot>,
    own_answer: OwnAnswer,
    /// The connection was upgraded (a WebSocket), as the track said once: an upgrade is for
    /// good and the track has nothing more to learn from the socket's reads, writes and
    /// flushes, so they no longer read it. A broadcast writes to thousands of sockets, and
    /// each track is one more place in memory per socket to fetch.
    upgraded: bool,
}

impl EdgeIo {
    /// Watches `stream`, which holds `slot`, and from which `replay` was already read.
    pub(super) fn new(
        stream: TcpStream,
        replay: Vec<u8>,
        track: Arc<Track>,
        shared: Arc<Shared>,
        slot: Slot,
    ) -> Self {
        Self {
            stream: Some(stream),
            replay,
            replayed: 0,
            track,
            shared,
            slot: Some(slot),
            own_answer: OwnAnswer::None,
            upgraded: false,
        }
    }

    /// Whether the connection was upgraded; reads the track only until it was.
    fn upgraded(&mut self) -> bool {
        if !self.upgraded && self.track.upgraded() {
            self.upgraded = true;
        }
        self.upgraded
    }

    fn stream(&mut self) -> io::Result<Pin<&mut TcpStream>> {
        self.stream
            .as_mut()
            .map(Pin::new)
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))
    }

    /// Whether the bytes hyper writes now are its own answer to an unparsable head.
    fn answering_instead(&self) -> bool {
        !matches!(self.own_answer, OwnAnswer::None) || self.track.between_requests()
    }

    /// Sends the edge's answer in place of hyper's `len` bytes, which begin with `head`, and
    /// reports them written once it has left.
    fn poll_answer_instead(
        &mut self,
        cx: &mut Context<'_>,
        head: &[u8],
        len: usize,
    ) -> Poll<io::Result<usize>> {
        if let OwnAnswer::None = self.own_answer {
            // "HTTP/1.1 400 ..."
            let status = head
                .get(9..12)
                .and_then(|s| std::str::from_utf8(s).ok())
                .and_then(|s| s.parse::<u16>().ok())
                .unwrap_or(400);
            let overflowed = self
                .track
                .line_overflowed(self.shared.limits.max_header_bytes);
            tracing::debug!(status, "answering a request head hyper could not parse");
            self.own_answer = OwnAnswer::Sending {
                answer: self.shared.answers.instead_of(status, overflowed),
                sent: 0,
            };
        }
        loop {
            let (answer, sent) = match &mut self.own_answer {
                OwnAnswer::Sending { answer, sent } => (answer.clone(), *sent),
                OwnAnswer::Sent | OwnAnswer::None => return Poll::Ready(Ok(len)),
            };
            if sent == answer.len() {
                self.own_answer = OwnAnswer::Sent;
                continue;
            }
            let n = std::task::ready!(self.stream()?.poll_write(cx, &answer[sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.own_answer = OwnAnswer::Sending {
                answer,
                sent: sent + n,
            };
        }
    }

    /// Reports a write's outcome to the track.
    fn noted(&self, result: Poll<io::Result<usize>>) -> Poll<io::Result<usize>> {
        self.track
            .on_write(self.shared.clock.now(), result.is_pending());
        result
    }
}

impl AsyncRead for EdgeIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.replayed < this.replay.len() {
            // Already reported to the track when the edge read them.
            let n = buf.remaining().min(this.replay.len() - this.replayed);
            buf.put_slice(&this.replay[this.replayed..this.replayed + n]);
            this.replayed += n;
            if this.replayed == this.replay.len() {
                this.replay = Vec::new();
                this.replayed = 0;
            }
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let result = this.stream()?.poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = result
            && !this.upgraded()
        {
            this.track
                .on_read(this.shared.clock.now(), &buf.filled()[before..]);
        }
        result
    }
}

impl AsyncWrite for EdgeIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.upgraded() {
            return this.stream()?.poll_write(cx, buf);
        }
        if this.answering_instead() {
            return this.poll_answer_instead(cx, buf, buf.len());
        }
        let result = this.stream()?.poll_write(cx, buf);
        this.noted(result)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.upgraded() {
            return this.stream()?.poll_write_vectored(cx, bufs);
        }
        if this.answering_instead() {
            let head = bufs.iter().find(|b| !b.is_empty()).map_or(&[][..], |b| b);
            let len = bufs.iter().map(|b| b.len()).sum();
            return this.poll_answer_instead(cx, head, len);
        }
        let result = this.stream()?.poll_write_vectored(cx, bufs);
        this.noted(result)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.as_ref().is_some_and(|s| s.is_write_vectored())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.upgraded() {
            this.track.on_flush(this.shared.clock.now());
        }
        this.stream()?.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let OwnAnswer::Sending { .. } = this.own_answer {
            std::task::ready!(this.poll_answer_instead(cx, &[], 0))?;
        }
        this.stream()?.poll_shutdown(cx)
    }
}

impl Drop for EdgeIo {
    fn drop(&mut self) {
        let unsent = match &self.own_answer {
            OwnAnswer::None => return,
            OwnAnswer::Sending { answer, sent } => answer.slice(*sent..),
            OwnAnswer::Sent => Bytes::new(),
        };
        let (Some(stream), Ok(runtime)) =
            (self.stream.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        runtime.spawn(linger(stream, unsent, self.slot.take()));
    }
}
