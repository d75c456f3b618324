//! Who counts as a player: only a player that played (a session with an accepted event
//! beyond `session_start`) counts towards monthly players, the plan and the holdout groups,
//! so ids a script makes up and only opens sessions for count nowhere; and each SDK key may
//! open sessions for only so many new player ids a minute, over REST and the socket.

use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{earned, spent, store_shelf};
use super::helpers::{TestApp, default_backend, shared_backend, spawn_tuned};
use super::ws_client::{Fmt, connect};

/// Opens a session of `player` over REST with `key`; answers the status and body.
async fn open(app: &TestApp, key: &str, player: &str) -> (StatusCode, Value, Option<String>) {
    let resp = app
        .post(
            "/v1/sdk/sessions",
            json!({"session_id": Uuid::new_v4(), "player_id": player}),
        )
        .token(key)
        .send()
        .await;
    let status = resp.status();
    let retry = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = resp.json().await.unwrap_or(Value::Null);
    (status, body, retry)
}

/// Sends `events` in session `sid` with `key`.
async fn events(app: &TestApp, key: &str, sid: &str, events: Value) -> Value {
    app.post(
        "/v1/sdk/events",
        json!({"session_id": sid, "events": events}),
    )
    .token(key)
    .expect(StatusCode::ACCEPTED)
    .await
}

/// Monthly players, treatment and holdout players of the game, as its figures say.
async fn counted(app: &TestApp, game: &str) -> (Value, Value, Value) {
    let share = app
        .get_json(format!("/v1/games/{game}/revenue-share"))
        .await;
    let arpu = app.get_json(format!("/v1/games/{game}/holdout-arpu")).await;
    (
        share["monthly_players"].clone(),
        arpu["n_treatment"].clone(),
        arpu["n_control"].clone(),
    )
}

#[tokio::test]
async fn players_that_only_open_sessions_count_nowhere_until_they_play() {
    let app = spawn_tuned(shared_backend(), |s| s.economy.figures_cache_ms = 0).await;
    let sdk = app.game_with(store_shelf()).await;
    // Forty made-up ids open sessions, some twice, and send only `session_start`.
    let mut sessions = Vec::new();
    for i in 0..40 {
        let player = format!("made_up_{i}");
        let (status, body, _) = open(&app, &sdk.key, &player).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let sid = body["session_id"].as_str().expect("session id").to_owned();
        events(&app, &sdk.key, &sid, json!([{"type": "session_start"}])).await;
        sessions.push((player, sid));
    }
    assert_eq!(
        counted(&app, &sdk.game).await,
        (json!(0), json!(0), json!(0))
    );

    // An event the engine refuses (a spend above the balance) is no play either.
    let (_, sid) = &sessions[0];
    let answer = events(&app, &sdk.key, sid, json!([spent("gold", 5, "over")])).await;
    assert_eq!(
        answer["rejected"].as_array().map(Vec::len),
        Some(1),
        "{answer}"
    );
    assert_eq!(
        counted(&app, &sdk.game).await,
        (json!(0), json!(0), json!(0))
    );

    // Three of them play: each counts once, in its hash-assigned group, however many
    // events and sessions it has.
    for (player, sid) in &sessions[..3] {
        events(
            &app,
            &sdk.key,
            sid,
            json!([earned("gold", 10, format!("{player}_a"))]),
        )
        .await;
        app.send_events(&sdk, player, json!([{"type": "first_loss"}]))
            .await;
    }
    let (monthly, treatment, holdout) = counted(&app, &sdk.game).await;
    assert_eq!(monthly, 3);
    assert_eq!(
        treatment.as_u64().unwrap_or(0) + holdout.as_u64().unwrap_or(0),
        3,
        "treatment {treatment}, holdout {holdout}"
    );
    // Another node reads the same count.
    let peer = app.spawn_peer().await;
    let share = peer
        .get_json(format!("/v1/games/{}/revenue-share", sdk.game))
        .await;
    assert_eq!(share["monthly_players"], 3, "{share}");
}

#[tokio::test]
async fn each_key_opens_sessions_for_only_so_many_new_players_a_minute() {
    let app = spawn_tuned(default_backend(), |s| {
        s.players.new_per_minute_per_key = std::num::NonZeroU32::new(3).expect("3");
    })
    .await;
    let sdk = app.game_with(store_shelf()).await;
    let mut opened = Vec::new();
    for i in 0..3 {
        let (status, body, _) = open(&app, &sdk.key, &format!("new_{i}")).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        opened.push(body["session_id"].as_str().expect("sid").to_owned());
    }
    // One that plays is no longer new.
    events(&app, &sdk.key, &opened[0], json!([{"type": "first_loss"}])).await;

    // The fourth new id is refused, with when to come back, and nothing is opened.
    let (status, body, retry) = open(&app, &sdk.key, "new_3").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"]["code"], "new_player_rate_limited", "{body}");
    let wait = body["error"]["details"]["retry_after"]
        .as_u64()
        .expect("retry_after");
    assert!((1..=60).contains(&wait), "{body}");
    assert_eq!(retry, Some(wait.to_string()));

    // Over the socket too.
    let mut socket = connect(&app, &sdk.key, Fmt::Json).await;
    let answer = socket.hello(Uuid::new_v4(), None).await;
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], "new_player_rate_limited", "{answer}");

    // A player that played is known: it opens again past the limit.
    let (status, body, _) = open(&app, &sdk.key, "new_0").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // Another key of the same game has its own budget.
    let other = app.sdk_key(&sdk.game, "production").await;
    let (status, body, _) = open(&app, &other, "new_3").await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}
