//! The arena's game set up over REST as a studio would: an `rpg` game (so the genre's
//! templates apply), a catalogue of one item per arm (each AI category at each price of the
//! ladder), a price ceiling above the dearest arm and no frequency caps, a production SDK
//! key, the operating mode, and one open session per player with its attributes.

use anyhow::{Context, Result};
use offer_domain::bandit::Arm;
use offer_domain::category::Category;
use reqwest::{Client, StatusCode};
use serde_json::json;
use uuid::Uuid;

use super::scenario::Player;
use crate::catalogue::{CURRENCY_ID, NewItem};
use crate::setup::{admin_token, call, create_game, open_sessions_for, production_key, promote};

/// The price ceiling: above the dearest arm of the ladder ($49.99).
const MAX_PRICE_CENTS: i64 = 5_000;

/// A game set up on an engine, and what the arena needs to play it.
#[derive(Debug, Clone)]
pub struct Studio {
    /// The engine, `http://host:port`.
    pub base: String,
    /// The HTTP client (keep-alive).
    pub client: Client,
    /// The studio's admin token.
    token: String,
    /// The game.
    pub game_id: Uuid,
    /// Its production SDK key.
    pub key: String,
}

/// The catalogue: one item per arm, `<category>_<cents>`, every one eligible for the store
/// shelf (what Shadow mode serves). Gem packs grant 100 gems per dollar.
pub fn arm_items() -> Vec<NewItem> {
    Arm::all()
        .map(|arm| {
            let cents = arm.price_cents;
            let (category, currency) = match arm.category {
                Category::Currency => ("currency_pack", true),
                Category::Consumable => ("consumable", false),
                _ => ("equipment", false),
            };
            NewItem {
                item_id: format!("{category}_{cents}"),
                item_name: format!("{category} at {cents} cents"),
                category,
                price_usd: cents as f64 / 100.0,
                quantity: currency.then_some(cents),
                is_consumable: category != "equipment",
                fallback_eligible: true,
                description: format!("The arena's {category} at {cents} cents."),
                currency_id: currency.then_some(CURRENCY_ID),
                is_loot_box: false,
            }
        })
        .collect()
}

impl Studio {
    /// Creates the game on the engine at `base` (whose JWT secret is `secret`) with its
    /// catalogue, guardrails and SDK key, in Autonomous mode unless `shadow`.
    pub async fn set_up(base: &str, secret: &str, shadow: bool) -> Result<Self> {
        let client = Client::builder()
            .build()
            .context("building the HTTP client")?;
        let token = admin_token(secret, "arena-studio")?;
        let game_id = create_game(&client, base, &token, "Arena RPG", &arm_items()).await?;
        call(
            client
                .patch(format!("{base}/v1/games/{game_id}/guardrails"))
                .bearer_auth(&token)
                .json(&json!({
                    "max_price_cents": MAX_PRICE_CENTS,
                    "max_offers_per_session": null,
                    "min_offer_interval_s": null,
                })),
            StatusCode::OK,
            "PATCH /v1/games/{game_id}/guardrails",
        )
        .await?;
        let key = production_key(&client, base, &token, game_id).await?;
        let studio = Self {
            base: base.to_owned(),
            client,
            token,
            game_id,
            key,
        };
        if !shadow {
            studio.promote().await?;
        }
        Ok(studio)
    }

    /// Promotes the game from Shadow to Autonomous, one step at a time as the engine asks
    /// (Shadow, Assisted, Autonomous).
    pub async fn promote(&self) -> Result<()> {
        promote(&self.client, &self.base, &self.token, self.game_id).await
    }

    /// How many times the game's learner started again after a change of taste, and the
    /// offer count when it last did, from the model view.
    pub async fn learner_restarts(&self) -> Result<(u32, u64)> {
        let body = call(
            self.client
                .get(format!("{}/v1/games/{}/model", self.base, self.game_id))
                .bearer_auth(&self.token),
            StatusCode::OK,
            "GET /v1/games/{game_id}/model",
        )
        .await?;
        let number = |field: &str| {
            body[field]
                .as_u64()
                .with_context(|| format!("the model view has no `{field}`: {body}"))
        };
        Ok((
            u32::try_from(number("restarts")?).unwrap_or(u32::MAX),
            number("learning_since_offer")?,
        ))
    }

    /// Opens one session per player with its attributes; the session ids, in order.
    pub async fn open_sessions(&self, players: &[Player]) -> Result<Vec<Uuid>> {
        let players = players
            .iter()
            .map(|p| (p.id.clone(), p.attributes()))
            .collect();
        open_sessions_for(&self.client, &self.base, &self.key, players).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use offer_domain::bandit::ARM_COUNT;
    use std::collections::HashSet;

    #[test]
    fn one_shelf_item_per_arm() {
        let items = arm_items();
        assert_eq!(items.len(), ARM_COUNT);
        let ids: HashSet<&str> = items.iter().map(|i| i.item_id.as_str()).collect();
        assert_eq!(ids.len(), ARM_COUNT);
        assert!(items.iter().all(|i| i.fallback_eligible));
        assert!(
            items
                .iter()
                .all(|i| (i.price_usd * 100.0).round() as i64 <= MAX_PRICE_CENTS)
        );
        let packs = items.iter().filter(|i| i.category == "currency_pack");
        assert!(packs.clone().all(|i| i.currency_id.is_some()));
        assert_eq!(packs.count(), ARM_COUNT / 3);
    }
}
