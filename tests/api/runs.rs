//! Authoring runs through the real HTTP surface: opening, listing and reading runs; drafts
//! named in a run recorded with who and how they ended; a cloud run refused until a second
//! member confirms it; the comparison limit; nothing of another studio or game. The
//! validate limit is counted by the same reservation as comparisons (`service::runs`); its
//! HTTP test belongs with the validate endpoint.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::helpers::{Role, TestApp, spawn_app};

const RUN_HEADER: &str = "X-Authoring-Run";

fn runs_path(game: &str) -> String {
    format!("/v1/games/{game}/custom-pages/runs")
}

fn draft_path(game: &str) -> String {
    format!("/v1/games/{game}/custom-pages/draft")
}

fn draft() -> Value {
    json!({"template": "class Page {}", "bindings": {"items": []}})
}

/// Opens a run of `game` in `mode` with `token`; returns it.
async fn open(app: &TestApp, game: &str, token: &str, mode: &str) -> Value {
    app.post(runs_path(game), json!({ "mode": mode }))
        .token(token)
        .expect(StatusCode::CREATED)
        .await
}

fn id(v: &Value, field: &str) -> String {
    v[field].as_str().expect("an id").to_owned()
}

#[tokio::test]
async fn a_run_records_its_drafts_with_who_and_how_they_ended() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let (key, key_id) = app.authoring_key(&game).await;
    let run = open(&app, &game, &key, "local").await;
    assert_eq!(run["mode"], "local");
    assert_eq!(run["opened_by"], format!("authoring_key:{key_id}"));
    assert_eq!(run["key_id"], key_id.as_str());
    assert_eq!(run["key_issued_by"], "alice");
    assert_eq!(run["calls"], json!([]));
    assert!(run["created_at"].is_string() && run["expires_at"].is_string());
    let run_id = id(&run, "run_id");

    let saved = app
        .post(draft_path(&game), draft())
        .token(&key)
        .header(RUN_HEADER, &run_id)
        .expect(StatusCode::CREATED)
        .await;
    // A refused save is recorded with its status and code.
    app.post(
        draft_path(&game),
        json!({"page_id": uuid::Uuid::new_v4(), "template": "x", "bindings": {}}),
    )
    .token(&key)
    .header(RUN_HEADER, &run_id)
    .expect_error(StatusCode::NOT_FOUND, "not_found")
    .await;
    // Without the header a save is not recorded.
    app.post(draft_path(&game), draft())
        .token(&key)
        .expect(StatusCode::CREATED)
        .await;

    let read = app.get_json(format!("{}/{run_id}", runs_path(&game))).await;
    let calls = read["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 2, "{read}");
    assert_eq!(calls[0]["seq"], 1);
    assert_eq!(calls[0]["kind"], "draft");
    assert_eq!(calls[0]["by"], format!("authoring_key:{key_id}"));
    assert_eq!(calls[0]["key_id"], key_id.as_str());
    assert_eq!(
        calls[0]["outcome"],
        json!({"status": 201, "page_id": saved["page_id"], "version": 1})
    );
    assert_eq!(
        calls[1]["outcome"],
        json!({"status": 404, "code": "not_found"})
    );

    // Listed for the dashboard, newest first, a viewer included.
    let later = open(&app, &game, &app.admin, "local").await;
    assert_eq!(later["opened_by"], "alice");
    assert!(later.get("key_id").is_none());
    let viewer = app.token("studio-a", Role::Viewer);
    let listed = app
        .get(runs_path(&game))
        .token(&viewer)
        .expect(StatusCode::OK)
        .await;
    let ids: Vec<&str> = listed["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["run_id"].as_str().expect("id"))
        .collect();
    assert_eq!(ids, [id(&later, "run_id"), run_id.clone()]);
    // A viewer cannot open a run.
    app.post(runs_path(&game), json!({"mode": "local"}))
        .token(&viewer)
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    app.post(runs_path(&game), json!({"mode": "orbit"}))
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
}

#[tokio::test]
async fn a_cloud_run_is_refused_until_a_second_member_confirms_it() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    // The admin ("alice") approves the key; "user" is another developer of the studio.
    let (key, _) = app.authoring_key(&game).await;
    let run = open(&app, &game, &key, "cloud").await;
    let run_id = id(&run, "run_id");
    let refused = app
        .post(draft_path(&game), draft())
        .token(&key)
        .header(RUN_HEADER, &run_id)
        .expect_error(StatusCode::CONFLICT, "run_not_confirmed")
        .await;
    assert!(refused["error"]["message"].is_string());
    // Outside the run the key works as ever.
    app.post(draft_path(&game), draft())
        .token(&key)
        .expect(StatusCode::CREATED)
        .await;

    let confirm = format!("{}/{run_id}/confirm", runs_path(&game));
    app.post(&confirm, json!({}))
        .expect_error(StatusCode::FORBIDDEN, "second_member_required")
        .await;
    app.post(&confirm, json!({}))
        .token(&key)
        .expect(StatusCode::FORBIDDEN)
        .await;
    app.post(&confirm, json!({}))
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    let developer = app.token("studio-a", Role::Developer);
    let confirmed = app
        .post(&confirm, json!({}))
        .token(&developer)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(confirmed["confirmed_by"], "user");
    assert!(confirmed["confirmed_at"].is_string());
    app.post(&confirm, json!({}))
        .token(&developer)
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;

    app.post(draft_path(&game), draft())
        .token(&key)
        .header(RUN_HEADER, &run_id)
        .expect(StatusCode::CREATED)
        .await;
    let read = app.get_json(format!("{}/{run_id}", runs_path(&game))).await;
    let statuses: Vec<&Value> = read["calls"]
        .as_array()
        .expect("calls")
        .iter()
        .map(|c| &c["outcome"]["status"])
        .collect();
    assert_eq!(statuses, [&json!(409), &json!(201)], "{read}");
    assert_eq!(read["calls"][0]["outcome"]["code"], "run_not_confirmed");

    // A local run needs no confirmation.
    let local = open(&app, &game, &key, "local").await;
    app.post(
        format!("{}/{}/confirm", runs_path(&game), id(&local, "run_id")),
        json!({}),
    )
    .token(&developer)
    .expect_error(StatusCode::CONFLICT, "conflict")
    .await;
}

