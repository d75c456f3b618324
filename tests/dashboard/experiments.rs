//! The experiments page: a member sees each experiment's results; another studio's member
//! finds no such page.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::browser::{add_member, add_member_as};
use super::helpers::{Role, spawn_app};
use super::web::{get_page, sign_in};

#[tokio::test]
async fn the_experiments_page_shows_each_experiment_to_its_studio_only() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let exp: Value = app
        .post(
            format!("/v1/games/{game}/experiments"),
            json!({"variants": [{"name": "control", "weight": 1},
                {"name": "cheap", "weight": 1, "price_multiplier": 0.5}], "min_sample": 5}),
        )
        .expect(StatusCode::CREATED)
        .await;
    let id = exp["experiment_id"].as_str().expect("id");
    add_member(&app, "viewer@studio-a.test", "viewer").await;
    let viewer = sign_in(&app, "viewer@studio-a.test").await;
    let path = format!("/dashboard/games/{game}/experiments");
    let answer = get_page(&app, &path, &viewer.cookie).await;
    assert_eq!(answer.status(), StatusCode::OK);
    let page = answer.text().await.expect("page");
    assert!(
        page.contains(&format!("data-experiment-id=\"{id}\"")),
        "{page}"
    );
    assert!(page.contains("data-variant=\"cheap\""), "{page}");
    assert!(page.contains("Provisional"), "{page}");
    assert!(page.contains("data-srm=\"ok\""), "{page}");
    add_member_as(
        &app,
        &app.token("studio-b", Role::Admin),
        "bob@studio-b.test",
        "admin",
    )
    .await;
    let bob = sign_in(&app, "bob@studio-b.test").await;
    let answer = get_page(&app, &path, &bob.cookie).await;
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
}
