//! The harness: a private engine on port 0 with the production bootstrap ([`spawn_app`] and
//! its variants), on the embedded store (SQLite, in a temporary file of its own or in
//! memory), on real Redis or on a real Redis Cluster, and dashboard tokens for it. Requests
//! are in `http.rs`, fixtures in `fixtures.rs`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use offer_engine::auth::JwtCodec;
pub use offer_engine::auth::Role;
use offer_engine::config::{Settings, StoreSettings};
use offer_engine::startup::{self, Running};
use reqwest::Client;

/// The JWT secret of test servers.
pub const SECRET: &str = "test-secret-test-secret-test-secret-0123456789";

/// Which store a test server uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded store as it runs by default: SQLite in a file (a fresh temporary one per
    /// server, removed with it).
    Embedded,
    /// The embedded store in memory (`store.path = ":memory:"`).
    InMemory,
    /// Real Redis (a private key prefix per server).
    Redis,
    /// A real three-master Redis Cluster (a private key prefix per server).
    RedisCluster,
}

impl Backend {
    /// Whether several servers can share this backend's data (the two-node tests).
    pub fn shared(self) -> bool {
        matches!(self, Backend::Redis | Backend::RedisCluster)
    }
}

/// A fresh, empty temporary folder for one test's files; remove it with [`remove_scratch`].
pub fn scratch_dir() -> PathBuf {
    let dir = scratch_root().join(uuid::Uuid::new_v4().simple().to_string());
    std::fs::create_dir_all(&dir).expect("create a temporary folder");
    dir
}

/// Where every [`scratch_dir`] lives.
fn scratch_root() -> PathBuf {
    std::env::temp_dir().join("offer-engine-tests")
}

/// Removes the [`scratch_dir`] holding `file`, if it is one (a store path a test chose
/// itself is left alone).
pub fn remove_scratch(file: &Path) {
    if let Some(dir) = file.parent()
        && dir.parent() == Some(scratch_root().as_path())
    {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A running test server; dropping it shuts the server down.
pub struct TestApp {
    pub addr: SocketAddr,
    pub client: Client,
    pub running: Running,
    pub codec: JwtCodec,
    /// Admin token of studio `studio-a`, the token every request carries unless told otherwise.
    pub admin: String,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let _ = self.running.shutdown.send(true);
        remove_scratch(&self.running.state.services.settings.store.path);
    }
}

/// Test settings: loopback port 0, two shards, [`SECRET`]; on the embedded store a fresh
/// temporary file (or memory); on Redis or the cluster, the shared test server or cluster
/// and a fresh key prefix.
pub fn settings(backend: Backend) -> Settings {
    let mut s = Settings::load(None).expect("default settings load");
    s.server.bind = "127.0.0.1:0".parse().expect("addr");
    s.server.shards = 2;
    s.auth.jwt_secret = SECRET.into();
    let url = match backend {
        Backend::Embedded => {
            s.store.path = scratch_dir().join("offer-engine.db");
            // A test binary runs dozens of debug-built servers at once, each writing and
            // syncing its own SQLite file on one shared disk (and the dashboard's beside a
            // browser each): a write queued there once waited more than the default second
            // and was answered 503. The longest timeout the engine allows keeps such a wait
            // an answer; what a store that does not answer gets is tested on Redis.
            s.store.timeout_ms = 2000;
            return s;
        }
        Backend::InMemory => {
            s.store.path = StoreSettings::IN_MEMORY.into();
            return s;
        }
        Backend::Redis => super::redis_harness::redis_url(),
        Backend::RedisCluster => super::redis_harness::cluster_url(),
    };
    s.store.redis_url = url;
    s.store.key_prefix = super::redis_harness::unique_prefix();
    s
}

/// The backend of `spawn_app()`, chosen with `OFFER_TEST_STORE`: `sqlite` (the default: the
/// embedded store in a temporary file, as the engine runs by default), `memory` (the
/// embedded store in memory), `redis` or `redis-cluster`. CI runs the HTTP suite on each.
pub fn default_backend() -> Backend {
    match std::env::var("OFFER_TEST_STORE").as_deref() {
        Err(_) | Ok("" | "sqlite") => Backend::Embedded,
        Ok("memory") => Backend::InMemory,
        Ok("redis") => Backend::Redis,
        Ok("redis-cluster") => Backend::RedisCluster,
        Ok(other) => panic!(
            "OFFER_TEST_STORE={other}: use sqlite (the default), memory, redis or redis-cluster"
        ),
    }
}

/// The backend of the tests that need data shared between servers (two engine nodes, the
/// Redis conformance cases): the Redis Cluster when `OFFER_TEST_STORE=redis-cluster`,
/// otherwise a single Redis.
pub fn shared_backend() -> Backend {
    match default_backend() {
        Backend::RedisCluster => Backend::RedisCluster,
        _ => Backend::Redis,
    }
}

/// A server on the [`default_backend`].
pub async fn spawn_app() -> TestApp {
    spawn_app_on(default_backend()).await
}

/// A server on `backend`.
pub async fn spawn_app_on(backend: Backend) -> TestApp {
    spawn_with(settings(backend)).await
}

/// A server on `backend` whose settings `tune` changes first.
pub async fn spawn_tuned(backend: Backend, tune: impl FnOnce(&mut Settings)) -> TestApp {
    let mut s = settings(backend);
    tune(&mut s);
    spawn_with(s).await
}

/// A server on `backend` that pings every `ping_s` seconds and closes a socket idle for
/// `idle_s`; `hello_s`, when given, is the deadline for the hello (else the default).
pub async fn spawn_heartbeat(
    backend: Backend,
    ping_s: u64,
    idle_s: u64,
    hello_s: Option<u64>,
) -> TestApp {
    spawn_tuned(backend, move |s| {
        s.websocket.ping_interval_s = ping_s;
        s.websocket.idle_timeout_s = idle_s;
        if let Some(hello_s) = hello_s {
            s.websocket.hello_timeout_s = hello_s;
        }
    })
    .await
}

/// A server with exactly `settings`.
pub async fn spawn_with(settings: Settings) -> TestApp {
    let codec = JwtCodec::new(
        SECRET.as_bytes(),
        &settings.auth.jwt_issuer,
        &settings.auth.jwt_audience,
    );
    let running = tokio::task::spawn_blocking(move || startup::spawn(settings))
        .await
        .expect("join")
        .expect("server starts");
    let admin = codec
        .mint("alice", "studio-a", Role::Admin, chrono::Duration::hours(1))
        .expect("mint");
    TestApp {
        addr: running.addr,
        client: Client::new(),
        running,
        codec,
        admin,
    }
}

impl TestApp {
    /// Another node with this server's settings, so on the same Redis (or cluster) key
    /// space: a second instance of the service.
    pub async fn spawn_peer(&self) -> TestApp {
        spawn_with(self.running.state.services.settings.clone()).await
    }

    /// A dashboard token for `role` in `studio`, valid for an hour.
    pub fn token(&self, studio: &str, role: Role) -> String {
        self.codec
            .mint("user", studio, role, chrono::Duration::hours(1))
            .expect("mint")
    }
}
