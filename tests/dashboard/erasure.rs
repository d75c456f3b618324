//! A player's erasure as the dashboard shows it: once the player is erased, no page of the
//! game names it (its decisions, the economy, the live view, the audit trail), and the audit
//! page shows the erasure under the tombstone.

use reqwest::StatusCode;
use serde_json::json;

use super::browser::add_member;
use super::fixtures::{earned, mixed_catalogue, spent};
use super::helpers::spawn_app;
use super::web::{get_page, sign_in};

/// The erased player: a distinctive id, so finding it on a page is a leak.
const PLAYER: &str = "erase-me-7f3a-dashboard";

#[tokio::test]
async fn no_page_names_an_erased_player_and_the_audit_page_names_its_tombstone() {
    let app = spawn_app().await;
    let sdk = app.game_with(mixed_catalogue()).await;
    let game = sdk.game.clone();
    let sid = app
        .open_session(&sdk, PLAYER, json!({"country": "FR", "platform": "ios"}))
        .await;
    app.post(
        "/v1/sdk/offers/next",
        json!({"session_id": sid, "trigger_context": {"event_type": "session_start"}}),
    )
    .token(&sdk.key)
    .send()
    .await;
    app.post(
        "/v1/sdk/events",
        json!({"session_id": sid, "events": [
            earned("gold", 100, "e1"),
            spent("gold", 80, "s1"),
            {"type": "purchase", "item_ids": ["sword"], "price_cents": 499, "tx_id": "p1"},
        ]}),
    )
    .token(&sdk.key)
    .expect(StatusCode::ACCEPTED)
    .await;

    let erased = app
        .delete(format!("/v1/games/{game}/players/{PLAYER}"))
        .expect(StatusCode::OK)
        .await;
    let tombstone = erased["tombstone"].as_str().expect("tombstone");

    add_member(&app, "boss@studio-a.test", "admin").await;
    let boss = sign_in(&app, "boss@studio-a.test").await;
    for page in [
        "", "/economy", "/offers", "/live", "/model", "/items", "/audit",
    ] {
        let path = format!("/dashboard/games/{game}{page}");
        let answer = get_page(&app, &path, &boss.cookie).await;
        assert_eq!(answer.status(), StatusCode::OK, "{path}");
        let text = answer.text().await.expect("page");
        assert!(!text.contains(PLAYER), "{path} names the erased player");
        if page == "/audit" {
            assert!(
                text.contains("data-action=\"player.erase\"") && text.contains(tombstone),
                "{text}"
            );
        }
    }
}
