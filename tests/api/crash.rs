//! Crash safety of money events: the store's process is killed with SIGKILL while many
//! clients send money events over REST, started again on the same data, and the ledger is
//! checked against what every client was told.
//!
//! Each client is one player with its own session, sending one event at a time (mostly
//! `currency_earned`, every fourth a `currency_spent`), each with a fresh `tx_id`. An event
//! whose request fails or answers 503 is in doubt: the client sends it again, with the same
//! `tx_id` and body, until it gets a definite answer, exactly as an SDK retries; after the
//! crash each client also sends once more the last event acknowledged before it. At the end:
//! every acknowledged event is in the ledger exactly once, a refused one not at all, the
//! ledger holds nothing else, and every balance equals the sum of its ledger lines.
//!
//! Two cases: the embedded store, killing the engine binary itself and starting it again on
//! the same SQLite file (default `sync = full`); and Redis with `appendfsync always`,
//! killing `redis-server` under a running engine and starting it again on its append-only
//! file.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use offer_domain::environment::Environment;
use offer_engine::store::redis::RedisStore;
use offer_engine::store::sqlite::{Location, SqliteOptions, SqliteStore, SyncMode};
use offer_engine::store::{LedgerEntry, MoneyKind, SharedStore};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{earned, spent};
use super::helpers::{Backend, SECRET, remove_scratch, scratch_dir, spawn_tuned};
use super::process::{Spawned, engine_with, post_json, process_admin_token};
use super::redis_harness::{free_port, start_durable_on};

/// Players sending events at the same time.
const CLIENTS: usize = 16;
/// Events acknowledged before the kill, and again after the restart.
const ACKED_EACH_SIDE: usize = 1500;
/// The longest the test waits for the clients to reach a count; a guard against a hang,
/// never a measurement.
const PATIENCE: Duration = Duration::from_secs(120);
/// The currency every event moves.
const GOLD: &str = "gold";

/// What one event's sender was finally told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// Accepted: it must be in the ledger exactly once.
    Applied,
    /// Refused (a spend above the balance): it must not be in the ledger.
    Refused,
}

/// One event a client sent, and what it was told in the end.
#[derive(Debug, Clone)]
struct Sent {
    player: String,
    tx_id: String,
    kind: MoneyKind,
    amount: i64,
    answer: Answer,
    /// Whether some attempt failed first (the store was down).
    in_doubt: bool,
}

/// The clients, running until told to stop.
struct Clients {
    acked: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<Vec<Sent>>>,
}

impl Clients {
    /// Starts one client per `(player, session)` against `base`, with the SDK key `key`.
    fn start(base: &str, key: &str, sessions: Vec<(String, String)>) -> Self {
        let acked = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let client = Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .expect("client");
        let tasks = sessions
            .into_iter()
            .map(|(player, session)| {
                tokio::spawn(client_loop(
                    client.clone(),
                    format!("{base}/v1/sdk/events"),
                    key.to_owned(),
                    player,
                    session,
                    Arc::clone(&acked),
                    Arc::clone(&stop),
                ))
            })
            .collect();
        Self { acked, stop, tasks }
    }

