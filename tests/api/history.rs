//! A past of live play, put where the engine would have written it, for the tests of figures
//! that read earlier days and months (the holdout comparison's unhealthy days, the month
//! close, the statements).
//!
//! Neither public surface can write such a past: a live event a day or more off the engine's
//! clock is refused, and imported history never counts towards production's billing figures.
//! So each event goes through what a live event's own path calls, with its past time: a
//! `session_start` is the population's live sighting and launches production when it is the
//! first, every money event is the wallet step with the player's group. As with imported
//! history, a player joins the population by its `session_start` only. The events are the import's JSON
//! (`economy::past(player, event, ts)`): `session_start`, `purchase`, `currency_earned` and
//! `currency_spent`.

use offer_domain::environment::Environment;
use offer_domain::holdout::is_holdout;
use offer_engine::service::access;
use offer_engine::service::economy::population::{self, Sighting};
use offer_engine::service::game::games;
use offer_engine::store::{MoneyKind, MoneyOp, MoneyOutcome};
use serde_json::Value;
use uuid::Uuid;

use super::helpers::TestApp;

/// Plays `events` (a JSON list of past events) in `game`'s production, in order.
pub async fn played(app: &TestApp, game: &str, events: &Value) {
    let services = &app.running.state.services;
    let game_id: Uuid = game.parse().expect("a game id");
    let handle = access::load(services, game_id).await.expect("the game");
    let env = Environment::Production;
    for e in events.as_array().expect("a list of events") {
        let player = e["player_id"].as_str().expect("player_id");
        let ts: chrono::DateTime<chrono::Utc> =
            serde_json::from_value(e["ts"].clone()).expect("ts");
        let (kind, currency, amount) = match e["type"].as_str().expect("type") {
            "session_start" => {
                population::register(
                    services,
                    game_id,
                    env,
                    player,
                    ts.date_naive(),
                    None,
                    Sighting::Live,
                )
                .await
                .expect("the player's sighting");
                games::mark_launched(services, &handle, env, ts)
                    .await
                    .expect("the launch");
                continue;
            }
            "purchase" => (MoneyKind::Purchase, "", e["price_cents"].as_i64()),
            "currency_earned" => (MoneyKind::Earned, "gold", e["amount"].as_i64()),
            "currency_spent" => (MoneyKind::Spent, "gold", e["amount"].as_i64()),
            other => panic!("no past of `{other}` events"),
        };
        let currency = e["currency_id"].as_str().unwrap_or(currency);
        let op = MoneyOp {
            game_id,
            env,
            player_id: player.to_owned(),
            tx_id: e["tx_id"].as_str().expect("tx_id").to_owned(),
            kind,
            currency_id: currency.to_owned(),
            amount: amount.expect("an amount"),
            ts,
            holdout: is_holdout(player, game_id),
            import: false,
            cohort: None,
            proof: None,
            day_cap: None,
        };
        let outcome = services.store.apply_money(&op).await.expect("stored");
        assert!(
            matches!(outcome, MoneyOutcome::Applied { .. }),
            "{outcome:?} for {e}"
        );
    }
}
