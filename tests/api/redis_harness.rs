//! A real Redis for the integration tests.
//!
//! With `REDIS_URL` set, the tests use that server. Otherwise the test process starts one
//! private `redis-server` (no persistence) on a free loopback port the first time a test asks
//! for it, and the server stops when the test process exits. Every test gets its own key
//! prefix, so tests never see each other's data. A missing `redis-server` is a failure, never
//! a silent skip.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The shared server: its URL, its supervising shell, and the pipe whose closing (at process
/// exit) stops it.
struct Shared {
    url: String,
    _supervisor: Option<Child>,
    _lifeline: Option<ChildStdin>,
}

static SHARED: OnceLock<Shared> = OnceLock::new();

/// The URL of the Redis the tests use (started on first use unless `REDIS_URL` is set).
pub fn redis_url() -> String {
    SHARED
        .get_or_init(|| match std::env::var("REDIS_URL") {
            Ok(url) if !url.is_empty() => Shared {
                url,
                _supervisor: None,
                _lifeline: None,
            },
            _ => start_shared(),
        })
        .url
        .clone()
}

/// A key prefix no other test uses.
pub fn unique_prefix() -> String {
    format!("test-{}", uuid::Uuid::new_v4().simple())
}

/// A free loopback port (free when this returns; good enough for tests).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("no free loopback port")
}

/// Panics with instructions when `redis-server` is missing.
fn require_redis_server() {
    let found = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(
        found,
        "redis-server is not on PATH: install it (`apt-get install redis-server`) \
         or point the tests at a running Redis with REDIS_URL=redis://host:port"
    );
}

/// The `redis-server` arguments of a throwaway server on `port`.
fn server_args(port: u16) -> Vec<String> {
    [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
    ]
    .iter()
    .map(|arg| (*arg).to_owned())
    .collect()
}

/// Starts the shared server under a shell that kills it once our stdin pipe closes, which
/// happens when the test process exits however it exits.
fn start_shared() -> Shared {
    require_redis_server();
    let port = free_port();
    let args = server_args(port)
        .iter()
        .map(|arg| format!("'{arg}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let script = format!("redis-server {args} >/dev/null 2>&1 & pid=$!; cat >/dev/null; kill $pid");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start redis-server");
    let lifeline = child.stdin.take();
    wait_for_ping(port);
    Shared {
        url: format!("redis://127.0.0.1:{port}/"),
        _supervisor: Some(child),
        _lifeline: lifeline,
    }
}

/// A private server for one test (to kill it mid-run); returns it and its port.
pub fn start_private() -> (Child, u16) {
    let port = free_port();
    (start_on(port), port)
}

/// Starts a private server on `port` (again, after a test killed the previous one).
pub fn start_on(port: u16) -> Child {
    require_redis_server();
    let child = Command::new("redis-server")
        .args(server_args(port))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start redis-server");
    wait_for_ping(port);
    child
}

/// Waits until the server on `port` answers PING, or panics after 10 seconds.
fn wait_for_ping(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if ping(port) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("redis-server on port {port} did not answer PING within 10 s");
}

fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut reply = [0_u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}