#[tokio::test]
async fn a_run_takes_three_comparisons_and_refuses_the_fourth() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let (key, _) = app.authoring_key(&game).await;
    let run = open(&app, &game, &key, "local").await;
    let path = format!("{}/{}/comparisons", runs_path(&game), id(&run, "run_id"));
    for n in 1..=3 {
        let after = app
            .post(&path, json!({"score": 0.5 + f64::from(n) / 10.0}))
            .token(&key)
            .expect(StatusCode::CREATED)
            .await;
        assert_eq!(after["comparisons"], n);
    }
    let refused = app
        .post(&path, json!({"score": 0.99}))
        .token(&key)
        .expect_error(StatusCode::CONFLICT, "run_limit_reached")
        .await;
    assert_eq!(
        refused["error"]["details"],
        json!({"limit": "comparison", "max": 3})
    );
    app.post(&path, json!({"score": 1.5}))
        .token(&key)
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    let read = app
        .get_json(format!("{}/{}", runs_path(&game), id(&run, "run_id")))
        .await;
    let calls = read["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 4);
    assert_eq!(calls[2]["outcome"]["score"], 0.8);
    assert_eq!(calls[3]["outcome"]["code"], "run_limit_reached");
    assert_eq!(read["comparisons"], 3);
}

#[tokio::test]
async fn another_studios_or_games_run_names_nothing() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let other = app.create_game().await;
    let run = open(&app, &game, &app.admin, "local").await;
    let run_id = id(&run, "run_id");
    let stranger = app.token("studio-b", Role::Admin);
    app.get(format!("{}/{run_id}", runs_path(&game)))
        .token(&stranger)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(runs_path(&game))
        .token(&stranger)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // The run of one game, named on another game of the same studio.
    app.get(format!("{}/{run_id}", runs_path(&other)))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.post(draft_path(&other), draft())
        .header(RUN_HEADER, &run_id)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    for bad in [uuid::Uuid::new_v4().to_string(), "not-a-run".to_owned()] {
        app.post(draft_path(&game), draft())
            .header(RUN_HEADER, bad)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    // Nothing was recorded in the run by those.
    let read = app.get_json(format!("{}/{run_id}", runs_path(&game))).await;
    assert_eq!(read["calls"], json!([]));
}