    /// Waits until `n` events in all have a definite answer.
    async fn wait_for(&self, n: usize) {
        let deadline = Instant::now() + PATIENCE;
        while self.acked.load(Ordering::Relaxed) < n {
            assert!(
                Instant::now() < deadline,
                "the clients got only {} of {n} answers",
                self.acked.load(Ordering::Relaxed)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the clients once their current event has a definite answer; returns every event.
    async fn finish(self) -> Vec<Sent> {
        self.stop.store(true, Ordering::Relaxed);
        let mut all = Vec::new();
        for task in self.tasks {
            all.extend(task.await.expect("client task"));
        }
        all
    }
}

/// One player's events, each sent until it has a definite answer.
async fn client_loop(
    client: Client,
    url: String,
    key: String,
    player: String,
    session: String,
    acked: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) -> Vec<Sent> {
    let mut sent = Vec::new();
    let mut last_applied: Option<Value> = None;
    let mut replayed = false;
    for k in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let tx_id = format!("{player}-{k}");
        let (kind, amount) = if k % 4 == 3 {
            (MoneyKind::Spent, 7 + k % 5)
        } else {
            (MoneyKind::Earned, 1 + k % 9)
        };
        let event = match kind {
            MoneyKind::Spent => spent(GOLD, amount, &tx_id),
            _ => earned(GOLD, amount, &tx_id),
        };
        let body = json!({"session_id": session, "events": [event]});
        let (answer, in_doubt) = send_until_answered(&client, &url, &key, &body).await;
        acked.fetch_add(1, Ordering::Relaxed);
        // Once, after the crash: the last event acknowledged before it is sent again, as a
        // client that never saw its answer would; it must count once.
        if in_doubt && let Some(before) = last_applied.take() {
            let (again, _) = send_until_answered(&client, &url, &key, &before).await;
            assert_eq!(again, Answer::Applied, "a replay is accepted: {before}");
        }
        if answer == Answer::Applied && !replayed {
            last_applied = Some(body.clone());
        }
        replayed |= in_doubt;
        sent.push(Sent {
            player: player.clone(),
            tx_id,
            kind,
            amount,
            answer,
            in_doubt,
        });
    }
    sent
}

/// Sends one event batch until it has a definite answer (a failed request or a 503 is
/// retried with the same body); returns the answer and whether some attempt failed first.
async fn send_until_answered(
    client: &Client,
    url: &str,
    key: &str,
    body: &Value,
) -> (Answer, bool) {
    let mut in_doubt = false;
    loop {
        match client.post(url).bearer_auth(key).json(body).send().await {
            Ok(r) if r.status() == StatusCode::ACCEPTED => {
                let outcome: Value = r.json().await.expect("json answer");
                if outcome["accepted"] == 1 {
                    return (Answer::Applied, in_doubt);
                }
                assert_eq!(
                    outcome["rejected"][0]["code"], "insufficient_funds",
                    "{outcome}"
                );
                return (Answer::Refused, in_doubt);
            }
            Ok(r) if r.status() == StatusCode::SERVICE_UNAVAILABLE => in_doubt = true,
            Ok(r) => {
                let status = r.status();
                panic!("{body}: {status} {}", r.text().await.unwrap_or_default());
            }
            Err(_) => in_doubt = true,
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A game with the currency `gold`, a production SDK key and one session per client, set
/// up over REST on the engine at `base`; returns the game, the key and the sessions.
async fn set_up(base: &str) -> (Uuid, String, Vec<(String, String)>) {
    let admin = process_admin_token();
    let client = Client::new();
    let post = |path: &str, token: &str, body: Value| post_json(&client, base, path, token, &body);
    let game: Value = post(
        "/v1/games",
        &admin,
        json!({"name": "Crash", "genre": "rpg",
               "currencies": [{"currency_id": GOLD, "kind": "earned"}]}),
    )
    .await
    .expect("create game")
    .json()
    .await
    .expect("game");
    let game_id = game["game_id"].as_str().expect("game id").to_owned();
    let issued: Value = post(
        &format!("/v1/games/{game_id}/sdk-keys"),
        &admin,
        json!({"environment": "production"}),
    )
    .await
    .expect("issue key")
    .json()
    .await
    .expect("key");
    let key = issued["api_key"].as_str().expect("api key").to_owned();
    let mut sessions = Vec::new();
    for i in 0..CLIENTS {
        let player = format!("player_{i}");
        let session = Uuid::new_v4().to_string();
        let opened = post(
            "/v1/sdk/sessions",
            &key,
            json!({"session_id": session, "player_id": player}),
        )
        .await
        .expect("open session");
        assert_eq!(opened.status(), StatusCode::CREATED);
        sessions.push((player, session));
    }
    (game_id.parse().expect("uuid"), key, sessions)
}

/// Checks the ledger and balances of `game` in `store` against what the clients were told.
async fn check(store: &SharedStore, game: Uuid, sent: &[Sent]) {
    let env = Environment::Production;
    let ledger = store.ledger(game, env).await.expect("ledger");
    let mut lines: HashMap<&str, &LedgerEntry> = HashMap::new();
    for entry in &ledger {
        assert!(
            lines.insert(&entry.tx_id, entry).is_none(),
            "{} is in the ledger twice",
            entry.tx_id
        );
    }
    let mut expected: HashSet<&str> = HashSet::new();
    for event in sent {
        let line = lines.get(event.tx_id.as_str());
        match event.answer {
            Answer::Applied => {
                let line = line.unwrap_or_else(|| {
                    panic!("acknowledged {} is missing from the ledger", event.tx_id)
                });
                assert_eq!(
                    (line.player_id.as_str(), line.kind, line.amount),
                    (event.player.as_str(), event.kind, event.amount),
                    "{}",
                    event.tx_id
                );
                expected.insert(&event.tx_id);
            }
            Answer::Refused => assert!(line.is_none(), "refused {} was applied", event.tx_id),
        }
    }
    let unexplained: Vec<&str> = lines
        .keys()
        .copied()
        .filter(|tx| !expected.contains(tx))
        .collect();
    assert!(
        unexplained.is_empty(),
        "ledger lines nobody was told of: {unexplained:?}"
    );
    let mut sums: HashMap<&str, i64> = HashMap::new();
    for entry in &ledger {
        let sum = sums.entry(&entry.player_id).or_default();
        match entry.kind {
            MoneyKind::Earned => *sum += entry.amount,
            MoneyKind::Spent => *sum -= entry.amount,
            MoneyKind::Purchase | MoneyKind::Refund => {}
        }
    }
    for i in 0..CLIENTS {
        let player = format!("player_{i}");
        let balance = store
            .balance(game, env, &player, GOLD)
            .await
            .expect("balance");
        assert_eq!(
            balance,
            sums.get(player.as_str()).copied().unwrap_or(0),
            "{player}"
        );
        assert!(balance >= 0, "{player} went negative");
    }
    let doubted = sent.iter().filter(|e| e.in_doubt).count();
    assert!(
        doubted > 0,
        "no event was in doubt: the kill did not hit the clients"
    );
}

/// The engine binary on `port`, keeping its SQLite file beside `dev_secret`; returns once
/// it listens.
fn start_engine(dev_secret: &Path, port: u16) -> Spawned {
    let mut child = Spawned(
        engine_with(dev_secret)
            .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
            .env("OFFER__AUTH__JWT_SECRET", SECRET)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the engine"),
    );
    let stdout = child.0.stdout.take().expect("stdout");
    let first = BufReader::new(stdout).lines().next();
    let line = first.expect("a start-up line").expect("read");
    assert!(line.contains("listening"), "{line}");
    child
}

/// Kills the engine with SIGKILL: no drain, no shutdown code runs.
fn kill_engine(engine: &mut Spawned) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(engine.0.id()).expect("pid fits"));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("SIGKILL");
    engine.0.wait().expect("reap the engine");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_engine_loses_no_acknowledged_money_event_on_sqlite() {
    let dir = scratch_dir();
    let secret = dir.join("dev-jwt-secret");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}");
    let mut engine = start_engine(&secret, port);
    let (game, key, sessions) = set_up(&base).await;
    let clients = Clients::start(&base, &key, sessions);
    clients.wait_for(ACKED_EACH_SIDE).await;
    kill_engine(&mut engine);
    // The same file, the same port: the clients retry what was in doubt.
    let mut engine = start_engine(&secret, port);
    clients.wait_for(2 * ACKED_EACH_SIDE).await;
    let sent = clients.finish().await;
    kill_engine(&mut engine);
    let options = SqliteOptions {
        location: Location::File(dir.join("offer-engine.db")),
        sync: SyncMode::Full,
        timeout: Duration::from_secs(2),
        idempotency_retention: Duration::from_secs(90 * 86_400),
        ledger_retention: None,
    };
    let store: SharedStore = Arc::new(
        tokio::task::spawn_blocking(move || SqliteStore::open(&options))
            .await
            .expect("join")
            .expect("open the engine's file"),
    );
    check(&store, game, &sent).await;
    drop(store);
    remove_scratch(&secret);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_redis_loses_no_acknowledged_money_event_with_appendfsync_always() {
    let dir = scratch_dir();
    let port = free_port();
    let mut redis = start_durable_on(port, &dir);
    let url = format!("redis://127.0.0.1:{port}/");
    let app = spawn_tuned(Backend::Redis, |s| s.store.redis_url = url.clone()).await;
    let base = format!("http://{}", app.addr);
    let (game, key, sessions) = set_up(&base).await;
    let clients = Clients::start(&base, &key, sessions);
    clients.wait_for(ACKED_EACH_SIDE).await;
    redis.kill().expect("SIGKILL redis-server");
    redis.wait().expect("reap redis-server");
    // Redis stays down long enough for requests to meet the outage even when the machine is
    // busy and the clients' tasks run late (they retry every 20 ms): a restart faster than
    // the next request would hide the kill from every client.
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The same append-only file, the same port: the engine reconnects by itself.
    let mut redis = start_durable_on(port, &dir);
    clients.wait_for(2 * ACKED_EACH_SIDE).await;
    let sent = clients.finish().await;
    let prefix = app.running.state.services.settings.store.key_prefix.clone();
    let store: SharedStore = Arc::new(
        RedisStore::connect(&url, &prefix, Duration::from_secs(2))
            .await
            .expect("connect"),
    );
    check(&store, game, &sent).await;
    drop(app);
    redis.kill().expect("stop redis-server");
    redis.wait().expect("reap redis-server");
    remove_scratch(&dir.join("appendonly"));
}
