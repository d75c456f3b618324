//! A real Redis and a real Redis Cluster for the integration tests.
//!
//! With `REDIS_URL` set, the tests use that server. Otherwise the test process starts one
//! private `redis-server` (no persistence) on a free loopback port the first time a test asks
//! for it, and the server stops when the test process exits. Likewise with
//! `REDIS_CLUSTER_URL` (any form `store.redis_url` accepts for a cluster) the tests use that
//! cluster, and otherwise the process starts a three-master cluster of `redis-server`s the
//! first time a test asks for one, stopped and removed when the process exits. Every test
//! gets its own key prefix, so tests never see each other's data. A missing `redis-server`
//! or `redis-cli` is a failure, never a silent skip.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
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
static SHARED_CLUSTER: OnceLock<Shared> = OnceLock::new();

/// The URL of the server in `cell`: the one `var` names if set, else one `start` starts on
/// first use.
fn shared_url(cell: &OnceLock<Shared>, var: &str, start: fn() -> Shared) -> String {
    cell.get_or_init(|| match std::env::var(var) {
        Ok(url) if !url.is_empty() => Shared {
            url,
            _supervisor: None,
            _lifeline: None,
        },
        _ => start(),
    })
    .url
    .clone()
}

/// The URL of the Redis the tests use (started on first use unless `REDIS_URL` is set).
pub fn redis_url() -> String {
    shared_url(&SHARED, "REDIS_URL", start_shared)
}

