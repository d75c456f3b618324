//! The slow-client suite: 2,000 connections that never finish their request head, against
//! the real `offer-engine` binary in its own process, so that the open files and memory
//! measured are the server's alone. While they hang, an ordinary client keeps getting
//! answers from `/healthz` and the offer path; once the header deadline has closed them, the
//! server's open files return exactly to their count before, and its memory to within 10%.
//!
//! The memory may take a moment to go back to the system: the test waits for it up to
//! `OFFER_TEST_RSS_SETTLE_S` seconds (30 by default) and passes as soon as it is back. The
//! baseline is read after one unmeasured burst of the same size, so it already holds what the
//! allocator keeps for the next burst.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::fixtures::store_shelf;
use super::helpers::SECRET;
use super::process::{Spawned, engine, post_json, process_admin_token};
use super::raw::{connect, read_until_closed};

/// Connections that never finish their head.
const SLOW: usize = 2000;
/// The server's header deadline in this suite: how long the slow connections hang.
const HEADER_TIMEOUT_MS: u64 = 5000;
/// Decisions the server keeps; the warm-up fills the log, so it grows no more during the test.
const DECISION_LOG: usize = 50;

/// The number of open files of process `pid`.
fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("/proc/<pid>/fd is readable (Linux)")
        .count()
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

/// The engine's resident memory once it has settled: the reading of the first 2-second span
/// (readings every 500 ms) over which it moved by at most 1%, or the last one after 20 s. A
/// freshly started engine still grows for a while (background tasks' first rounds, allocator
/// arenas touched for the first time); a baseline taken inside that growth would charge it to
/// what the test does next.
async fn settled_rss(pid: u32) -> u64 {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut window = std::collections::VecDeque::from([rss_kib(pid)]);
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        window.push_back(rss_kib(pid));
        if window.len() > 5 {
            window.pop_front();
        }
        let (low, high) = window
            .iter()
            .fold((u64::MAX, 0), |(lo, hi), &r| (lo.min(r), hi.max(r)));
        let current = window.back().copied().unwrap_or(high);
        if (window.len() == 5 && (high - low) * 100 <= low)
            || tokio::time::Instant::now() >= deadline
        {
            return current;
        }
    }
}

