//! Device sign-in of the authoring tool through the real HTTP surface: start, approve or
//! deny in the dashboard, poll for the key; the refusals of RFC 8628 (pending, slow_down,
//! expired, denied, a key handed out once); the rate limits on guessing user codes and on
//! polling; one sign-in served by three nodes; studio and role checks.

use std::time::{Duration, Instant};

use reqwest::header::RETRY_AFTER;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::helpers::{
    Role, TestApp, default_backend, shared_backend, spawn_app, spawn_app_on, spawn_tuned,
};
use super::http::Call;

/// Starts a sign-in (no credential).
async fn start(app: &TestApp) -> Value {
    app.call(Method::POST, "/v1/auth/device")
        .no_token()
        .expect(StatusCode::OK)
        .await
}

/// A poll for the key of `sign_in` (no credential).
#[track_caller]
fn poll<'a>(app: &'a TestApp, sign_in: &Value) -> Call<'a> {
    app.post(
        "/v1/auth/device/token",
        json!({"device_code": sign_in["device_code"]}),
    )
    .no_token()
}

/// An approval of `user_code` for `game`, as the admin unless the call's token is changed.
#[track_caller]
fn approve<'a>(app: &'a TestApp, user_code: &str, game: &str) -> Call<'a> {
    app.post(
        "/v1/auth/device/approve",
        json!({"user_code": user_code, "game_id": game}),
    )
}

fn user_code(sign_in: &Value) -> &str {
    sign_in["user_code"].as_str().expect("user code")
}

