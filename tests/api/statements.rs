//! The monthly statement through the real HTTP surface: a closed month bills the base fee of
//! the plan its monthly players put the game on (a plan priced by contract bills the
//! studio's contracted fee), plus the revenue share only when the month was eligible; each
//! plan boundary lands on the right plan, the CSV carries the same figures, and a month not
//! closed, malformed or asked by a non-admin is refused. A month lists its adjustment lines
//! (refunds of earlier months' purchases that arrived in it), already counted in its
//! figures, in the JSON and one CSV row each.

use chrono::{Datelike, NaiveDate, Utc};
use offer_domain::adjustment::{AdjustmentGroup, AdjustmentKind, AdjustmentLine};
use offer_engine::service::economy::adjustments;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::economy::{past, players_of, purchase};
use super::fixtures::store_shelf;
use super::helpers::{Role, TestApp, default_backend, remove_scratch, scratch_dir, spawn_tuned};
use super::history;

/// A plans table with limits small enough to cross in a test: 2, 4 and 6 monthly players.
const PLANS: &str = r#"
[[plans]]
name = "Indie"
max_monthly_players = 2
base_fee_usd = 299.0

[[plans]]
name = "Studio"
max_monthly_players = 4
base_fee_usd = 799.0

[[plans]]
name = "Scale"
max_monthly_players = 6
base_fee_usd = 2499.0

[[plans]]
name = "Enterprise"
"#;

/// Noon UTC of the last day of the previous month.
fn last_month_end() -> chrono::DateTime<Utc> {
    let first = Utc::now().date_naive().with_day(1).expect("first");
    let last: NaiveDate = first.pred_opt().expect("previous day");
    last.and_hms_opt(12, 0, 0).expect("noon").and_utc()
}

/// The previous month, `YYYY-MM`.
fn last_month() -> String {
    last_month_end().format("%Y-%m").to_string()
}

/// A game launched last month (a session played on its last day) with `players` playing
/// today (a session and a `first_loss` each, `players` at least 1), and two treated payers
/// and one holdout payer last month; its statement of last month.
async fn statement_with(app: &TestApp, players: usize) -> Value {
    let sdk = app.game_with(store_shelf()).await;
    let treated = players_of(&sdk.game, false, 2);
    let held = players_of(&sdk.game, true, 1);
    let at = last_month_end();
    let events = json!([
        past(&treated[0], json!({"type": "session_start"}), at),
        past(&treated[0], purchase(1_000, "t0"), at),
        past(&treated[1], purchase(1_000, "t1"), at),
        past(&held[0], purchase(200, "c0"), at),
    ]);
    history::played(app, &sdk.game, &events).await;
    // The payer whose session launched the game plays today too, so it counts whatever
    // today's date (its session of last month may be within the last 30 days or not).
    let live = std::iter::once(treated[0].clone()).chain((1..players).map(|i| format!("live_{i}")));
    for player in live {
        app.send_events(&sdk, &player, json!([{"type": "first_loss"}]))
            .await;
    }
    app.get_json(format!(
        "/v1/games/{}/statements?month={}",
        sdk.game,
        last_month()
    ))
    .await
}

#[tokio::test]
async fn each_plan_boundary_bills_its_base_fee_and_no_share_without_eligibility() {
    let dir = scratch_dir();
    let plans = dir.join("plans.toml");
    std::fs::write(&plans, PLANS).expect("write the plans");
    let app = spawn_tuned(default_backend(), |s| {
        s.economy.figures_cache_ms = 0;
        s.billing.plans_file = plans.display().to_string();
        s.billing.default_rate_pct = 20.0;
        s.billing
            .contract_fees_usd
            .insert("studio-a".into(), 9_500.0);
    })
    .await;
    for (players, plan, fee) in [
        (2, "Indie", 299.0),
        (3, "Studio", 799.0),
        (4, "Studio", 799.0),
        (5, "Scale", 2_499.0),
        (6, "Scale", 2_499.0),
        (7, "Enterprise", 9_500.0),
    ] {
        let s = statement_with(&app, players).await;
        assert_eq!(s["month"], last_month(), "{s}");
        assert_eq!(s["monthly_players"], players, "{s}");
        assert_eq!(s["plan"], plan, "{players} players: {s}");
        assert_eq!(s["base_fee_usd"], fee, "{s}");
        // Two treated payers of $10 against one holdout payer of $2: an uplift, measured,
        // but far from the players a verdict needs, so only the base fee is due.
        assert!(
            s["uplift_revenue_usd"].as_f64().expect("uplift") > 0.0,
            "{s}"
        );
        assert_eq!(s["eligible"], false, "{s}");
        assert_eq!(s["rate_pct"], 20.0, "{s}");
        assert_eq!(s["revenue_share_usd"], 0.0, "{s}");
        assert_eq!(s["amount_due_usd"], fee, "{s}");
    }
    remove_scratch(&plans);
}

