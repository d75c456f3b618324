//! Test data, written once: the JSON bodies the tests send (games, items, packs, catalogues,
//! bundles, templates, money events) and the setup steps built on them (a game with its
//! catalogue and SDK key, a session, the mode, guardrails and kill switch of a game).
//!
//! Bodies are plain [`Value`]s: a test that needs a variant overlays fields with [`with`]
//! rather than retyping the whole body.

use std::fmt::Display;

use offer_domain::holdout::is_holdout;
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::helpers::TestApp;
use super::http::Call;

/// `base` with the fields of the object `overrides` set (replaced, not merged deeply).
pub fn with(mut base: Value, overrides: Value) -> Value {
    let fields = base.as_object_mut().expect("base is an object");
    for (k, v) in overrides.as_object().expect("overrides are an object") {
        fields.insert(k.clone(), v.clone());
    }
    base
}

/// A game body with only the required fields.
pub fn game_body(genre: &str) -> Value {
    json!({"name": "G", "genre": genre})
}

/// A catalogue item in the bulk shape, named by its id; fallback-eligible.
pub fn item(id: &str, category: &str, price_usd: f64) -> Value {
    json!({"item_id": id, "item_name": id, "category": category, "price_usd": price_usd,
           "is_consumable": false, "fallback_eligible": true})
}

/// A pack of `quantity` gems.
pub fn pack(id: &str, quantity: i64, price_usd: f64) -> Value {
    json!({"item_id": id, "item_name": id, "category": "currency_pack", "currency_id": "gems",
           "price_usd": price_usd, "quantity": quantity, "is_consumable": true,
           "fallback_eligible": true})
}

/// `n` consumables at $0.99, `{prefix}_00`, `{prefix}_01`, ...
pub fn consumables(prefix: &str, n: usize) -> Value {
    (0..n)
        .map(|i| item(&format!("{prefix}_{i:02}"), "consumable", 0.99))
        .collect()
}

/// Two gem packs and a sword: a store shelf, so the last level always has an offer.
pub fn store_shelf() -> Value {
    json!([
        pack("gems_100", 100, 0.99),
        pack("gems_500", 500, 3.99),
        item("sword", "equipment", 4.99)
    ])
}

/// One item of each kind the offer levels tell apart: currency packs, a consumable,
/// equipment (all three L1 material) and a cosmetic (not).
pub fn mixed_catalogue() -> Value {
    json!([
        pack("gems_100", 100, 0.99),
        pack("gems_500", 500, 3.99),
        item("potion", "consumable", 1.99),
        item("sword", "equipment", 4.99),
        item("hat", "cosmetic", 2.99)
    ])
}

/// A fixed-price bundle of `item_ids`.
pub fn bundle(name: &str, item_ids: &[&str], price_usd: f64) -> Value {
    json!({"name": name, "item_ids": item_ids, "price_usd": price_usd})
}

/// An offer template: items of `categories` for `event_type`.
pub fn template(event_type: &str, categories: &[&str]) -> Value {
    json!({"event_type": event_type, "categories": categories})
}

/// A `currency_earned` game event from a quest.
pub fn earned(currency_id: &str, amount: i64, tx_id: impl Display) -> Value {
    json!({"type": "currency_earned", "currency_id": currency_id, "amount": amount,
           "source": "quest", "tx_id": tx_id.to_string()})
}

/// A `currency_spent` game event in the shop.
pub fn spent(currency_id: &str, amount: i64, tx_id: impl Display) -> Value {
    json!({"type": "currency_spent", "currency_id": currency_id, "amount": amount,
           "sink": "shop", "tx_id": tx_id.to_string()})
}

/// A player id (`player_N`) in, or out of, the holdout of `game`.
pub fn player(game: &str, holdout: bool) -> String {
    let id: Uuid = game.parse().expect("game id is a uuid");
    (0..)
        .map(|i| format!("player_{i}"))
        .find(|p| is_holdout(p, id) == holdout)
        .expect("some player")
}

/// A game and a production SDK key for it.
pub struct Sdk {
    pub game: String,
    pub key: String,
}

impl TestApp {
    /// Creates an RPG game with gems (hard) and gold (earned) for studio A; returns its id.
    pub async fn create_game(&self) -> String {
        let game = self
            .post(
                "/v1/games",
                json!({"name": "Dragon Quest", "genre": "rpg",
                       "currencies": [{"currency_id": "gems", "kind": "hard"},
                                      {"currency_id": "gold", "kind": "earned"}]}),
            )
            .expect(StatusCode::CREATED)
            .await;
        game["game_id"].as_str().expect("id").to_owned()
    }

    /// [`TestApp::create_game`] with `items` in its catalogue (none for an empty array) and a
    /// production SDK key.
    pub async fn game_with(&self, items: Value) -> Sdk {
        let game = self.create_game().await;
        if items.as_array().is_some_and(|a| !a.is_empty()) {
            self.bulk(&game, items).expect(StatusCode::OK).await;
        }
        let key = self.sdk_key(&game, "production").await;
        Sdk { game, key }
    }

