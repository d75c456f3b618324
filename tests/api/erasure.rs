//! A player's erasure through the real HTTP surface: after `DELETE .../players/{id}` no
//! API, export or store key or value shows the id (the SQLite file's every table and
//! column, every key and value of the Redis key space, on one server and on each master of
//! a cluster; the counts of an experiment deleted from the game included); the holdout ARPU, the revenue share and the experiment's results are
//! unchanged to the cent; another player is untouched; a receipt the erased player redeemed
//! is still refused to another player; its refund record is kept under the tombstone; the
//! audit trail names the tombstone and never the id; the same id coming back lands in the
//! same group with nothing; and an open socket of the player is closed (on another node
//! too). Only the game's own studio's admins may erase.

use std::path::Path;
use std::time::Duration;

use offer_domain::holdout::is_holdout;
use offer_engine::store::redis::target::RedisTarget;
use offer_receipts::test_support::{TestAppleCa, TestGoogleKey, pubsub_voided};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{Sdk, earned, mixed_catalogue, spent};
use super::helpers::{Backend, Role, TestApp, shared_backend, spawn_app_on};
use super::offers::offer;
use super::receipt_fixtures::{PACKAGE, google_receipt, server, sword};
use super::ws_client::{Fmt, connect};

/// What every erased player's id starts with: distinctive, so finding it anywhere is a
/// leak.
const MARK: &str = "erase-me-7f3a";

/// A player id starting with `prefix`, in `game`'s holdout when `holdout`.
fn player_in(game: &str, prefix: &str, holdout: bool) -> String {
    let game_id: Uuid = game.parse().expect("a game id");
    (0..)
        .map(|n| format!("{prefix}{n}"))
        .find(|p| is_holdout(p, game_id) == holdout)
        .expect("an id in the group")
}

/// Sends `events` in session `sid`; the batch outcome.
async fn send(app: &TestApp, sdk: &Sdk, sid: &str, events: Value) -> Value {
    app.post(
        "/v1/sdk/events",
        json!({"session_id": sid, "events": events}),
    )
    .token(&sdk.key)
    .expect(StatusCode::ACCEPTED)
    .await
}

/// A purchase of the sword proven by a Google Play receipt with `token`.
fn bought(key: &TestGoogleKey, tx_id: &str, token: &str) -> Value {
    json!({"type": "purchase", "item_ids": ["sword"], "price_cents": 499, "tx_id": tx_id,
        "receipt": google_receipt(key, "sword", token)})
}

/// What the studio's figures say: the holdout comparison, the revenue share and the
/// experiment's results.
async fn figures(app: &TestApp, game: &str, experiment: &str) -> Value {
    json!({
        "holdout": app.get_json(format!("/v1/games/{game}/holdout-arpu")).await,
        "share": app.get_json(format!("/v1/games/{game}/revenue-share")).await,
        "experiment": app
            .get_json(format!("/v1/games/{game}/experiments/{experiment}/results"))
            .await,
    })
}

/// Every place in the SQLite file where `mark` appears: a table, its row and column.
fn sqlite_traces(path: &Path, mark: &str) -> Vec<String> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open the store's file");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .expect("tables")
        .query_map([], |row| row.get(0))
        .expect("tables")
        .collect::<Result<_, _>>()
        .expect("tables");
    assert!(tables.len() >= 10, "{tables:?}");
    let mut traces = Vec::new();
    for table in tables {
        let mut stmt = conn
            .prepare(&format!("SELECT * FROM \"{table}\""))
            .expect("select");
        let columns = stmt.column_count();
        let mut rows = stmt.query([]).expect("rows");
        while let Some(row) = rows.next().expect("row") {
            for c in 0..columns {
                let bytes = match row.get_ref(c).expect("column") {
                    rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => b,
                    _ => continue,
                };
                if String::from_utf8_lossy(bytes).contains(mark) {
                    traces.push(format!("{table}: {}", String::from_utf8_lossy(bytes)));
                }
            }
        }
    }
    traces
}

