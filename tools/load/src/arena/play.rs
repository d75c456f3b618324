//! Plays the game against the engine exactly as game clients would, one request at a time
//! so that the engine hears about every offer before the next: for each offer a player and
//! a trigger are drawn, `POST /v1/sdk/offers/next` asks for the offer, the player buys what
//! was served with its true probability, and `offer_shown` (and `purchase` when bought)
//! go back through `POST /v1/sdk/events`.
//!
//! Holdout players (10% of the population, assigned by hash of player and game) play too;
//! the engine never offers them anything, and they are left out of the score and of the
//! offer count.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use offer_domain::category::Category;
use offer_domain::holdout::is_holdout;
use rand::rngs::StdRng;
use rand::{RngExt as _, SeedableRng as _};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::scenario::{Scenario, TRIGGERS, Timeline, arm_revenues, population, truth};
use super::score::OfferScore;
use super::studio::Studio;
use crate::setup::call;

/// Salt of the stream of players and triggers, apart from the population's.
pub const OFFERS_SALT: u64 = 0x0ffe_2500;
/// Salt of the purchase draws, so that the players and triggers drawn do not depend on
/// what the engine served.
pub const BUYER_SALT: u64 = 0x5eed;

/// What one run produced.
#[derive(Debug, Clone)]
pub struct Played {
    /// Every offer to a scored player, in order.
    pub scores: Vec<OfferScore>,
    /// Requests of holdout players (answered without an offer when the engine is right).
    pub holdout_requests: usize,
    /// Offers the engine made to holdout players (0 when it is right).
    pub holdout_offers: usize,
    /// Purchases sent.
    pub purchases: usize,
    /// Answers by the level that served them (`fallback_level` 1 to 4 at 1 to 4), no offer
    /// at 0.
    pub levels: [usize; 5],
    /// Wall time of the play (setup excluded).
    pub elapsed: Duration,
    /// How many times the learner started again after a change of taste, and at which
    /// offer it last did (the engine's own count of offers shown to the learner, which
    /// counts the offers of every level).
    pub restarts: Option<(u32, u64)>,
}

impl Played {
    /// Nothing played yet, with room for `offers` scores.
    pub fn new(offers: usize) -> Self {
        Self {
            scores: Vec::with_capacity(offers),
            holdout_requests: 0,
            holdout_offers: 0,
            purchases: 0,
            levels: [0; 5],
            elapsed: Duration::ZERO,
            restarts: None,
        }
    }
}

/// What the engine served for one request, as the truth needs it.
struct Served {
    /// The offer, if any.
    offer_id: Option<Uuid>,
    /// Category and price of a single-item offer.
    single: Option<(Category, i64)>,
    /// The ids of the items offered.
    item_ids: Vec<String>,
    /// The level that served it (0 for no offer).
    level: usize,
}

/// Sets a fresh game up on the engine at `base` (JWT secret `secret`) and plays `scenario`
/// over `timeline` with `players` players, everything drawn from `seed`.
pub async fn play(
    base: &str,
    secret: &str,
    scenario: Scenario,
    timeline: Timeline,
    players: usize,
    seed: u64,
) -> Result<Played> {
    let mut world = StdRng::seed_from_u64(seed);
    let population = population(scenario, players.max(1), &mut world);
    let studio = Studio::set_up(base, secret, timeline.shadow_until.is_some()).await?;
    let sessions = studio.open_sessions(&population).await?;
    let held: Vec<bool> = population
        .iter()
        .map(|p| is_holdout(&p.id, studio.game_id))
        .collect();
    if held.iter().all(|h| *h) {
        bail!("every player of the population is in the holdout: play with more players");
    }
    let mut draws = StdRng::seed_from_u64(seed ^ OFFERS_SALT);
    let mut buyer = StdRng::seed_from_u64(seed ^ BUYER_SALT);
    let mut played = Played::new(timeline.offers);
    let mut promote_at = timeline.shadow_until;
    let started = Instant::now();
    while played.scores.len() < timeline.offers {
        let t = played.scores.len();
        if promote_at == Some(t) {
            studio.promote().await?;
            promote_at = None;
        }
        let who = draws.random_range(0..population.len());
        let trigger = draws.random_range(0..TRIGGERS.len());
        let player = &population[who];
        let served = next_offer(&studio, sessions[who], TRIGGERS[trigger]).await?;
        played.levels[served.level] += 1;
        let shifted = timeline.shifted(t);
        let p = served.single.map_or(0.0, |(category, price)| {
            truth(scenario, shifted, player, trigger, category, price)
        });
        // Drawn for every request, so the purchase stream never depends on what was served.
        let bought = buyer.random::<f64>() < p;
        if let Some(offer_id) = served.offer_id {
            let price = served.single.map_or(0, |(_, price)| price);
            report(&studio, sessions[who], offer_id, bought, &served, price).await?;
            played.purchases += usize::from(bought);
        }
        if held[who] {
            played.holdout_requests += 1;
            played.holdout_offers += usize::from(served.offer_id.is_some());
            continue;
        }
        played.scores.push(OfferScore {
            engine: p * served.single.map_or(0.0, |(_, price)| price as f64),
            arms: arm_revenues(scenario, shifted, player, trigger),
        });
    }
    played.elapsed = started.elapsed();
    played.restarts = Some(studio.learner_restarts().await?);
    Ok(played)
}

