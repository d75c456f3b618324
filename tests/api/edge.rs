//! The HTTP edge, through a real socket: connections that never finish a head or a body, or
//! idle on keep-alive, are closed; heads hyper cannot parse are answered in the error shape;
//! past the connection limit a new connection is refused in the error shape, but for the
//! liveness probe, served from the reserve; a shutdown does not wait for slow clients.

use std::time::Duration;

use reqwest::StatusCode;
use tokio::io::AsyncWriteExt;

use super::helpers::{TestApp, default_backend, spawn_tuned};
use super::raw::{
    HANG_GUARD, connect, exchange, parse_all, parse_single, read_one, read_until_closed,
};

/// Deadline of the tests that wait for one: short, so they finish fast.
const SHORT_MS: u64 = 300;

/// A server whose three deadlines are [`SHORT_MS`].
async fn short_deadlines() -> TestApp {
    spawn_tuned(default_backend(), |s| {
        s.server.header_timeout_ms = SHORT_MS;
        s.server.body_timeout_ms = SHORT_MS;
        s.server.idle_timeout_ms = SHORT_MS;
    })
    .await
}

/// The server still answers an ordinary request.
async fn still_serves(app: &TestApp) {
    app.get("/healthz").no_token().expect(StatusCode::OK).await;
}

#[tokio::test]
async fn an_incomplete_head_is_closed_after_the_header_timeout() {
    let app = short_deadlines().await;
    let mut half_sent = connect(app.addr).await;
    half_sent
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("write");
    let mut silent = connect(app.addr).await;
    assert!(
        read_until_closed(&mut half_sent).await.is_empty(),
        "closed without an answer"
    );
    assert!(read_until_closed(&mut silent).await.is_empty());
    still_serves(&app).await;
}

#[tokio::test]
async fn a_short_body_is_closed_after_the_body_timeout() {
    let app = short_deadlines().await;
    let mut short = connect(app.addr).await;
    let head = format!(
        "POST /v1/games HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"name\": ",
        app.admin
    );
    short.write_all(head.as_bytes()).await.expect("write");
    assert!(
        read_until_closed(&mut short).await.is_empty(),
        "closed without an answer"
    );
    // Nothing of the half-sent game was created.
    let games = app.get_json("/v1/games").await;
    assert_eq!(games["games"].as_array().map(Vec::len), Some(0), "{games}");
    still_serves(&app).await;
}

#[tokio::test]
async fn a_kept_alive_connection_without_a_next_request_is_closed_after_the_idle_timeout() {
    let app = short_deadlines().await;
    let mut kept = connect(app.addr).await;
    for _ in 0..2 {
        kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("write");
        assert_eq!(read_one(&mut kept).await.status, 200);
    }
    assert!(read_until_closed(&mut kept).await.is_empty());
}

#[tokio::test]
async fn an_over_long_uri_answers_414_in_the_error_shape() {
    let app = spawn_tuned(default_backend(), |_| {}).await;
    let long = "a".repeat(100 * 1024);
    for target in [format!("/healthz?q={long}"), format!("/v1/games/{long}")] {
        let raw = exchange(
            app.addr,
            format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes(),
        )
        .await;
        let answer = parse_single(&raw);
        answer.assert_error(414, "uri_too_long");
        assert_eq!(answer.header("connection"), Some("close"));
    }
    still_serves(&app).await;
}

#[tokio::test]
async fn a_head_over_the_limit_answers_431_in_the_error_shape() {
    let app = spawn_tuned(default_backend(), |_| {}).await;
    let big_header = format!("X-Big: {}\r\n", "b".repeat(20 * 1024));
    let many_headers: String = (0..150).map(|i| format!("X-H{i}: v\r\n")).collect();
    for headers in [big_header, many_headers] {
        let raw = exchange(
            app.addr,
            format!("GET /healthz HTTP/1.1\r\nHost: x\r\n{headers}\r\n").as_bytes(),
        )
        .await;
        parse_single(&raw).assert_error(431, "headers_too_large");
    }
}

#[tokio::test]
async fn malformed_http_answers_400_in_the_error_shape() {
    let app = spawn_tuned(default_backend(), |_| {}).await;
    // The start of a TLS 1.2 ClientHello, as a client configured for https sends it.
    let mut client_hello = vec![
        0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03,
    ];
    client_hello.extend_from_slice(&[0x42; 32]);
    for request in [
        b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n".to_vec(),
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"
            .to_vec(),
        b"GET /healthz HTTP/1.1\r\nBad Header\r\n\r\n".to_vec(),
        b"G\x01T / HTTP/1.1\r\n\r\n".to_vec(),
        client_hello,
    ] {
        let raw = exchange(app.addr, &request).await;
        parse_single(&raw).assert_error(400, "bad_request");
    }
    still_serves(&app).await;
}