/// Polls `probe` every 100 ms until `done` holds or `limit` passes; returns the last reading.
async fn wait_for<T: Copy>(
    limit: Duration,
    mut probe: impl FnMut() -> T,
    done: impl Fn(T) -> bool,
) -> T {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let value = probe();
        if done(value) || tokio::time::Instant::now() >= deadline {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An ordinary SDK client of the spawned server: a game with a store shelf, a production
/// key and one session. It opens a new connection per request, so that it holds none of the
/// server's open files between requests.
struct Player {
    client: Client,
    base: String,
    key: String,
    session: String,
}

impl Player {
    async fn set_up(addr: SocketAddr) -> Self {
        let client = Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .expect("client");
        let base = format!("http://{addr}");
        let admin = process_admin_token();
        let post =
            |path: &str, token: &str, body: Value| post_json(&client, &base, path, token, &body);
        let created = async |r: reqwest::Result<reqwest::Response>| {
            let r = r.expect("request");
            assert!(r.status().is_success(), "{}", r.status());
            r.json::<Value>().await.expect("json")
        };
        let game = created(
            post(
                "/v1/games",
                &admin,
                json!({"name": "G", "genre": "rpg",
                       "currencies": [{"currency_id": "gems", "kind": "hard"}]}),
            )
            .await,
        )
        .await["game_id"]
            .as_str()
            .expect("game id")
            .to_owned();
        created(
            post(
                &format!("/v1/games/{game}/items/bulk"),
                &admin,
                json!({"items": store_shelf()}),
            )
            .await,
        )
        .await;
        let key = created(
            post(
                &format!("/v1/games/{game}/sdk-keys"),
                &admin,
                json!({"environment": "production"}),
            )
            .await,
        )
        .await["api_key"]
            .as_str()
            .expect("key")
            .to_owned();
        let session = uuid::Uuid::new_v4().to_string();
        created(
            post(
                "/v1/sdk/sessions",
                &key,
                json!({"session_id": session, "player_id": "p1", "attributes": {}}),
            )
            .await,
        )
        .await;
        Self {
            client,
            base,
            key,
            session,
        }
    }

    /// One probe and one offer; whether both were answered as they should be.
    async fn round(&self) -> bool {
        let health = self
            .client
            .get(format!("{}/healthz", self.base))
            .send()
            .await;
        let offer = self
            .client
            .post(format!("{}/v1/sdk/offers/next", self.base))
            .bearer_auth(&self.key)
            .json(&json!({"session_id": self.session,
                          "trigger_context": {"event_type": "session_start"}}))
            .send()
            .await;
        health.is_ok_and(|r| r.status() == StatusCode::OK)
            && offer.is_ok_and(|r| matches!(r.status(), StatusCode::OK | StatusCode::NO_CONTENT))
    }
}

/// The ordinary client playing rounds until `stop`, counting the rounds answered and the
/// ones that failed.
fn play(
    player: &Arc<Player>,
    stop: &Arc<AtomicBool>,
    (answered, failed): &(Arc<AtomicUsize>, Arc<AtomicUsize>),
) -> tokio::task::JoinHandle<()> {
    let (player, stop) = (Arc::clone(player), Arc::clone(stop));
    let (answered, failed) = (Arc::clone(answered), Arc::clone(failed));
    tokio::spawn(async move {
        while !stop.load(Relaxed) {
            let counter = if player.round().await {
                &answered
            } else {
                &failed
            };
            counter.fetch_add(1, Relaxed);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
}

/// Raises this process's open-file limit to hold `needed` sockets, or fails saying how.
fn ensure_open_files(needed: usize) {
    let soft = rlimit::increase_nofile_limit(u64::MAX).expect("raise RLIMIT_NOFILE");
    assert!(
        soft >= needed as u64,
        "this suite opens {needed} sockets, the open-file limit is {soft}: raise it (`ulimit -n {needed}`)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_thousand_slow_clients_block_no_one_and_leave_nothing_behind() {
    ensure_open_files(SLOW + 512);
    let settle = Duration::from_secs(
        std::env::var("OFFER_TEST_RSS_SETTLE_S")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(30),
    );
    let mut child = Spawned(
        engine()
            .args(["--bind", "127.0.0.1:0"])
            .env("OFFER__AUTH__JWT_SECRET", SECRET)
            .env(
                "OFFER__SERVER__HEADER_TIMEOUT_MS",
                HEADER_TIMEOUT_MS.to_string(),
            )
            .env(
                "OFFER__OFFERS__DECISION_LOG_CAPACITY",
                DECISION_LOG.to_string(),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the engine"),
    );
    let pid = child.0.id();
    let stdout = child.0.stdout.take().expect("stdout");
    let listening = BufReader::new(stdout)
        .lines()
        .next()
        .expect("a line")
        .expect("read");
    let addr: SocketAddr = listening
        .rsplit("http://")
        .next()
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("listening line {listening:?}"));

    let player = Arc::new(Player::set_up(addr).await);
    for _ in 0..DECISION_LOG + 10 {
        assert!(player.round().await, "warm-up round answered");
    }
    // One unmeasured burst first, of the same shape (the ordinary client playing beside it),
    // so that the allocator's pools have grown to what a burst needs: what is measured is
    // whether a burst leaves anything behind, not the first high-water mark (which the
    // allocator keeps for the next one). A leak grows with every burst and still fails below.
    let warm_stop = Arc::new(AtomicBool::new(false));
    let warm_counts = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let warm_playing = play(&player, &warm_stop, &warm_counts);
    let mut warm_up = Vec::with_capacity(SLOW);
    for _ in 0..SLOW {
        let mut c = connect(addr).await;
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
        warm_up.push(c);
    }
    for c in &mut warm_up {
        read_until_closed(c).await;
    }
    drop(warm_up);
    warm_stop.store(true, Relaxed);
    warm_playing.await.expect("warm-up player");
    // The last warm-up connections close on the server's side a moment after the client's.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let files_before = open_files(pid);
    let rss_before = settled_rss(pid).await;

    // The ordinary client plays throughout.
    let stop = Arc::new(AtomicBool::new(false));
    let counts = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let playing = play(&player, &stop, &counts);
    let (answered, failed) = counts;

    let mut slow = Vec::with_capacity(SLOW);
    for _ in 0..SLOW {
        let mut c = connect(addr).await;
        c.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            .await
            .expect("write");
        slow.push(c);
    }
    let files_during = wait_for(
        Duration::from_millis(HEADER_TIMEOUT_MS),
        || open_files(pid),
        |n| n >= files_before + SLOW,
    )
    .await;
    let rss_during = rss_kib(pid);
    assert!(
        files_during >= files_before + SLOW,
        "the server never held the {SLOW} slow connections at once ({files_during} open files, \
         {files_before} before): opening them took longer than the header deadline"
    );
    let answered_while_held = answered.load(Relaxed);

    for c in &mut slow {
        assert!(
            read_until_closed(c).await.is_empty(),
            "a slow connection is closed without an answer"
        );
    }
    stop.store(true, Relaxed);
    playing.await.expect("player");
    assert_eq!(failed.load(Relaxed), 0, "every round was answered");
    assert!(
        answered.load(Relaxed) > answered_while_held,
        "the client kept playing while the slow connections hung"
    );
    drop(slow);

    let files_after = wait_for(
        Duration::from_secs(30),
        || open_files(pid),
        |n| n == files_before,
    )
    .await;
    let rss_after = wait_for(settle, || rss_kib(pid), |kib| kib * 10 <= rss_before * 11).await;
    eprintln!(
        "slow clients: open files {files_before} before, {files_during} during, {files_after} \
         after; RSS {rss_before} KiB before, {rss_during} KiB during, {rss_after} KiB after"
    );
    assert_eq!(files_after, files_before, "open files back to their count");
    assert!(
        rss_after * 10 <= rss_before * 11,
        "RSS {rss_after} KiB, more than 10% above {rss_before} KiB after {settle:?}"
    );
}
