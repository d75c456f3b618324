//! The approval simulation through HTTP: a pending offer of an Assisted game is simulated
//! against the players of an imported week of history; the result is reproducible from its
//! seed, sensitive to the offer and the economy, stored on the approval, and never blocks
//! a decision.

use chrono::{Duration, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{Sdk, earned, spent, template};
use super::helpers::{Role, TestApp, spawn_app};
use super::offers::{featured, queued_approvals};

/// Players of the imported history.
const PLAYERS: usize = 200;

/// A game whose only AI-eligible item is `item`, with `PLAYERS` players who each earned
/// `earned_gold` and spent `spent_gold` yesterday, in Assisted mode, and the id of the pending
/// approval its `event` produced.
async fn pending_offer(
    app: &TestApp,
    item: Value,
    event: &str,
    category: &str,
    earned_gold: i64,
    spent_gold: i64,
) -> (Sdk, String) {
    let sdk = app.game_with(json!([item])).await;
    app.set_templates(&sdk.game, json!([template(event, &[category])]))
        .await;
    let yesterday = Utc::now() - Duration::days(1);
    let mut events = Vec::new();
    for i in 0..PLAYERS {
        let player = format!("history_{i}");
        let at = |mut e: Value| {
            e["player_id"] = json!(player);
            e["ts"] = json!(yesterday.to_rfc3339());
            e
        };
        events.push(at(json!({"type": "session_start"})));
        events.push(at(earned("gold", earned_gold, format!("e{i}"))));
        events.push(at(spent("gold", spent_gold, format!("s{i}"))));
    }
    let imported = app
        .post(
            format!("/v1/games/{}/events/import", sdk.game),
            json!({"events": events}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(imported["imported"], json!(PLAYERS * 3), "{imported}");
    app.set_mode(&sdk.game, "assisted")
        .expect(StatusCode::OK)
        .await;
    let sid = featured(app, &sdk).await;
    let pending = queued_approvals(app, &sdk, &sid, event).await;
    let id = pending[0]["approval_id"].as_str().expect("id").to_owned();
    (sdk, id)
}

/// A chest of 100,000 gold for $4.99: a faucet.
fn gold_chest() -> Value {
    json!({"item_id": "gold_chest", "item_name": "Gold chest", "category": "currency",
           "currency_id": "gold", "quantity": 100_000, "price_usd": 4.99,
           "is_consumable": true, "fallback_eligible": true})
}

/// A potion bought with 50 gold: a sink.
fn gold_potion() -> Value {
    json!({"item_id": "potion", "item_name": "Potion", "category": "consumable",
           "price_usd": 0.99, "earned_price": {"currency_id": "gold", "amount": 50},
           "is_consumable": true, "fallback_eligible": true})
}

/// The simulation of `approval` with `seed`.
fn simulate<'a>(app: &'a TestApp, approval: &str, seed: u64) -> super::http::Call<'a> {
    app.post(
        format!("/v1/approvals/{approval}/simulate?seed={seed}"),
        json!(null),
    )
}

#[tokio::test]
async fn a_large_grant_in_an_inflating_economy_fails_and_the_same_seed_gives_the_same_result() {
    let app = spawn_app().await;
    // 300 earned for 100 spent: FSR 3.0, above the rpg range 0.8 to 2.0 (INFLATION).
    let (_, approval) =
        pending_offer(&app, gold_chest(), "currency_low", "currency", 300, 100).await;
    let result = simulate(&app, &approval, 7).expect(StatusCode::OK).await;
    assert_eq!(result["pass"], false, "{result}");
    assert_eq!(result["pass_rate"], 0.0);
    assert_eq!(result["monte_carlo_runs"], 10_000);
    // The imported players; the featured session's player only opened a session, so it is
    // no player of the simulation.
    assert_eq!(result["n_players"], json!(PLAYERS));
    let median = result["aggregate_fsr"].as_f64().expect("median");
    assert!(median > 3.0, "the grant inflates further: {result}");
    let (lower, upper) = (
        result["fsr_bounds"]["lower"].as_f64().expect("lower"),
        result["fsr_bounds"]["upper"].as_f64().expect("upper"),
    );
    assert!(lower <= median && median <= upper, "{result}");
    assert_eq!(
        result["genre_context"],
        json!({"genre": "rpg", "healthy_fsr_min": 0.8, "healthy_fsr_max": 2.0,
               "quadrant": "INFLATION"})
    );
    assert_eq!(result["seed"], 7);
    // The same seed on the same population: the same result. The record keeps the last one.
    let again = simulate(&app, &approval, 7).expect(StatusCode::OK).await;
    assert_eq!(again, result);
    let record = app.get_json(format!("/v1/approvals/{approval}")).await;
    assert_eq!(record["simulation"], result);
    assert_eq!(record["status"], "pending");
}

#[tokio::test]
async fn a_sink_side_offer_in_a_healthy_economy_passes_and_approving_still_works() {
    let app = spawn_app().await;
    // 150 earned for 100 spent: FSR 1.5, healthy.
    let (_, approval) =
        pending_offer(&app, gold_potion(), "first_loss", "consumable", 150, 100).await;
    let result = simulate(&app, &approval, 11).expect(StatusCode::OK).await;
    assert_eq!(result["pass"], true, "{result}");
    assert!(result["pass_rate"].as_f64().expect("rate") >= 0.95);
    let median = result["aggregate_fsr"].as_f64().expect("median");
    assert!(median < 1.5, "the potion takes gold out: {result}");
    assert_eq!(result["genre_context"]["quadrant"], "HEALTHY");
    // Simulating never blocks approving; a decided approval is not simulated.
    app.post(format!("/v1/approvals/{approval}/approve"), json!({}))
        .expect(StatusCode::OK)
        .await;
    simulate(&app, &approval, 11)
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
}

#[tokio::test]
async fn only_a_developer_of_the_studio_simulates() {
    let app = spawn_app().await;
    let (_, approval) =
        pending_offer(&app, gold_potion(), "first_loss", "consumable", 10, 10).await;
    simulate(&app, &approval, 1)
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    simulate(&app, &approval, 1)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    simulate(&app, &uuid::Uuid::new_v4().to_string(), 1)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.post(
        format!("/v1/approvals/{approval}/simulate?seed=minus_one"),
        json!(null),
    )
    .expect_error(StatusCode::BAD_REQUEST, "bad_request")
    .await;
}
