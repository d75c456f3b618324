//! The answers the edge writes on the socket itself, where no router runs: to a request head
//! hyper could not parse, and to a connection past the limit (and past the reserve).
//!
//! Each is the documented error shape, rendered once at start from its [`ApiError`] (so its
//! status, code, message and headers are decided in the one place every error is), then
//! sent as a complete HTTP/1.1 response with `Connection: close`. The one exception is the
//! liveness probe's answer to a connection with no place left even in the reserve: liveness
//! is that the process answers, so `GET /healthz` is answered 200 `{"status": "ok"}`, as its
//! route answers it, wherever it arrives.
//!
//! After such an answer the socket lingers: it stops writing, then reads and discards what
//! the client is still sending, for at most [`LINGER`]. Closing a socket with unread bytes
//! makes the kernel reset the connection, and a reset can destroy the answer before the
//! client reads it.

use std::time::Duration;

use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::ApiError;

/// Longest time a socket lingers after an answer of the edge.
pub(super) const LINGER: Duration = Duration::from_secs(2);

/// The liveness route's answer body (`GET /healthz`).
const ALIVE_BODY: &str = r#"{"status":"ok"}"#;

/// The request lines of a liveness probe, as the first bytes of a connection.
const PROBE_LINES: [&[u8]; 2] = [b"GET /healthz HTTP/1.", b"GET /healthz?"];

/// The rendered answers.
#[derive(Clone)]
pub(super) struct Answers {
    bad_request: Bytes,
    uri_too_long: Bytes,
    headers_too_large: Bytes,
    too_many_connections: Bytes,
    alive: Bytes,
}

impl Answers {
    /// Renders every answer.
    pub(super) async fn render() -> Self {
        Self {
            bad_request: render(ApiError::BadRequest(
                "the request is not well-formed HTTP/1.1".into(),
            ))
            .await,
            uri_too_long: render(ApiError::UriTooLong).await,
            headers_too_large: render(ApiError::HeadersTooLarge).await,
            too_many_connections: render(ApiError::TooManyConnections).await,
            alive: render(
                ([(CONTENT_TYPE, "application/json")], ALIVE_BODY.to_owned()).into_response(),
            )
            .await,
        }
    }

    /// The answer in place of hyper's own answer `status` to a head it could not parse.
    /// `line_overflowed`: the head was refused for its size before its request line ended,
    /// so the URI is what is too long.
    pub(super) fn instead_of(&self, status: u16, line_overflowed: bool) -> Bytes {
        match status {
            414 => self.uri_too_long.clone(),
            431 if line_overflowed => self.uri_too_long.clone(),
            431 => self.headers_too_large.clone(),
            // 400, and anything a later hyper might add: the head is not well-formed.
            _ => self.bad_request.clone(),
        }
    }

    /// The answer to a connection past `server.max_connections`.
    pub(super) fn too_many_connections(&self) -> Bytes {
        self.too_many_connections.clone()
    }

    /// The answer to a connection with no place at all whose first bytes are `first`: the
    /// liveness probe's own answer to a liveness probe, otherwise the refusal.
    fn to_refused(&self, first: &[u8]) -> Bytes {
        if PROBE_LINES.iter().any(|line| first.starts_with(line)) {
            self.alive.clone()
        } else {
            self.too_many_connections.clone()
        }
    }
}

/// `response` as a complete HTTP/1.1 response that closes the connection.
async fn render(response: impl IntoResponse) -> Bytes {
    let (parts, body) = response.into_response().into_parts();
    // An error body is a JSON document already in memory: reading it cannot fail.
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let mut out = Vec::with_capacity(256 + body.len());
    out.extend_from_slice(
        format!(
            "HTTP/1.1 {} {}\r\n",
            parts.status.as_u16(),
            parts.status.canonical_reason().unwrap_or("Error")
        )
        .as_bytes(),
    );
    for (name, value) in &parts.headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(
        format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&body);
    Bytes::from(out)
}

/// Refuses a connection past the limit and the reserve: waits (at most [`LINGER`]) for the
/// client's first bytes, then lingers with the refusal, or with the liveness answer when they
/// begin a liveness probe. An HTTP client that receives an answer before it has written its
/// request treats it as a protocol error instead of reading it, so the refusal is only
/// written once a request has begun to arrive.
pub(super) async fn refuse<S>(mut stream: TcpStream, answers: Answers, slot: S) {
    let mut first = [0u8; 1024];
    match tokio::time::timeout(LINGER, stream.read(&mut first)).await {
        Ok(Ok(n)) if n > 0 => linger(stream, answers.to_refused(&first[..n]), slot).await,
        // Closed, failed or silent: there is no one to answer.
        _ => drop(slot),
    }
}

/// Writes `unsent` (what is left of an answer), stops writing, then discards what the client
/// still sends until it closes or [`LINGER`] passes; `slot` is held until then.
pub(super) async fn linger<S>(mut stream: TcpStream, unsent: Bytes, slot: S) {
    let _ = tokio::time::timeout(LINGER, async {
        stream.write_all(&unsent).await?;
        stream.shutdown().await?;
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        Ok::<(), std::io::Error>(())
    })
    .await;
    drop(slot);
}
