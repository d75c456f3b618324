//! The economy page over plain HTTP: the revenue of the page's days side by side, what
//! counts (as the game reported it while receipts are not checked), what the stores refunded
//! and what was kept unverified, the figures the REST revenue report gives.

use reqwest::StatusCode;
use serde_json::json;

use super::browser::add_member;
use super::helpers::spawn_app;
use super::web::{get_page, sign_in};

#[tokio::test]
async fn the_economy_page_shows_revenue_counted_refunded_and_unverified() {
    let app = spawn_app().await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let sdk = app.game_with(json!([])).await;
    app.send_events(
        &sdk,
        "payer",
        json!([{"type": "purchase", "item_ids": [], "price_cents": 1_250, "tx_id": "b1"}]),
    )
    .await;
    let report = app
        .get_json(format!("/v1/games/{}/economy/revenue?days=7", sdk.game))
        .await;
    assert_eq!(report["counted_cents"], 1_250, "{report}");

    let v = sign_in(&app, "vic@studio-a.test").await;
    let path = format!("/dashboard/games/{}/economy?days=7", sdk.game);
    let answer = get_page(&app, &path, &v.cookie).await;
    assert_eq!(answer.status(), StatusCode::OK);
    let page = answer.text().await.expect("page");
    let table = page
        .split(r#"<table id="revenue">"#)
        .nth(1)
        .expect("the page shows the revenue by proof")
        .split("</table>")
        .next()
        .expect("the table");
    for cell in [
        "As the game reported it, net of refunds",
        r#"<td id="revenue-counted">$12.50</td>"#,
        r#"<td id="revenue-refunded">$0.00</td>"#,
        r#"<td id="revenue-unverified">$0.00</td>"#,
    ] {
        assert!(table.contains(cell), "{cell} in {table}");
    }
    assert!(page.contains("Revenue, last 7 days"), "{page}");
}
