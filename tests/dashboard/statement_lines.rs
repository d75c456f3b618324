//! The economy page over plain HTTP: the last closed month's statement lists its adjustment
//! lines (store refunds of earlier months' purchases that arrived in it) in a table, said to
//! be already counted in the amount due, and the month so far lists its own the same way.

use chrono::{Datelike, Utc};
use offer_domain::adjustment::{AdjustmentGroup, AdjustmentKind, AdjustmentLine};
use offer_domain::product_ids::Store;
use offer_engine::service::economy::adjustments;
use reqwest::StatusCode;
use serde_json::json;

use super::browser::add_member;
use super::helpers::spawn_app;
use super::history;
use super::web::{get_page, sign_in};

#[tokio::test]
async fn the_last_statement_shows_its_adjustment_lines_in_a_table() {
    let app = spawn_app().await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let sdk = app.game_with(json!([])).await;
    let game_id: uuid::Uuid = sdk.game.parse().expect("uuid");
    // Launched last month: a session played on its last day.
    let last = Utc::now().date_naive().with_day(1).expect("first") - chrono::Duration::days(1);
    let at = last.and_hms_opt(12, 0, 0).expect("noon").and_utc();
    history::played(
        &app,
        &sdk.game,
        &json!([{"type": "session_start", "player_id": "p1", "ts": at.to_rfc3339()}]),
    )
    .await;
    // A refund that arrived last month of a purchase of the month before, as its step
    // recorded it then.
    let line = AdjustmentLine {
        month: at.format("%Y-%m").to_string(),
        purchase_month: (last.with_day(1).expect("first") - chrono::Duration::days(1))
            .format("%Y-%m")
            .to_string(),
        kind: AdjustmentKind::Refund,
        store: Store::GooglePlay,
        transaction_id: "tok-old".into(),
        amount_usd: -4.99,
        group: AdjustmentGroup::Treatment,
        recorded_at: at,
    };
    adjustments::record(
        &app.running.state.services,
        game_id,
        "refund:google_play:tok-old",
        &line,
    )
    .await
    .expect("recorded");

    let v = sign_in(&app, "vic@studio-a.test").await;
    let path = format!("/dashboard/games/{}/economy?days=7", sdk.game);
    let answer = get_page(&app, &path, &v.cookie).await;
    assert_eq!(answer.status(), StatusCode::OK);
    let page = answer.text().await.expect("page");
    let table = page
        .split(r#"<table id="adjustments">"#)
        .nth(1)
        .expect("the statement lists its adjustment lines")
        .split("</table>")
        .next()
        .expect("the table");
    for cell in [
        "<td>refund</td>",
        "<td>google_play</td>",
        "<code>tok-old</code>",
        &format!("<td>{}</td>", line.purchase_month),
        "<td>treatment</td>",
        "<td>-$4.99</td>",
    ] {
        assert!(table.contains(cell), "{cell} in {table}");
    }
    assert!(
        page.contains(r#"<strong id="adjustments-usd">-$4.99</strong>"#),
        "{page}"
    );
}

#[tokio::test]
async fn the_month_so_far_shows_its_adjustment_lines_in_a_table() {
    let app = spawn_app().await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let sdk = app.game_with(json!([])).await;
    let game_id: uuid::Uuid = sdk.game.parse().expect("uuid");
    let now = Utc::now();
    // A refund that arrived this month of a purchase of last month, as its step records it.
    let line = AdjustmentLine {
        month: now.format("%Y-%m").to_string(),
        purchase_month: (now.date_naive().with_day(1).expect("first") - chrono::Duration::days(1))
            .format("%Y-%m")
            .to_string(),
        kind: AdjustmentKind::Refund,
        store: Store::AppStore,
        transaction_id: "3000000000000009".into(),
        amount_usd: -0.99,
        group: AdjustmentGroup::Holdout,
        recorded_at: now,
    };
    adjustments::record(
        &app.running.state.services,
        game_id,
        "refund:app_store:3000000000000009",
        &line,
    )
    .await
    .expect("recorded");

    let v = sign_in(&app, "vic@studio-a.test").await;
    let path = format!("/dashboard/games/{}/economy?days=7", sdk.game);
    let answer = get_page(&app, &path, &v.cookie).await;
    assert_eq!(answer.status(), StatusCode::OK);
    let page = answer.text().await.expect("page");
    let table = page
        .split(r#"<table id="month-adjustments">"#)
        .nth(1)
        .expect("the month so far lists its adjustment lines")
        .split("</table>")
        .next()
        .expect("the table");
    for cell in [
        "<td>refund</td>",
        "<td>app_store</td>",
        "<code>3000000000000009</code>",
        &format!("<td>{}</td>", line.purchase_month),
        "<td>holdout</td>",
        "<td>-$0.99</td>",
    ] {
        assert!(table.contains(cell), "{cell} in {table}");
    }
    assert!(
        page.contains(r#"<strong id="month-adjustments-usd">-$0.99</strong>"#),
        "{page}"
    );
    // No month has closed since launch: no statement, so no statement lines.
    assert!(!page.contains(r#"<table id="adjustments">"#), "{page}");
}