/// The seed URL (`redis+cluster://...`) of the Redis Cluster the tests use (started on first
/// use unless `REDIS_CLUSTER_URL` is set).
pub fn cluster_url() -> String {
    shared_url(&SHARED_CLUSTER, "REDIS_CLUSTER_URL", start_shared_cluster)
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

/// Panics with `missing` unless `bin --version` runs and succeeds.
fn require(bin: &str, missing: &str) {
    let found = Command::new(bin)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    assert!(found, "{missing}");
}

/// Panics with instructions when `redis-server` is missing.
fn require_redis_server() {
    require(
        "redis-server",
        "redis-server is not on PATH: install it (`apt-get install redis-server`) \
         or point the tests at a running Redis with REDIS_URL=redis://host:port",
    );
}

/// Panics with instructions when `redis-cli` (which forms the test cluster) is missing.
fn require_redis_cli() {
    require(
        "redis-cli",
        "redis-cli is not on PATH: install it (`apt-get install redis-tools`, or \
         `redis-server`, which brings it) or point the tests at a running Redis Cluster with \
         REDIS_CLUSTER_URL=redis+cluster://host:port,host:port",
    );
}

/// The `redis-server` arguments of a server on `port`: a throwaway one (no persistence), or
/// with `durable` the folder where it keeps an append-only file synced on every write.
fn server_args(port: u16, durable: Option<&std::path::Path>) -> Vec<String> {
    let mut args: Vec<String> = [
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
    ]
    .iter()
    .map(|arg| (*arg).to_owned())
    .collect();
    match durable {
        None => args.extend(["--appendonly".to_owned(), "no".to_owned()]),
        Some(dir) => args.extend([
            "--appendonly".to_owned(),
            "yes".to_owned(),
            "--appendfsync".to_owned(),
            "always".to_owned(),
            "--dir".to_owned(),
            dir.display().to_string(),
        ]),
    }
    args
}

/// How long a test cluster's nodes wait before declaring an unreachable peer failed: long
/// enough that the survivors keep serving their own slots while a test holds one node down.
const NODE_TIMEOUT: Duration = Duration::from_secs(60);

/// The `redis-server` arguments of a throwaway cluster node on `port`, keeping its cluster
/// state file in `dir`.
fn cluster_node_args(port: u16, dir: &std::path::Path, node_timeout: Duration) -> Vec<String> {
    let mut args = server_args(port, None);
    args.extend([
        "--cluster-enabled".to_owned(),
        "yes".to_owned(),
        "--cluster-config-file".to_owned(),
        format!("nodes-{port}.conf"),
        "--cluster-node-timeout".to_owned(),
        node_timeout.as_millis().to_string(),
        "--dir".to_owned(),
        dir.display().to_string(),
    ]);
    args
}

/// The arguments as one shell word each.
fn shell_words(args: &[String]) -> String {
    args.iter()
        .map(|arg| format!("'{arg}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `script` under a shell that reads our stdin pipe until it closes, which happens when
/// the test process exits however it exits, then runs `cleanup`.
fn supervise(script: &str, cleanup: &str) -> (Child, Option<ChildStdin>) {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("{script}\ncat >/dev/null\n{cleanup}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start sh to supervise redis-server");
    let lifeline = child.stdin.take();
    (child, lifeline)
}

/// Starts the shared server under a supervising shell that kills it at process exit.
fn start_shared() -> Shared {
    require_redis_server();
    let port = free_port();
    let args = shell_words(&server_args(port, None));
    let (child, lifeline) = supervise(
        &format!("redis-server {args} >/dev/null 2>&1 & pid=$!"),
        "kill $pid",
    );
    wait_for_ping(port);
    Shared {
        url: format!("redis://127.0.0.1:{port}/"),
        _supervisor: Some(child),
        _lifeline: lifeline,
    }
}

/// Starts the shared three-master cluster under a supervising shell that stops the nodes and
/// removes their folder at process exit.
fn start_shared_cluster() -> Shared {
    require_redis_server();
    require_redis_cli();
    let ports = cluster_ports();
    let dir = cluster_dir();
    let mut script = String::new();
    for (i, port) in ports.iter().enumerate() {
        let args = shell_words(&cluster_node_args(*port, &dir, NODE_TIMEOUT));
        script.push_str(&format!("redis-server {args} >/dev/null 2>&1 & p{i}=$!\n"));
    }
    let (child, lifeline) = supervise(
        &script,
        &format!("kill $p0 $p1 $p2; wait; rm -rf '{}'", dir.display()),
    );
    form_cluster(&ports);
    Shared {
        url: seed_url(&ports),
        _supervisor: Some(child),
        _lifeline: lifeline,
    }
}

/// A private three-master cluster for one test (to stop a node mid-run). Dropping it stops
/// every node and removes its folder.
pub struct PrivateCluster {
    ports: [u16; 3],
    dir: PathBuf,
    node_timeout: Duration,
    nodes: [Option<Child>; 3],
}

impl PrivateCluster {
    /// Starts three nodes and forms the cluster; a stopped node is declared failed only
    /// after a minute.
    pub fn start() -> Self {
        Self::with_node_timeout(NODE_TIMEOUT)
    }

    /// [`PrivateCluster::start`], with nodes that declare an unreachable peer failed after
    /// `node_timeout`.
    pub fn with_node_timeout(node_timeout: Duration) -> Self {
        require_redis_server();
        require_redis_cli();
        let ports = cluster_ports();
        let dir = cluster_dir();
        let mut cluster = Self {
            ports,
            dir,
            node_timeout,
            nodes: [None, None, None],
        };
        for node in 0..3 {
            cluster.restart(node);
        }
        form_cluster(&ports);
        cluster
    }

    /// The seed URL of every node (`redis+cluster://...`).
    pub fn url(&self) -> String {
        seed_url(&self.ports)
    }

    /// Stops node `node` (0-2) at once, as a crash does.
    pub fn kill(&mut self, node: usize) {
        if let Some(mut child) = self.nodes[node].take() {
            child.kill().expect("kill a cluster node");
            child.wait().expect("reap a cluster node");
        }
    }

    /// Starts node `node` again on its port. It rejoins with its slots (its cluster state
    /// file survives) but without its data (nodes keep none).
    pub fn restart(&mut self, node: usize) {
        let port = self.ports[node];
        let child = Command::new("redis-server")
            .args(cluster_node_args(port, &self.dir, self.node_timeout))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start redis-server");
        self.nodes[node] = Some(child);
        wait_for_ping(port);
    }

    /// The keys matching `pattern` that node `node` (0-2, running) holds.
    pub fn keys_on(&self, node: usize, pattern: &str) -> Vec<String> {
        let mut conn = node_conn(self.ports[node]).expect("a live cluster node");
        ::redis::cmd("KEYS")
            .arg(pattern)
            .query(&mut conn)
            .expect("KEYS")
    }

    /// Which node (0-2) owns the hash slot of `key`, asked of a live node.
    pub fn owner_of(&self, key: &str) -> usize {
        let (asked, mut conn) = self
            .ports
            .iter()
            .enumerate()
            .filter(|(node, _)| self.nodes[*node].is_some())
            .find_map(|(_, port)| node_conn(*port).map(|conn| (*port, conn)))
            .expect("a live cluster node");
        let slot: u16 = ::redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut conn)
            .expect("CLUSTER KEYSLOT");
        let nodes: String = ::redis::cmd("CLUSTER")
            .arg("NODES")
            .query(&mut conn)
            .expect("CLUSTER NODES");
        let owner = slot_owner(&nodes, slot)
            .unwrap_or_else(|| panic!("node {asked} knows no owner of slot {slot}: {nodes}"));
        self.ports
            .iter()
            .position(|port| *port == owner)
            .expect("the owner is one of ours")
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        for node in 0..3 {
            if let Some(mut child) = self.nodes[node].take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The port of the master serving `slot`, read from a `CLUSTER NODES` reply (one line per
/// node: id, `ip:port@busport`, flags, master, ping, pong, epoch, link, then slot ranges).
fn slot_owner(nodes: &str, slot: u16) -> Option<u16> {
    nodes.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let port = fields.get(1)?.split('@').next()?.rsplit(':').next()?;
        let serves = fields.iter().skip(8).any(|range| {
            let (first, last) = range.split_once('-').unwrap_or((range, range));
            matches!(
                (first.parse::<u16>(), last.parse::<u16>()),
                (Ok(first), Ok(last)) if (first..=last).contains(&slot)
            )
        });
        if serves { port.parse().ok() } else { None }
    })
}

/// A synchronous connection to one node, or `None` when it does not answer.
fn node_conn(port: u16) -> Option<::redis::Connection> {
    ::redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .ok()?
        .get_connection_with_timeout(Duration::from_secs(1))
        .ok()
}

/// The cluster form of `store.redis_url` naming every node as a seed.
fn seed_url(ports: &[u16]) -> String {
    let seeds: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    format!("redis+cluster://{}", seeds.join(","))
}

/// A fresh folder for the nodes' cluster state files.
fn cluster_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "offer-test-cluster-{}",
        uuid::Uuid::new_v4().simple()
    ));
    std::fs::create_dir_all(&dir).expect("create the cluster folder");
    dir
}

/// Three distinct free loopback ports for cluster nodes: each at most 55535, with port +
/// 10000 free too, since a node's cluster bus listens there.
fn cluster_ports() -> [u16; 3] {
    let mut ports: Vec<u16> = Vec::new();
    for _ in 0..1000 {
        let port = free_port();
        let taken = ports
            .iter()
            .any(|p| *p == port || *p + 10000 == port || port + 10000 == *p);
        if port <= 55535 && !taken && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            ports.push(port);
            if let Ok(three) = <[u16; 3]>::try_from(ports.as_slice()) {
                return three;
            }
        }
    }
    panic!("found no three loopback ports P <= 55535 with P + 10000 free");
}

/// Joins three empty nodes into a cluster of three masters and waits until every node says
/// `cluster_state:ok`, or panics after 20 seconds.
fn form_cluster(ports: &[u16; 3]) {
    for port in ports {
        wait_for_ping(*port);
    }
    let out = Command::new("redis-cli")
        .arg("--cluster")
        .arg("create")
        .args(ports.iter().map(|p| format!("127.0.0.1:{p}")))
        .arg("--cluster-yes")
        .output()
        .expect("cannot run redis-cli");
    assert!(
        out.status.success(),
        "redis-cli --cluster create failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    for port in ports {
        loop {
            let info: Option<String> = node_conn(*port)
                .and_then(|mut conn| ::redis::cmd("CLUSTER").arg("INFO").query(&mut conn).ok());
            if info.is_some_and(|info| info.contains("cluster_state:ok")) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "cluster node {port} did not reach cluster_state:ok within 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A private server for one test (to kill it mid-run); returns it and its port.
pub fn start_private() -> (Child, u16) {
    let port = free_port();
    (start_on(port), port)
}

/// Starts a private server on `port` (again, after a test killed the previous one).
pub fn start_on(port: u16) -> Child {
    spawn_server(port, None)
}

/// Starts a private server on `port` that keeps its data in `dir` the way a production
/// deployment must for no acknowledged money event to be lost: an append-only file synced
/// on every write (`appendfsync always`). Started again on the same `dir`, it reloads it.
pub fn start_durable_on(port: u16, dir: &std::path::Path) -> Child {
    spawn_server(port, Some(dir))
}

/// Starts `redis-server` with [`server_args`] and waits until it answers.
fn spawn_server(port: u16, durable: Option<&std::path::Path>) -> Child {
    require_redis_server();
    let child = Command::new("redis-server")
        .args(server_args(port, durable))
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
