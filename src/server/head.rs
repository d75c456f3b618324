//! A new connection's wait for its first request head, before hyper is involved.
//!
//! hyper gives every connection a read and a write buffer of 8 KiB each as soon as it serves
//! it. A client that connects and trickles a head (or sends nothing) would hold those 16 KiB
//! for the whole header deadline, and memory the allocator has handed out that way is slow to
//! go back to the system. So until the first head is whole, the edge reads the socket itself
//! and keeps only the bytes received; hyper takes over, with those bytes replayed, once the
//! head is complete, is certain to be refused (hyper then answers it), or reaches
//! `server.max_header_bytes`.

use std::future::poll_fn;
use std::pin::Pin;
use std::task::Poll;

use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::TcpStream;

use super::Shared;
use super::track::{DRAIN, KILL, Track};

/// Bytes read from the socket at a time while waiting (on the stack of one poll only).
const CHUNK: usize = 2048;

/// Headers a head may have before hyper refuses it (hyper's own limit).
const MAX_HEADERS: usize = 100;

/// Reads the first request head of `stream`. `Some(bytes)`: hand the connection, with these
/// bytes first, to hyper. `None`: the connection is over (the client left, its header
/// deadline passed, or the server is shutting down).
pub(super) async fn first_head(
    stream: &mut TcpStream,
    track: &Track,
    shared: &Shared,
) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    poll_fn(|cx| {
        let signals = track.take_signals(cx.waker());
        if signals & DRAIN != 0
            || (signals & KILL != 0 && track.expired(shared.clock.now(), &shared.limits.deadlines))
        {
            return Poll::Ready(None);
        }
        loop {
            let mut chunk = [0u8; CHUNK];
            let mut buf = ReadBuf::new(&mut chunk);
            match Pin::new(&mut *stream).poll_read(cx, &mut buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(_)) => return Poll::Ready(None),
                Poll::Ready(Ok(())) if buf.filled().is_empty() => return Poll::Ready(None),
                Poll::Ready(Ok(())) => {
                    track.on_read(shared.clock.now(), buf.filled());
                    head.extend_from_slice(buf.filled());
                    if decided(&head, shared.limits.max_header_bytes) {
                        return Poll::Ready(Some(std::mem::take(&mut head)));
                    }
                }
            }
        }
    })
    .await
}

/// Whether hyper can decide on `head`: it is complete, malformed, or as long as a head may be.
fn decided(head: &[u8], max_bytes: usize) -> bool {
    if head.len() >= max_bytes {
        return true;
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    !matches!(
        httparse::Request::new(&mut headers).parse(head),
        Ok(httparse::Status::Partial)
    )
}

#[cfg(test)]
mod tests {
    use super::decided;

    #[test]
    fn a_head_is_decided_when_complete_malformed_or_at_the_limit() {
        assert!(!decided(b"", 100));
        assert!(!decided(b"GET /healthz HTTP/1.1\r\nHost: x\r\n", 100));
        assert!(decided(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 100));
        // A TLS handshake on the plain port.
        assert!(decided(&[0x16, 0x03, 0x01, 0x00, 0xa5], 100));
        assert!(decided(b"GET /healthz HTTP/1.1\r\nBad Header\r\n", 100));
        assert!(decided(&[b'a'; 100], 100));
        let many: String = (0..=100).map(|i| format!("X-{i}: v\r\n")).collect();
        assert!(decided(
            format!("GET / HTTP/1.1\r\n{many}").as_bytes(),
            1 << 20
        ));
    }
}