#[tokio::test]
async fn a_malformed_head_after_a_kept_alive_answer_is_answered_in_the_error_shape() {
    let app = spawn_tuned(default_backend(), |_| {}).await;
    let good = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    let bad = b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n";
    // One after the other on a kept-alive connection...
    let mut kept = connect(app.addr).await;
    kept.write_all(good).await.expect("write");
    assert_eq!(read_one(&mut kept).await.status, 200);
    kept.write_all(bad).await.expect("write");
    parse_single(&read_until_closed(&mut kept).await).assert_error(400, "bad_request");
    // ...and pipelined in one write.
    let raw = exchange(app.addr, &[&good[..], &good[..], &bad[..]].concat()).await;
    let answers = parse_all(&raw);
    assert_eq!(answers.len(), 3, "{answers:?}");
    assert_eq!((answers[0].status, answers[1].status), (200, 200));
    answers[2].assert_error(400, "bad_request");
}

#[tokio::test]
async fn past_the_connection_limit_a_new_connection_is_refused_in_the_error_shape() {
    let app = spawn_tuned(default_backend(), |s| s.server.max_connections = 3).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        let mut c = connect(app.addr).await;
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("write");
        assert_eq!(read_one(&mut c).await.status, 200);
        held.push(c);
    }
    // A player's request finds no place.
    let player = b"GET /v1/sdk/status/x HTTP/1.1\r\nHost: x\r\n\r\n";
    let refused = parse_single(&exchange(app.addr, player).await);
    refused.assert_error(503, "unavailable");
    assert_eq!(refused.header("retry-after"), Some("1"));
    let r = app.get("/v1/sdk/status/x").no_token().send().await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    // Liveness is still answered, from the reserve, which closes after its one request.
    let health =
        parse_single(&exchange(app.addr, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").await);
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(health.header("connection"), Some("close"));
    // A place freed is a place taken again.
    drop(held.pop());
    let served = tokio::time::timeout(HANG_GUARD, async {
        loop {
            let r = app.get("/v1/sdk/status/x").no_token().send().await;
            if r.status() != StatusCode::SERVICE_UNAVAILABLE {
                return r.status();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    // The router's own answer to a call without a key.
    assert_eq!(
        served.expect("a freed place is taken again"),
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn shutdown_closes_slow_clients_at_once_instead_of_waiting_for_the_grace_period() {
    let app = spawn_tuned(default_backend(), |s| {
        s.server.shutdown_grace_s = 600;
        s.server.header_timeout_ms = 600_000;
    })
    .await;
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut c = connect(app.addr).await;
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
        slow.push(c);
    }
    still_serves(&app).await;
    let _ = app.running.shutdown.send(true);
    // Neither deadline (ten minutes each) closes them within the hang guard: the shutdown does.
    for c in &mut slow {
        assert!(read_until_closed(c).await.is_empty());
    }
}

/// Every accepted connection has Nagle's algorithm off, so a small write (an answer, an
/// offer, a kill switch pushed to a socket) leaves at once instead of waiting for the client
/// to acknowledge the one before. The engine runs in this test's process: its end of the
/// connection is found among the process's sockets by its two addresses, and the option read
/// from it. Only descriptors that are sockets are duplicated (through a pidfd of this
/// process): closing a duplicate of a file would drop the process's locks on that file,
/// which other tests' SQLite stores hold.
#[tokio::test]
async fn accepted_connections_send_small_writes_at_once() {
    use rustix::io::Errno;
    use rustix::net::sockopt::tcp_nodelay;
    use rustix::net::{getpeername, getsockname};
    use rustix::process::{PidfdFlags, PidfdGetfdFlags, getpid, pidfd_getfd, pidfd_open};
    use std::net::SocketAddr;

    let app = spawn_tuned(default_backend(), |_| {}).await;
    let mut client = connect(app.addr).await;
    client
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("write");
    // Answered: the connection was accepted and admitted.
    assert_eq!(read_one(&mut client).await.status, 200);
    let client_addr = client.local_addr().expect("the client's address");
    let me = pidfd_open(getpid(), PidfdFlags::empty()).expect("a pidfd of this process");
    let mut engine_end = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd") {
        let Ok(entry) = entry else { continue };
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
        let Some(number) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if !is_socket {
            continue;
        }
        let fd = match pidfd_getfd(&me, number, PidfdGetfdFlags::empty()) {
            Ok(fd) => fd,
            // Closed since it was listed: not the engine's end, which the client keeps open.
            Err(Errno::BADF) => continue,
            Err(e) => panic!(
                "pidfd_getfd: {e}; this test reads the engine's socket through it, which needs \
                 Linux 5.6 or later and a seccomp profile that allows it"
            ),
        };
        let address =
            |a: Option<rustix::net::SocketAddrAny>| a.and_then(|a| SocketAddr::try_from(a).ok());
        let local = address(getsockname(&fd).ok());
        let peer = address(getpeername(&fd).ok().flatten());
        if local == Some(app.addr) && peer == Some(client_addr) {
            engine_end.push(tcp_nodelay(&fd).expect("TCP_NODELAY"));
        }
    }
    assert_eq!(
        engine_end,
        vec![true],
        "the engine's end of the connection has TCP_NODELAY set"
    );
}
