//! Revenue-share figures measured in a healthy economy, and the month-close decision:
//! revenue of unhealthy days left out of the holdout comparison, the month's uplift revenue,
//! and one stored decision per closed month.

use chrono::{Datelike, Duration, NaiveDate, Utc};
use serde_json::{Value, json};

use super::economy::{past, players_of, purchase};
use super::fixtures::{earned, store_shelf};
use super::helpers::{default_backend, spawn_tuned};
use super::history;

/// Noon UTC of `day`.
fn noon(day: NaiveDate) -> chrono::DateTime<Utc> {
    day.and_hms_opt(12, 0, 0).expect("time").and_utc()
}

#[tokio::test]
async fn revenue_on_days_the_economy_was_not_healthy_is_left_out() {
    let app = spawn_tuned(default_backend(), |s| s.economy.figures_cache_ms = 0).await;
    let sdk = app.game_with(store_shelf()).await;
    let today = Utc::now().date_naive();
    let day = |back: i64| noon(today - Duration::days(back));
    let payer = &players_of(&sdk.game, false, 1)[0];
    let session = json!({"type": "session_start"});
    // Gold earned 20 days ago and never spent: the windows ending 20 to 14 days ago are pure
    // faucet (HYPER_INFL); later windows see nothing move and count.
    let events = json!({"events": [
        past(payer, session, day(25)),
        past("quest_giver", earned("gold", 1_000, "faucet"), day(20)),
        past(payer, purchase(5_000, "in_hyper"), day(18)),
        past(payer, purchase(300, "healthy"), day(5)),
    ]});
    history::played(&app, &sdk.game, &events["events"]).await;
    let arpu = app
        .get_json(format!("/v1/games/{}/holdout-arpu", sdk.game))
        .await;
    assert_eq!(arpu["days_excluded"], 7, "{arpu}");
    assert_eq!(
        arpu["days_live"],
        (Utc::now() - day(25)).num_days(),
        "{arpu}"
    );
    // Only the $3 of the healthy day counts (the quest giver has neither a session nor a
    // purchase: it is no player of the comparison).
    assert_eq!(arpu["n_treatment"], 1, "{arpu}");
    assert_eq!(arpu["treatment_arpu"], 3.0, "{arpu}");
    // The samples behind it carry the counted revenue.
    let csv = app
        .get(format!("/v1/games/{}/holdout-arpu/samples", sdk.game))
        .send()
        .await
        .text()
        .await
        .expect("csv");
    assert!(csv.lines().any(|l| l.ends_with(",300")), "{csv}");
    assert!(!csv.lines().any(|l| l.ends_with(",5300")), "{csv}");
}

#[tokio::test]
async fn a_closed_month_gets_one_stored_decision_with_its_uplift_revenue() {
    let app = spawn_tuned(default_backend(), |s| s.economy.figures_cache_ms = 0).await;
    let sdk = app.game_with(store_shelf()).await;
    let today = Utc::now().date_naive();
    let this_month = today.with_day(1).expect("first");
    let last_month_end = this_month.pred_opt().expect("previous day");
    let last_month = last_month_end.with_day(1).expect("first");
    let treated = players_of(&sdk.game, false, 4);
    let held = players_of(&sdk.game, true, 2);
    let session = json!({"type": "session_start"});
    let mut events: Vec<Value> = treated
        .iter()
        .chain(&held)
        .map(|p| past(p, session.clone(), noon(last_month)))
        .collect();
    // Last month: two treated players pay $10 each, one holdout player $2.
    events.push(past(&treated[0], purchase(1_000, "t0"), noon(last_month)));
    events.push(past(&treated[1], purchase(1_000, "t1"), noon(last_month)));
    events.push(past(&held[0], purchase(200, "c0"), noon(last_month)));
    // This month: one treated player pays $4.
    events.push(past(&treated[2], purchase(400, "t2"), noon(today)));
    history::played(&app, &sdk.game, &json!(events)).await;

    let path = format!("/v1/games/{}/revenue-share", sdk.game);
    let share = app.get_json(&path).await;
    let decision = &share["last_decision"];
    assert_eq!(
        decision["month"],
        json!(last_month.format("%Y-%m").to_string()),
        "{share}"
    );
    // Treated ARPU $5 (20 over 4), holdout $1 (2 over 2): $4 x 4 treated players.
    assert_eq!(decision["treatment_arpu_usd"], 5.0, "{share}");
    assert_eq!(decision["control_arpu_usd"], 1.0, "{share}");
    assert_eq!(decision["treated_players"], 4);
    assert_eq!(decision["uplift_revenue_usd"], 16.0);
    // Far from the 10,000 players a verdict needs: nothing is due.
    assert_eq!(decision["eligible"], false);
    assert_eq!(decision["revenue_share_usd"], 0.0);
    assert_eq!(decision["amount_due_usd"], decision["base_fee_usd"]);
    assert_eq!(decision["conditions"]["n_treatment_gte_10k"]["pass"], false);
    // This month so far: $1 over 4 treated players, nothing from the holdout.
    assert_eq!(share["uplift_revenue_month_to_date_usd"], 4.0, "{share}");
    assert_eq!(share["standing"], "provisional");
    // The decision is taken once: later reads, and later revenue, leave it as it was.
    history::played(
        &app,
        &sdk.game,
        &json!([past(&treated[3], purchase(9_900, "late"), noon(last_month))]),
    )
    .await;
    let again = app.get_json(&path).await;
    assert_eq!(again["last_decision"], *decision);
}