    /// The bulk upsert of `items` into `game`'s catalogue.
    #[track_caller]
    pub fn bulk(&self, game: &str, items: Value) -> Call<'_> {
        self.post(
            format!("/v1/games/{game}/items/bulk"),
            json!({ "items": items }),
        )
    }

    /// The live items of `game`.
    pub async fn items(&self, game: &str) -> Vec<Value> {
        let body = self.get_json(format!("/v1/games/{game}/items")).await;
        body["items"].as_array().expect("items").clone()
    }

    /// The (soft) deletion of item `item_id` of `game`.
    #[track_caller]
    pub fn delete_item(&self, game: &str, item_id: &str) -> Call<'_> {
        self.delete(format!("/v1/games/{game}/items/{item_id}"))
    }

    /// Issues an SDK key for `game` in `environment`; returns the whole answer (the key is
    /// shown only here, beside its `key_id`).
    pub async fn issue_sdk_key(&self, game: &str, environment: &str) -> Value {
        self.post(
            format!("/v1/games/{game}/sdk-keys"),
            json!({ "environment": environment }),
        )
        .expect(StatusCode::CREATED)
        .await
    }

    /// Issues an SDK key for `game` in `environment`; returns the key.
    pub async fn sdk_key(&self, game: &str, environment: &str) -> String {
        let issued = self.issue_sdk_key(game, environment).await;
        issued["api_key"].as_str().expect("key").to_owned()
    }

    /// Issues a production SDK key for `game`; returns the key and its id.
    pub async fn production_key(&self, game: &str) -> (String, String) {
        let issued = self.issue_sdk_key(game, "production").await;
        let key = issued["api_key"].as_str().expect("key").to_owned();
        let key_id = issued["key_id"].as_str().expect("id").to_owned();
        (key, key_id)
    }

    /// Issues an authoring key for `game` in the dashboard; returns the key and its id.
    pub async fn authoring_key(&self, game: &str) -> (String, String) {
        let issued = self
            .post(format!("/v1/games/{game}/authoring-keys"), json!({}))
            .expect(StatusCode::CREATED)
            .await;
        let key = issued["authoring_key"].as_str().expect("key").to_owned();
        (key, issued["key_id"].as_str().expect("id").to_owned())
    }

    /// Revokes SDK key `key_id` of `game`.
    pub async fn revoke_sdk_key(&self, game: &str, key_id: &str) {
        self.delete(format!("/v1/games/{game}/sdk-keys/{key_id}"))
            .expect(StatusCode::NO_CONTENT)
            .await;
    }

    /// Opens an SDK session of `player_id` with `attributes` over REST; returns its id.
    pub async fn open_session(&self, sdk: &Sdk, player_id: &str, attributes: Value) -> String {
        let sid = Uuid::new_v4().to_string();
        self.post(
            "/v1/sdk/sessions",
            json!({"session_id": sid, "player_id": player_id, "attributes": attributes}),
        )
        .token(&sdk.key)
        .expect(StatusCode::CREATED)
        .await;
        sid
    }

    /// Sends `events` in one SDK call, in a new session of `player`.
    pub async fn send_events(&self, sdk: &Sdk, player: &str, events: Value) {
        let sid = self.open_session(sdk, player, json!({})).await;
        self.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": events}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
    }

    /// The change of `game`'s operating mode to `mode`.
    #[track_caller]
    pub fn set_mode(&self, game: &str, mode: &str) -> Call<'_> {
        self.post(format!("/v1/games/{game}/mode"), json!({"mode": mode}))
    }

    /// Patches `game`'s guardrails with `patch`.
    pub async fn set_guardrails(&self, game: &str, patch: Value) {
        self.patch(format!("/v1/games/{game}/guardrails"), patch)
            .expect(StatusCode::OK)
            .await;
    }

    /// Sets `game`'s kill switch to `level`, with the reason `level {level}`.
    pub async fn set_kill_switch(&self, game: &str, level: u8) {
        self.put(
            format!("/v1/games/{game}/kill-switch"),
            json!({"level": level, "reason": format!("level {level}")}),
        )
        .expect(StatusCode::OK)
        .await;
    }

    /// Replaces `game`'s offer templates.
    pub async fn set_templates(&self, game: &str, templates: Value) {
        self.put(format!("/v1/games/{game}/offer-templates"), templates)
            .expect(StatusCode::OK)
            .await;
    }

    /// The creation of `bundle` in `game`.
    #[track_caller]
    pub fn add_bundle(&self, game: &str, bundle: Value) -> Call<'_> {
        self.post(format!("/v1/games/{game}/offer-bundles"), bundle)
    }
}

/// A real PNG image of `width` x `height` pixels.
pub fn png(width: u32, height: u32) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image::RgbImage::new(width, height)
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode png");
    out.into_inner()
}
