//! The model page in a real browser: what the AI level's learner has learned, the same as
//! `GET /v1/games/{game_id}/model` reports it.

use reqwest::StatusCode;
use serde_json::json;

use super::browser::{self, PASSWORD, add_member};
use super::fixtures::{mixed_catalogue, player};
use super::helpers::spawn_app;

#[tokio::test]
async fn a_viewer_reads_what_the_learner_learned() {
    let app = spawn_app().await;
    add_member(&app, "vi@studio-a.test", "viewer").await;
    let sdk = app.game_with(mixed_catalogue()).await;
    let b = browser::open(&app).await;
    b.sign_in("vi@studio-a.test", PASSWORD).await;
    b.go(&format!("/dashboard/games/{}/model", sdk.game)).await;
    let text = b.text().await;
    assert!(text.contains("Nothing learned yet"), "{text}");

    // The AI serves and learns from a few shows.
    app.set_guardrails(&sdk.game, json!({"max_price_cents": 100_000}))
        .await;
    for mode in ["assisted", "autonomous"] {
        app.set_mode(&sdk.game, mode).expect(StatusCode::OK).await;
    }
    let sid = app
        .open_session(
            &sdk,
            &player(&sdk.game, false),
            json!({"platform": "ios", "level": 20}),
        )
        .await;
    for _ in 0..5 {
        let offer = app
            .post(
                "/v1/sdk/offers/next",
                json!({"session_id": sid, "trigger_context": {"event_type": "boss_raid"}}),
            )
            .token(&sdk.key)
            .expect(StatusCode::OK)
            .await;
        app.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": [
                {"type": "offer_shown", "offer_id": offer["offer_id"]}]}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
    }
    let mut report = json!(null);
    for _ in 0..200 {
        report = app.get_json(format!("/v1/games/{}/model", sdk.game)).await;
        if report["offers"] == 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(report["offers"], 5, "{report}");
    b.go(&format!("/dashboard/games/{}/model", sdk.game)).await;
    b.shot("model").await;
    let text = b.text().await;
    assert!(
        text.contains("Early learning: 5 offers remembered of 5 shown"),
        "{text}"
    );
    let row = b
        .el("tr[data-trigger='boss_raid']")
        .await
        .text()
        .await
        .expect("a trigger row");
    let pick = report["by_trigger"]
        .as_array()
        .expect("by_trigger")
        .iter()
        .find(|t| t["trigger"] == "boss_raid")
        .expect("boss_raid")["pick"]["arm"]
        .clone();
    let price = pick["price_cents"].as_i64().expect("price");
    let shown = format!(
        "{} at ${}.{:02}",
        pick["category"].as_str().expect("category"),
        price / 100,
        price % 100
    );
    assert!(row.contains(&shown), "{shown} in {row}");
    assert!(row.contains('%'), "a conversion in {row}");
}