/// Asks for the offer of `session` on `trigger`.
async fn next_offer(studio: &Studio, session: Uuid, trigger: &str) -> Result<Served> {
    let response = studio
        .client
        .post(format!("{}/v1/sdk/offers/next", studio.base))
        .bearer_auth(&studio.key)
        .json(&json!({"session_id": session, "trigger_context": {"event_type": trigger}}))
        .send()
        .await
        .context("POST /v1/sdk/offers/next: request failed")?;
    match response.status() {
        StatusCode::NO_CONTENT => Ok(Served {
            offer_id: None,
            single: None,
            item_ids: Vec::new(),
            level: 0,
        }),
        StatusCode::OK => {
            let body: Value = response
                .json()
                .await
                .context("POST /v1/sdk/offers/next: answer is not JSON")?;
            served(&body)
        }
        status => {
            let text = response.text().await.unwrap_or_default();
            bail!("POST /v1/sdk/offers/next: got {status}: {text}")
        }
    }
}

/// Reads an offer: its id, its items and, when it holds one item, that item's category and
/// the offer's price.
fn served(body: &Value) -> Result<Served> {
    let offer_id: Uuid = body["offer_id"]
        .as_str()
        .context("an offer without offer_id")?
        .parse()
        .context("an offer_id that is not a UUID")?;
    let items = body["items"].as_array().context("an offer without items")?;
    let item_ids = items
        .iter()
        .map(|i| i["item_id"].as_str().map(str::to_owned))
        .collect::<Option<Vec<_>>>()
        .context("an offer item without item_id")?;
    let single = match items.as_slice() {
        [only] => {
            let category: Category = serde_json::from_value(only["category"].clone())
                .context("an offer item with an unknown category")?;
            let price = body["price_cents"]
                .as_i64()
                .context("an offer without price_cents")?;
            Some((category, price))
        }
        _ => None,
    };
    let level = body["fallback_level"]
        .as_u64()
        .and_then(|l| usize::try_from(l).ok())
        .filter(|l| (1..=4).contains(l))
        .context("an offer without a fallback_level of 1 to 4")?;
    Ok(Served {
        offer_id: Some(offer_id),
        single,
        item_ids,
        level,
    })
}

/// Tells the engine the offer was shown and, when `bought`, that it was bought at `price`.
async fn report(
    studio: &Studio,
    session: Uuid,
    offer_id: Uuid,
    bought: bool,
    served: &Served,
    price: i64,
) -> Result<()> {
    let mut events = vec![json!({"type": "offer_shown", "offer_id": offer_id})];
    if bought {
        events.push(json!({
            "type": "purchase",
            "offer_id": offer_id,
            "item_ids": served.item_ids,
            "price_cents": price,
            "tx_id": offer_id.simple().to_string(),
        }));
    }
    call(
        studio
            .client
            .post(format!("{}/v1/sdk/events", studio.base))
            .bearer_auth(&studio.key)
            .json(&json!({"session_id": session, "events": events})),
        StatusCode::ACCEPTED,
        "POST /v1/sdk/events",
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_item_offer_reads_its_category_and_price() {
        let id = Uuid::new_v4();
        let body = json!({"offer_id": id, "price_cents": 499, "fallback_level": 1,
                          "items": [{"item_id": "consumable_499", "category": "consumable"}]});
        let s = served(&body).expect("reads");
        assert_eq!(s.offer_id, Some(id));
        assert_eq!(s.single, Some((Category::Consumable, 499)));
        assert_eq!(s.item_ids, ["consumable_499"]);
        assert_eq!(s.level, 1);
    }

    #[test]
    fn a_multi_item_offer_has_no_single_price() {
        let body = json!({"offer_id": Uuid::new_v4(), "price_cents": 598, "fallback_level": 2,
                          "items": [{"item_id": "a", "category": "consumable"},
                                    {"item_id": "b", "category": "currency"}]});
        let s = served(&body).expect("reads");
        assert_eq!(s.single, None);
        assert_eq!(s.item_ids.len(), 2);
    }

    #[test]
    fn populations_are_seeded() {
        let of = |seed| population(Scenario::Both, 20, &mut StdRng::seed_from_u64(seed));
        assert_eq!(of(3), of(3));
        assert_ne!(of(3), of(4));
    }
}
