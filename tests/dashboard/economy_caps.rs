//! The economy page over plain HTTP: what the per-player day caps left out of the figures, per
//! currency and why (the studio's cap), and the events refused by code.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use super::browser::add_member;
use super::fixtures::earned;
use super::helpers::spawn_app;
use super::web::{get_page, sign_in};

#[tokio::test]
async fn the_economy_page_shows_what_the_caps_left_out_and_the_refused_events_by_code() {
    let app = spawn_app().await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let sdk = app.game_with(json!([])).await;
    app.patch(
        format!("/v1/games/{}", sdk.game),
        json!({"currencies": [
            {"currency_id": "gems", "kind": "hard", "max_per_event": 1000},
            {"currency_id": "gold", "kind": "earned", "max_per_player_day": 500}]}),
    )
    .expect(StatusCode::OK)
    .await;
    app.send_events(
        &sdk,
        "grinder",
        json!([
            earned("gold", 400, "e1"),
            earned("gold", 300, "e2"),
            earned("gems", 2000, "refused")
        ]),
    )
    .await;
    let v = sign_in(&app, "vic@studio-a.test").await;
    let path = format!("/dashboard/games/{}/economy?days=7", sdk.game);
    // Refusals reach the store's counters at the next flush of the node's tally.
    let mut page = String::new();
    for _ in 0..100 {
        let answer = get_page(&app, &path, &v.cookie).await;
        assert_eq!(answer.status(), StatusCode::OK);
        page = answer.text().await.expect("page");
        if page.contains(r#"data-code="amount_out_of_bounds""#) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let refused = page
        .split(r#"<tr data-code="amount_out_of_bounds">"#)
        .nth(1)
        .expect("the refused events list the code");
    assert!(
        refused
            .starts_with(r#"<td><code>amount_out_of_bounds</code></td><td class="count">1</td>"#),
        "{refused}"
    );
    let gold = page
        .split(r#"<tr data-currency="gold">"#)
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .expect("a row for gold");
    assert!(gold.contains("500 / 500"), "{gold}");
    assert!(gold.contains("studio (max_per_player_day)"), "{gold}");
    assert!(
        gold.contains(r#"<td class="earned-left-out">200</td>"#),
        "{gold}"
    );
    assert!(
        gold.contains(r#"<td class="players-capped">1</td>"#),
        "{gold}"
    );
    let gems = page
        .split(r#"<tr data-currency="gems">"#)
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .expect("a row for gems");
    assert!(gems.contains("no cap yet"), "{gems}");
}