/// Every key under `prefix` on the Redis `node` (one server, or one master of a cluster,
/// which holds its own slots' keys) whose name or value holds `mark`; how many keys were
/// read.
async fn redis_traces(
    node: ::redis::ConnectionInfo,
    prefix: &str,
    mark: &str,
) -> (usize, Vec<String>) {
    let client = ::redis::Client::open(node).expect("redis node");
    let mut conn = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut cursor = 0u64;
    loop {
        let (next, page): (u64, Vec<Vec<u8>>) = ::redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(format!("{prefix}:*"))
            .arg("COUNT")
            .arg(1000)
            .query_async(&mut conn)
            .await
            .expect("SCAN");
        keys.extend(page);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    let mut traces = Vec::new();
    for key in &keys {
        let name = String::from_utf8_lossy(key).into_owned();
        let kind: String = ::redis::cmd("TYPE")
            .arg(key)
            .query_async(&mut conn)
            .await
            .expect("TYPE");
        let values: Vec<Vec<u8>> = match kind.as_str() {
            "string" => vec![
                ::redis::cmd("GET")
                    .arg(key)
                    .query_async(&mut conn)
                    .await
                    .expect("GET"),
            ],
            "hash" => ::redis::cmd("HGETALL")
                .arg(key)
                .query_async(&mut conn)
                .await
                .expect("HGETALL"),
            "list" => ::redis::cmd("LRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .expect("LRANGE"),
            "zset" => ::redis::cmd("ZRANGE")
                .arg(key)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .expect("ZRANGE"),
            "set" => ::redis::cmd("SMEMBERS")
                .arg(key)
                .query_async(&mut conn)
                .await
                .expect("SMEMBERS"),
            // Expired between the scan and the read.
            "none" => Vec::new(),
            other => panic!("{name}: a key of type {other} is not read by this test"),
        };
        if name.contains(mark) {
            traces.push(format!("key {name}"));
        }
        for value in values {
            let text = String::from_utf8_lossy(&value);
            if text.contains(mark) {
                traces.push(format!("{name}: {text}"));
            }
        }
    }
    (keys.len(), traces)
}

/// Asserts that no key or value of `app`'s store holds `mark`.
async fn assert_no_trace(app: &TestApp, backend: Backend, mark: &str) {
    let store = &app.running.state.services.settings.store;
    let traces = match backend {
        Backend::Embedded => sqlite_traces(&store.path, mark),
        Backend::Redis | Backend::RedisCluster => {
            // Every node of the store's URL: the one server, or each master of the test
            // cluster (its seeds are all of them).
            let target = RedisTarget::parse(&store.redis_url).expect("the store's URL");
            let (mut keys, mut traces) = (0, Vec::new());
            for node in target.nodes() {
                let (read, found) = redis_traces(node.clone(), &store.key_prefix, mark).await;
                keys += read;
                traces.extend(found);
            }
            assert!(keys >= 20, "the scan read the key space: {keys} keys");
            traces
        }
        other => panic!("no store scan for {other:?}"),
    };
    assert!(traces.is_empty(), "the id is still stored: {traces:#?}");
}

/// The experiment's results, once the player's show has been counted.
async fn shown_once(app: &TestApp, game: &str, experiment: &str) {
    let path = format!("/v1/games/{game}/experiments/{experiment}/results");
    for _ in 0..100 {
        let results = app.get_json(&path).await;
        if results["variants"][0]["offers_shown"] == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the show was never counted");
}

/// A new experiment of `game` with one variant, `name`; its id.
async fn new_experiment(app: &TestApp, game: &str, name: &str) -> String {
    let experiment = app
        .post(
            format!("/v1/games/{game}/experiments"),
            json!({"variants": [{"name": name, "weight": 1, "price_usd": 1.23}]}),
        )
        .expect(StatusCode::CREATED)
        .await;
    experiment["experiment_id"].as_str().expect("id").to_owned()
}

async fn erasure_keeps_the_figures_and_leaves_no_trace(backend: Backend) {
    let ca = TestAppleCa::new();
    let key = TestGoogleKey::new();
    let app = server(&ca, backend).await;
    // The mixed catalogue, its sword sold on the stores.
    let mut catalogue = mixed_catalogue();
    catalogue[3] = sword();
    let sdk = app.game_with(catalogue).await;
    let game = sdk.game.clone();
    let treated = player_in(&game, &format!("{MARK}-"), false);
    // An experiment that prices the treated player's first offer, shown, and is then
    // deleted from the game: its counts of the player are erased all the same.
    let gone = new_experiment(&app, &game, "gone").await;
    let first = app.open_session(&sdk, &treated, json!({})).await;
    let (status, served, outcome) = offer(&app, &sdk, &first, "session_start").await;
    assert_eq!(status, StatusCode::OK, "{served} {outcome:?}");
    assert_eq!(served["experiment"]["variant"], "gone", "{served}");
    let outcome = send(
        &app,
        &sdk,
        &first,
        json!([{"type": "offer_shown", "offer_id": served["offer_id"]}]),
    )
    .await;
    assert_eq!(outcome["accepted"], 1, "{outcome}");
    shown_once(&app, &game, &gone).await;
    app.delete(format!("/v1/games/{game}/experiments/{gone}"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    let experiment = new_experiment(&app, &game, "cheap").await;
    let held = player_in(&game, &format!("{MARK}-"), true);
    let history = player_in(&game, &format!("{MARK}-history-"), true);
    // The player who stays, treated (so both groups have a payer left).
    let keeper = player_in(&game, "keeper-", false);
    // The treated player: a session with attributes, an offer of the experiment shown,
    // currency earned and spent, a purchase; and a day of play in the sandbox.
    let sid = app
        .open_session(
            &sdk,
            &treated,
            json!({"country": "FR", "platform": "android", "level": 12}),
        )
        .await;
    let (status, served, outcome) = offer(&app, &sdk, &sid, "session_start").await;
    assert_eq!(status, StatusCode::OK, "{served} {outcome:?}");
    assert_eq!(served["experiment"]["variant"], "cheap", "{served}");
    // A purchase reported before receipts are checked: written down when the checks begin,
    // and left out of the verified figures.
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([{"type": "purchase", "item_ids": ["potion"], "price_cents": 199, "tx_id": "p0"}]),
    )
    .await;
    assert_eq!(outcome["accepted"], 1, "{outcome}");
    // Receipts are checked from now on (an offer of an item no store sells is not payable
    // once they are, so the offer above was served first).
    let stores = app
        .put(
            format!("/v1/games/{game}/stores"),
            json!({"verification": "enforce",
                "google_play": {"package_name": PACKAGE, "public_key": key.public_base64()}}),
        )
        .expect(StatusCode::OK)
        .await;
    let google_url = stores["notification_urls"]["google_play"]
        .as_str()
        .expect("the Google Play notification URL");
    let notifications = &google_url[google_url.find("/v1/").expect("its path")..];
    // A held-out payer known only from imported history (no session, no population entry;
    // imported without a receipt, it counts in no verified figure): erasable too.
    let imported = app
        .post(
            format!("/v1/games/{game}/events/import"),
            json!({"events": [{"type": "purchase", "item_ids": ["hat"], "price_cents": 299,
                "tx_id": "h1", "player_id": history, "ts": chrono::Utc::now().to_rfc3339()}]}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(imported["imported"], 1, "{imported}");
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([
            earned("gold", 300, "e1"),
            spent("gold", 120, "s1"),
            {"type": "offer_shown", "offer_id": served["offer_id"]},
            bought(&key, "p1", "token-treated"),
        ]),
    )
    .await;
    assert_eq!(outcome["accepted"], 4, "{outcome}");
    let sandbox = Sdk {
        game: game.clone(),
        key: app.sdk_key(&game, "sandbox").await,
    };
    app.send_events(&sandbox, &treated, json!([earned("gold", 7, "sb1")]))
        .await;
    // A held-out player who paid, and a player who stays.
    let sid = app.open_session(&sdk, &held, json!({"level": 3})).await;
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([
            earned("gold", 40, "e1"),
            spent("gold", 40, "s1"),
            bought(&key, "p1", "token-held"),
            bought(&key, "p2", "token-held-2")
        ]),
    )
    .await;
    assert_eq!(outcome["accepted"], 4, "{outcome}");
    // Google refunds its second sword: a refund record and a refund line of the player.
    let refunded = app
        .post(notifications, json!({}))
        .raw(
            "application/json",
            pubsub_voided(PACKAGE, "token-held-2", "m-1", 1),
        )
        .no_token()
        .expect(StatusCode::OK)
        .await;
    assert_eq!(refunded["outcome"], "refunded", "{refunded}");
    let sid = app.open_session(&sdk, &keeper, json!({})).await;
    let outcome = send(
        &app,
        &sdk,
        &sid,
        json!([
            earned("gold", 50, "e1"),
            spent("gold", 50, "s1"),
            bought(&key, "p1", "token-keeper")
        ]),
    )
    .await;
    assert_eq!(outcome["accepted"], 3, "{outcome}");
    shown_once(&app, &game, &experiment).await;

    let before = figures(&app, &game, &experiment).await;
    // Figures worth comparing: both groups paid (the treated player's purchase before the
    // checks began is left out), and no day is left out as unhealthy.
    let holdout = &before["holdout"];
    assert_eq!(
        (&holdout["n_treatment"], &holdout["n_control"]),
        (&json!(2), &json!(1)),
        "{holdout}"
    );
    assert_eq!(holdout["treatment_arpu"], 4.99, "{holdout}");
    assert_eq!(holdout["control_arpu"], 4.99, "{holdout}");
    assert_eq!(holdout["revenue_before_verified_usd"], 1.99, "{holdout}");
    assert_eq!(holdout["days_excluded"], 0, "{holdout}");
    assert_eq!(before["share"]["monthly_players"], 3, "{before}");
    let mut groups = Vec::new();
    for player in [&treated, &held, &history] {
        let export = app
            .get_json(format!("/v1/games/{game}/players/{player}/export"))
            .await;
        groups.push(export["group"].clone());
    }
    assert_eq!(
        groups,
        [json!("treatment"), json!("holdout"), json!("holdout")]
    );
    let kept = app
        .get_json(format!("/v1/games/{game}/players/{keeper}"))
        .await;

    // Only the studio's admins: a viewer is refused, another studio finds nothing, and a
    // player the game holds nothing about is a 404.
    let path = |p: &str| format!("/v1/games/{game}/players/{p}");
    app.delete(path(&treated))
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    let foreign = app
        .delete(path(&treated))
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    assert!(!foreign.to_string().contains(MARK), "{foreign}");
    app.delete(path("nobody"))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;

    let mut tombstones = Vec::new();
    for player in [&treated, &held, &history] {
        let erased = app.delete(path(player)).expect(StatusCode::OK).await;
        assert_eq!(erased["erased"], true, "{erased}");
        assert_eq!(erased["game_id"], game.as_str());
        let tombstone = erased["tombstone"].as_str().expect("tombstone").to_owned();
        assert!(tombstone.starts_with("erased-"), "{tombstone}");
        assert!(!tombstone.contains(MARK));
        tombstones.push(tombstone);
        // Nothing is left to erase.
        app.delete(path(player))
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }

    // The figures did not move by a cent.
    assert_eq!(figures(&app, &game, &experiment).await, before);
    // No API shows the player any more.
    for player in [&treated, &held, &history] {
        for env in ["production", "sandbox"] {
            app.get(format!("{}?environment={env}", path(player)))
                .expect_error(StatusCode::NOT_FOUND, "not_found")
                .await;
        }
        app.get(format!("{}/export", path(player)))
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    // The other player is untouched.
    assert_eq!(app.get_json(path(&keeper)).await, kept);
    // A receipt the erased player redeemed is still its (the tombstone's): another player
    // presenting it is sharing it.
    let thief = app.open_session(&sdk, "thief", json!({})).await;
    let outcome = send(
        &app,
        &sdk,
        &thief,
        json!([bought(&key, "t1", "token-treated")]),
    )
    .await;
    assert_eq!(
        outcome["rejected"][0]["code"], "receipt_already_redeemed",
        "{outcome}"
    );
    // The audit trail records each erasure under its tombstone, never the id.
    let audit = app
        .get_json(format!("/v1/studio/audit?game_id={game}"))
        .await;
    let erasures: Vec<&Value> = audit["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["action"] == "player.erase")
        .collect();
    assert_eq!(erasures.len(), 3, "{audit}");
    let mut named: Vec<&str> = erasures
        .iter()
        .map(|e| e["object"]["id"].as_str().expect("object"))
        .collect();
    named.sort_unstable();
    let mut expected: Vec<&str> = tombstones.iter().map(String::as_str).collect();
    expected.sort_unstable();
    assert_eq!(named, expected, "{audit}");
    assert!(
        erasures.iter().all(|e| e["object"]["kind"] == "player"
            && e["before"]["tombstone"] == e["object"]["id"]
            && e["after"].is_null()),
        "{audit}"
    );
    assert!(!audit.to_string().contains(MARK), "{audit}");
    // And no store key or value holds it.
    assert_no_trace(&app, backend, MARK).await;

    // The same id coming back lands in the same group and starts with nothing (its
    // `tx_id`s are free again).
    for (player, group) in [&treated, &held, &history].into_iter().zip(&groups) {
        let back = app.open_session(&sdk, player, json!({})).await;
        let outcome = send(&app, &sdk, &back, json!([earned("gold", 5, "e1")])).await;
        assert_eq!(outcome["accepted"], 1, "{outcome}");
        let record = app.get_json(path(player)).await;
        assert_eq!(&record["group"], group, "{record}");
        assert_eq!(record["balances"]["gold"], 5, "{record}");
        assert_eq!(record["lifetime_spend_cents"], 0, "{record}");
        assert_eq!(record["ledger_total"], 1, "{record}");
        let export = app.get_json(format!("{}/export", path(player))).await;
        // It joined the population again, today.
        assert_eq!(
            export["environments"][0]["install_day"],
            chrono::Utc::now().date_naive().to_string().as_str(),
            "{export}"
        );
        assert_eq!(
            export["environments"][0]["inventory"],
            json!([]),
            "{export}"
        );
        assert_eq!(
            export["environments"][0]["sessions"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
        assert_eq!(export["environments"][1]["ledger"], json!([]), "{export}");
    }
}

#[tokio::test]
async fn erasure_on_the_embedded_store_keeps_the_figures_and_leaves_no_trace() {
    erasure_keeps_the_figures_and_leaves_no_trace(Backend::Embedded).await;
}

#[tokio::test]
async fn erasure_on_redis_keeps_the_figures_and_leaves_no_trace() {
    erasure_keeps_the_figures_and_leaves_no_trace(Backend::Redis).await;
}

#[tokio::test]
async fn erasure_on_a_redis_cluster_keeps_the_figures_and_leaves_no_trace() {
    erasure_keeps_the_figures_and_leaves_no_trace(Backend::RedisCluster).await;
}

#[tokio::test]
async fn an_open_socket_of_the_erased_player_is_closed_on_every_node() {
    let app = spawn_app_on(shared_backend()).await;
    let peer = app.spawn_peer().await;
    let Sdk { game, key } = app.game_with(mixed_catalogue()).await;
    let (here, there) = (Uuid::new_v4(), Uuid::new_v4());
    let mut on_app = connect(&app, &key, Fmt::Json).await;
    assert_eq!(on_app.hello(here, None).await["type"], "ready");
    let mut on_peer = connect(&peer, &key, Fmt::Json).await;
    assert_eq!(on_peer.hello(there, None).await["type"], "ready");
    // Each session's player is `p-<session>`, as `hello` names it: the player on the peer is
    // erased through this node, the one on this node through the peer.
    app.delete(format!("/v1/games/{game}/players/p-{there}"))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(on_peer.close_code().await, 4010);
    peer.delete(format!("/v1/games/{game}/players/p-{here}"))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(on_app.close_code().await, 4010);
    // The session is gone for good: it does not resume.
    app.post(
        "/v1/sdk/events",
        json!({"session_id": here, "events": [earned("gold", 1, "x")]}),
    )
    .token(&key)
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;
}
