//! Requests written byte by byte on a plain TCP socket, for what an HTTP client library will
//! not send (a half-sent head, a short body, a malformed header, a TLS handshake on the plain
//! port) and for watching the server close a connection.

use std::net::SocketAddr;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longest wait for the server to answer or close: a hang guard, far above every deadline
/// the tests configure.
pub const HANG_GUARD: Duration = Duration::from_secs(30);

/// An answer read off the socket.
#[derive(Debug)]
pub struct RawAnswer {
    pub status: u16,
    /// Header names in lower case, with their values.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl RawAnswer {
    /// The value of header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Asserts the documented error shape with `code` and returns the body.
    #[track_caller]
    pub fn assert_error(&self, status: u16, code: &str) -> Value {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(
            self.header("content-type"),
            Some("application/json"),
            "{self:?}"
        );
        let body: Value = serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("error body is JSON ({e}): {self:?}"));
        assert_eq!(body["error"]["code"], code, "{body}");
        assert!(body["error"]["message"].is_string(), "{body}");
        assert!(body["error"]["details"].is_object(), "{body}");
        body
    }
}

/// A new connection to `addr`.
pub async fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.expect("connect")
}

/// Sends `bytes` on a new connection and reads everything until the server closes it.
pub async fn exchange(addr: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    let mut stream = connect(addr).await;
    // The server may answer and stop reading before all of a long request is written.
    let _ = stream.write_all(bytes).await;
    read_until_closed(&mut stream).await
}

/// Reads until the server closes the connection (a reset counts as closed) and returns what
/// it sent; fails the test if it stays open past [`HANG_GUARD`].
pub async fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let read = tokio::time::timeout(HANG_GUARD, async {
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the server kept the connection open (received so far: {:?})",
        String::from_utf8_lossy(&got)
    );
    got
}

/// Reads exactly one answer (framed by its `Content-Length`) from a connection that stays
/// open.
pub async fn read_one(stream: &mut TcpStream) -> RawAnswer {
    let mut got = Vec::new();
    let answer = tokio::time::timeout(HANG_GUARD, async {
        let mut buf = [0u8; 8192];
        loop {
            if let Some(answer) = parse_complete(&got) {
                return answer;
            }
            let n = stream.read(&mut buf).await.expect("read");
            assert!(
                n > 0,
                "closed mid-answer: {:?}",
                String::from_utf8_lossy(&got)
            );
            got.extend_from_slice(&buf[..n]);
        }
    })
    .await;
    answer.expect("an answer before the hang guard")
}

/// Splits `raw` into its answers, each framed by its `Content-Length`.
pub fn parse_all(raw: &[u8]) -> Vec<RawAnswer> {
    let mut answers = Vec::new();
    let mut rest = raw;
    while !rest.is_empty() {
        let (answer, used) = parse_prefix(rest)
            .unwrap_or_else(|| panic!("not an HTTP answer: {:?}", String::from_utf8_lossy(rest)));
        answers.push(answer);
        rest = &rest[used..];
    }
    answers
}

/// The one answer in `raw`.
pub fn parse_single(raw: &[u8]) -> RawAnswer {
    let mut all = parse_all(raw);
    assert_eq!(all.len(), 1, "{:?}", String::from_utf8_lossy(raw));
    all.remove(0)
}

fn parse_complete(raw: &[u8]) -> Option<RawAnswer> {
    parse_prefix(raw).map(|(answer, _)| answer)
}

/// The answer at the start of `raw` and its length in bytes, once all of it is there.
fn parse_prefix(raw: &[u8]) -> Option<(RawAnswer, usize)> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = std::str::from_utf8(&raw[..end]).expect("ASCII head");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("status line");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("status line {status_line:?}"));
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (name, value) = l.split_once(':').expect("header line");
            (name.trim().to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse().expect("content-length"));
    let body = raw.get(end..end + length)?.to_vec();
    Some((
        RawAnswer {
            status,
            headers,
            body,
        },
        end + length,
    ))
}