#[tokio::test]
async fn a_sign_in_approved_in_the_dashboard_hands_out_a_working_key_once() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let sign_in = start(&app).await;
    let code = user_code(&sign_in);
    // XXXX-XXXX from the 20 consonants, a long device code, the configured timings.
    assert_eq!(code.len(), 9);
    assert_eq!(&code[4..5], "-");
    assert!(
        code.chars()
            .filter(|c| *c != '-')
            .all(|c| "BCDFGHJKLMNPQRSTVWXZ".contains(c)),
        "{code}"
    );
    assert!(sign_in["device_code"].as_str().expect("code").len() >= 40);
    assert_eq!(sign_in["interval"], 5);
    assert_eq!(sign_in["expires_in"], 600);
    assert!(sign_in["verification_uri"].is_string());

    poll(&app, &sign_in)
        .expect_error(StatusCode::BAD_REQUEST, "authorization_pending")
        .await;
    // Typed in lower case without the dash, it is the same code.
    let typed = code.replace('-', "").to_lowercase();
    approve(&app, &typed, &game)
        .expect(StatusCode::NO_CONTENT)
        .await;
    // Approved: the next poll gets the key at once, however soon it comes.
    let issued = poll(&app, &sign_in).expect(StatusCode::OK).await;
    let key = issued["authoring_key"].as_str().expect("key");
    assert!(key.starts_with("ofr_auth_"), "{key}");
    assert!(issued["expires_at"].is_string());
    app.get(format!("/v1/games/{game}/items"))
        .token(key)
        .expect(StatusCode::OK)
        .await;
    app.post(
        format!("/v1/games/{game}/custom-pages/draft"),
        json!({"template": "class Page {}", "bindings": {}}),
    )
    .token(key)
    .expect(StatusCode::CREATED)
    .await;
    // It is an authoring key of that game like a dashboard one: listed, 90 days, with who
    // approved it.
    let keys = app.get_json(format!("/v1/games/{game}/keys")).await;
    let listed = keys["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .find(|k| k["key_id"] == issued["key_id"])
        .expect("the key is listed")
        .clone();
    assert_eq!(listed["kind"], "authoring");
    assert_eq!(listed["issued_by"], "alice");
    let expires: chrono::DateTime<chrono::Utc> =
        serde_json::from_value(issued["expires_at"].clone()).expect("time");
    let days = (expires - chrono::Utc::now()).num_days();
    assert!((89..=90).contains(&days), "{days}");

    // Handed out once: the next poll is told the sign-in is over; the code is used.
    poll(&app, &sign_in)
        .expect_error(StatusCode::BAD_REQUEST, "expired_token")
        .await;
    approve(&app, code, &game)
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    app.post("/v1/auth/device/deny", json!({"user_code": code}))
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    // Revoked like any authoring key.
    let key_id = issued["key_id"].as_str().expect("id");
    app.delete(format!("/v1/games/{game}/authoring-keys/{key_id}"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    app.get(format!("/v1/games/{game}/items"))
        .token(key)
        .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
        .await;
}

#[tokio::test]
async fn polling_before_the_interval_slows_down_and_grows_the_interval() {
    let app = spawn_app().await;
    let sign_in = start(&app).await;
    poll(&app, &sign_in)
        .expect_error(StatusCode::BAD_REQUEST, "authorization_pending")
        .await;
    for interval in [10, 15] {
        let refused = poll(&app, &sign_in)
            .expect_error(StatusCode::BAD_REQUEST, "slow_down")
            .await;
        assert_eq!(refused["error"]["details"]["interval"], interval);
    }
}

#[tokio::test]
async fn a_sign_in_past_its_lifetime_can_be_neither_approved_nor_redeemed() {
    let app = spawn_tuned(default_backend(), |s| {
        s.device.code_ttl_s = 1.try_into().expect("non-zero");
    })
    .await;
    let game = app.create_game().await;
    let sign_in = start(&app).await;
    assert_eq!(sign_in["expires_in"], 1);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = poll(&app, &sign_in).expect(StatusCode::BAD_REQUEST).await;
        let code = answer["error"]["code"].as_str().expect("code").to_owned();
        if code == "expired_token" {
            break;
        }
        assert!(
            ["authorization_pending", "slow_down"].contains(&code.as_str()),
            "{answer}"
        );
        assert!(Instant::now() < deadline, "the sign-in never expired");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    approve(&app, user_code(&sign_in), &game)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn a_denied_sign_in_answers_access_denied() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let sign_in = start(&app).await;
    let developer = app.token("studio-a", Role::Developer);
    app.post(
        "/v1/auth/device/deny",
        json!({"user_code": user_code(&sign_in)}),
    )
    .token(&developer)
    .expect(StatusCode::NO_CONTENT)
    .await;
    for _ in 0..2 {
        poll(&app, &sign_in)
            .expect_error(StatusCode::BAD_REQUEST, "access_denied")
            .await;
    }
    approve(&app, user_code(&sign_in), &game)
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
}

#[tokio::test]
async fn codes_that_name_nothing_are_refused_without_a_key() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    for device_code in ["x", "0123456789012345678901234567890123456789abc"] {
        app.post("/v1/auth/device/token", json!({"device_code": device_code}))
            .no_token()
            .expect_error(StatusCode::BAD_REQUEST, "invalid_grant")
            .await;
    }
    // Not a user code at all (a vowel, too short): 422 naming the field; well-formed but
    // unknown: 404.
    for malformed in ["ABCD-EFGH", "BCDF-GHJ", " BCDF-GHJK"] {
        let refused = approve(&app, malformed, &game)
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
        assert_eq!(
            refused["error"]["details"]["errors"][0]["field"],
            "user_code"
        );
    }
    approve(&app, "BCDF-GHJK", &game)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn only_a_developer_of_the_games_studio_approves() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let sign_in = start(&app).await;
    let code = user_code(&sign_in);
    // Another studio's game names nothing; a viewer may not; keys are not dashboard users.
    approve(&app, code, &game)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    approve(&app, code, &game)
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    app.post("/v1/auth/device/deny", json!({"user_code": code}))
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    let (authoring, _) = app.authoring_key(&game).await;
    approve(&app, code, &game)
        .token(&authoring)
        .expect_error(StatusCode::FORBIDDEN, "wrong_credential")
        .await;
    approve(&app, code, &game)
        .no_token()
        .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
        .await;
    // None of that used the code: a developer of the studio approves it.
    poll(&app, &sign_in)
        .expect_error(StatusCode::BAD_REQUEST, "authorization_pending")
        .await;
    approve(&app, code, &game)
        .token(&app.token("studio-a", Role::Developer))
        .expect(StatusCode::NO_CONTENT)
        .await;
    poll(&app, &sign_in).expect(StatusCode::OK).await;
}

/// Asserts a 429 `rate_limited` with a `Retry-After` of at least a second.
async fn assert_limited(call: Call<'_>) {
    let r = call.send().await;
    assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry: u64 = r
        .headers()
        .get(RETRY_AFTER)
        .expect("Retry-After")
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!(retry >= 1);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["error"]["code"], "rate_limited", "{body}");
    assert_eq!(body["error"]["details"]["retry_after"], retry);
}