#[tokio::test]
async fn the_statement_reads_as_csv_and_only_for_a_closed_month_and_an_admin() {
    let app = spawn_tuned(default_backend(), |s| s.economy.figures_cache_ms = 0).await;
    let sdk = app.game_with(store_shelf()).await;
    let at = last_month_end();
    history::played(
        &app,
        &sdk.game,
        &json!([past("p1", json!({"type": "session_start"}), at)]),
    )
    .await;
    let path = format!("/v1/games/{}/statements", sdk.game);
    let json = app.get_json(format!("{path}?month={}", last_month())).await;
    // The compiled-in plans: the first plan's fee of $299, nothing else due.
    assert_eq!(json["plan"], "Indie");
    assert_eq!(json["amount_due_usd"], 299.0);
    // The standing shows the same split for the month so far.
    let share = app
        .get_json(format!("/v1/games/{}/revenue-share", sdk.game))
        .await;
    assert_eq!(share["base_fee_usd"], 299.0, "{share}");
    assert_eq!(share["revenue_share_usd"], 0.0, "{share}");
    assert_eq!(share["amount_due_usd"], 299.0, "{share}");
    assert_eq!(
        share["last_decision"], json,
        "the statement is the month's decision"
    );

    let csv = app
        .get(format!("{path}?month={}&format=csv", last_month()))
        .send()
        .await;
    assert_eq!(csv.status(), StatusCode::OK);
    assert!(
        csv.headers()[reqwest::header::CONTENT_TYPE]
            .to_str()
            .expect("type")
            .starts_with("text/csv")
    );
    let text = csv.text().await.expect("csv");
    for line in [
        "field,value",
        &format!("month,{}", last_month()),
        "plan,Indie",
        "base_fee_usd,299.00",
        "revenue_share_usd,0.00",
        "amount_due_usd,299.00",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in {text}");
    }

    // This month has not closed; two months ago the game had not launched.
    let this_month = Utc::now().format("%Y-%m").to_string();
    let before = (at.date_naive().with_day(1).expect("first") - chrono::Duration::days(1))
        .format("%Y-%m")
        .to_string();
    for month in [this_month, before] {
        app.get(format!("{path}?month={month}"))
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    for month in ["2026-13", "2026-1", "last", "2026-10-01"] {
        app.get(format!("{path}?month={month}"))
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
    }
    app.get(format!("{path}?month={}&format=pdf", last_month()))
        .expect_error(StatusCode::BAD_REQUEST, "bad_request")
        .await;
    app.get(format!("{path}?month={}", last_month()))
        .token(&app.token("studio-a", Role::Developer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    app.get(format!("{path}?month={}", last_month()))
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn a_month_lists_its_adjustment_lines_already_counted_in_json_and_csv() {
    let app = spawn_tuned(default_backend(), |s| s.economy.figures_cache_ms = 0).await;
    let sdk = app.game_with(store_shelf()).await;
    let game_id: uuid::Uuid = sdk.game.parse().expect("uuid");
    let at = last_month_end();
    history::played(
        &app,
        &sdk.game,
        &json!([past("p1", json!({"type": "session_start"}), at)]),
    )
    .await;
    // Last month, before it closed, a refund of a purchase of the month before arrived, and
    // a reversal of another: the lines the refunds' steps recorded then (no clock of the
    // engine can be moved back, so they are recorded here as the step does).
    let two_months_ago = (at.date_naive().with_day(1).expect("first") - chrono::Duration::days(1))
        .format("%Y-%m")
        .to_string();
    let line = |kind: AdjustmentKind, tx: &str, usd: f64, group| AdjustmentLine {
        month: last_month(),
        purchase_month: two_months_ago.clone(),
        kind,
        store: offer_domain::product_ids::Store::AppStore,
        transaction_id: tx.to_owned(),
        amount_usd: usd,
        group,
        recorded_at: at,
    };
    let services = &app.running.state.services;
    for (id, l) in [
        (
            "refund:app_store:3000000000000001",
            line(
                AdjustmentKind::Refund,
                "3000000000000001",
                -4.99,
                AdjustmentGroup::Treatment,
            ),
        ),
        (
            "reversal:app_store:3000000000000002:2",
            line(
                AdjustmentKind::Reversal,
                "3000000000000002",
                0.99,
                AdjustmentGroup::Holdout,
            ),
        ),
    ] {
        adjustments::record(services, game_id, id, &l)
            .await
            .expect("recorded");
    }

    let path = format!("/v1/games/{}/statements?month={}", sdk.game, last_month());
    let s = app.get_json(&path).await;
    let lines = s["adjustments"].as_array().expect("lines");
    assert_eq!(lines.len(), 2, "{s}");
    assert_eq!(lines[0]["kind"], "refund", "{s}");
    assert_eq!(lines[0]["amount_usd"], -4.99, "{s}");
    assert_eq!(lines[0]["purchase_month"], two_months_ago, "{s}");
    assert_eq!(lines[0]["group"], "treatment", "{s}");
    assert_eq!(lines[1]["kind"], "reversal", "{s}");
    assert_eq!(s["adjustments_usd"], -4.0, "{s}");
    // Already counted in the month's figures: the amount due is the base fee alone.
    assert_eq!(s["amount_due_usd"], 299.0, "{s}");

    let csv = app
        .get(format!("{path}&format=csv"))
        .send()
        .await
        .text()
        .await
        .expect("csv");
    for row in [
        "amount_due_usd,299.00",
        "adjustments_usd,-4.00",
        &format!("adjustment:refund:app_store:3000000000000001:{two_months_ago}:treatment,-4.99"),
        &format!("adjustment:reversal:app_store:3000000000000002:{two_months_ago}:holdout,0.99"),
    ] {
        assert!(csv.lines().any(|l| l == row), "{row} in {csv}");
    }

    // The month is decided once: a line recorded after it closed is not on it.
    adjustments::record(
        services,
        game_id,
        "refund:app_store:3000000000000003",
        &line(
            AdjustmentKind::Refund,
            "3000000000000003",
            -1.0,
            AdjustmentGroup::Treatment,
        ),
    )
    .await
    .expect("recorded");
    let again = app.get_json(&path).await;
    assert_eq!(again, s);
}