#[tokio::test]
async fn guessing_user_codes_hits_the_users_limit_then_the_nodes() {
    let app = spawn_tuned(default_backend(), |s| {
        s.device.attempts_per_user_per_minute = 3.try_into().expect("non-zero");
        s.device.attempts_per_minute = 5.try_into().expect("non-zero");
    })
    .await;
    let game = app.create_game().await;
    let sign_in = start(&app).await;
    let guesser = app.token("studio-a", Role::Developer);
    for guess in ["BCDF-GHJK", "BCDF-GHJL", "BCDF-GHJM"] {
        approve(&app, guess, &game)
            .token(&guesser)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    // Past the user's limit even the right code is refused before it is looked up.
    assert_limited(approve(&app, user_code(&sign_in), &game).token(&guesser)).await;
    assert_limited(
        app.post("/v1/auth/device/deny", json!({"user_code": "BCDF-GHJN"}))
            .token(&guesser),
    )
    .await;
    // Another user has a limit of their own, until the node's is spent (5 in all).
    let other = app
        .codec
        .mint(
            "bob",
            "studio-a",
            Role::Developer,
            chrono::Duration::hours(1),
        )
        .expect("mint");
    for guess in ["BCDF-GHJP", "BCDF-GHJQ"] {
        approve(&app, guess, &game)
            .token(&other)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    assert_limited(approve(&app, user_code(&sign_in), &game).token(&other)).await;
    assert_limited(approve(&app, user_code(&sign_in), &game)).await;
    // Nothing was approved: the tool still waits.
    poll(&app, &sign_in)
        .expect_error(StatusCode::BAD_REQUEST, "authorization_pending")
        .await;
}

#[tokio::test]
async fn starting_and_polling_are_limited_per_address() {
    let app = spawn_tuned(default_backend(), |s| {
        s.device.starts_per_ip_per_minute = 2.try_into().expect("non-zero");
        s.device.polls_per_ip_per_minute = 2.try_into().expect("non-zero");
    })
    .await;
    let sign_in = start(&app).await;
    start(&app).await;
    assert_limited(app.call(Method::POST, "/v1/auth/device").no_token()).await;
    poll(&app, &sign_in)
        .expect_error(StatusCode::BAD_REQUEST, "authorization_pending")
        .await;
    poll(&app, &sign_in)
        .expect_error(StatusCode::BAD_REQUEST, "slow_down")
        .await;
    assert_limited(poll(&app, &sign_in)).await;
}

#[tokio::test]
async fn a_sign_in_started_on_one_node_is_approved_on_another_and_redeemed_on_a_third() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let c = a.spawn_peer().await;
    let game = a.create_game().await;
    let sign_in = start(&a).await;
    poll(&c, &sign_in)
        .expect_error(StatusCode::BAD_REQUEST, "authorization_pending")
        .await;
    approve(&b, user_code(&sign_in), &game)
        .expect(StatusCode::NO_CONTENT)
        .await;
    // Two nodes race for the key: one gets it, the other hears the sign-in is over.
    let (first, second) = tokio::join!(poll(&c, &sign_in).send(), poll(&a, &sign_in).send());
    let mut statuses = [first.status(), second.status()];
    statuses.sort();
    assert_eq!(statuses, [StatusCode::OK, StatusCode::BAD_REQUEST]);
    let issued: Value = if first.status() == StatusCode::OK {
        first.json().await.expect("json")
    } else {
        second.json().await.expect("json")
    };
    let key = issued["authoring_key"].as_str().expect("key");
    for node in [&a, &b, &c] {
        node.get(format!("/v1/games/{game}/items"))
            .token(key)
            .expect(StatusCode::OK)
            .await;
    }
}
