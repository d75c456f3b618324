//! Catalogue through the real HTTP surface, on the embedded store and on Redis.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::helpers::{Backend, expect_error, item, pack, spawn_app, spawn_app_on};

async fn round_trip(backend: Backend) {
    let app = spawn_app_on(backend).await;
    let game = app.create_game().await;
    let r = app
        .bulk(
            &game,
            json!([
                pack("gems_100", 100, 0.99),
                pack("gems_1000", 1000, 4.99),
                item("sword", "equipment", 2.99)
            ]),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["created"], 3);
    assert_eq!(body["updated"], 0);
    let items = app.items(&game).await;
    assert_eq!(items.len(), 3);
    let by_id = |id: &str| {
        items
            .iter()
            .find(|i| i["item_id"] == id)
            .expect("item")
            .clone()
    };
    // The discounted large pack is worth quantity x the smallest pack's face rate.
    assert_eq!(by_id("gems_1000")["value_usd"], 9.9);
    assert_eq!(by_id("gems_100")["value_usd"], 0.99);
    assert_eq!(by_id("sword")["value_usd"], 2.99);
    assert_eq!(by_id("sword")["price_cents"], 299);
    assert_eq!(by_id("gems_100")["category"], "currency");
    // A new instance of the service on the same store sees the same catalogue.
    if let Backend::Redis = backend {
        let prefix = app.running.state.settings.store.key_prefix.clone();
        let second =
            super::helpers::spawn_with(super::helpers::settings(Backend::Redis, Some(prefix)))
                .await;
        let items2 = second.items(&game).await;
        assert_eq!(items2.len(), 3);
    }
}

#[tokio::test]
async fn catalogue_round_trip_embedded() {
    round_trip(Backend::Embedded).await;
}

#[tokio::test]
async fn catalogue_round_trip_redis() {
    round_trip(Backend::Redis).await;
}

#[tokio::test]
async fn value_recomputed_when_the_smallest_pack_changes() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    app.bulk(
        &game,
        json!([pack("gems_100", 100, 0.99), pack("gems_1000", 1000, 4.99),
        {"item_id": "potion", "item_name": "Potion", "category": "consumable", "price_usd": 0,
         "earned_price": {"currency_id": "gems", "amount": 200}}]),
    )
    .await;
    let items = app.items(&game).await;
    let potion = items
        .iter()
        .find(|i| i["item_id"] == "potion")
        .expect("potion");
    assert_eq!(potion["value_usd"], 1.98);
    let r = app
        .patch(
            &format!("/v1/games/{game}/items/gems_100"),
            &app.admin,
            json!({"price_usd": 1.99}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let items = app.items(&game).await;
    let v =
        |id: &str| items.iter().find(|i| i["item_id"] == id).expect("item")["value_usd"].clone();
    assert_eq!(v("gems_1000"), 19.9);
    assert_eq!(v("potion"), 3.98);
    // The expert override wins.
    let r = app
        .patch(
            &format!("/v1/games/{game}/items/potion"),
            &app.admin,
            json!({"value_override_usd": 5.0}),
        )
        .await;
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["value_override_usd"], 5.0);
}

#[tokio::test]
async fn bulk_500_accepted_501_rejected() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let many: Vec<Value> = (0..500)
        .map(|i| item(&format!("item_{i}"), "consumable", 0.99))
        .collect();
    let r = app.bulk(&game, Value::Array(many)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let too_many: Vec<Value> = (0..501)
        .map(|i| item(&format!("more_{i}"), "consumable", 0.99))
        .collect();
    let r = app.bulk(&game, Value::Array(too_many)).await;
    expect_error(r, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    assert_eq!(app.items(&game).await.len(), 500);
}

#[tokio::test]
async fn one_bad_item_rejects_all_and_names_its_index() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let mut items: Vec<Value> = (0..10)
        .map(|i| item(&format!("item_{i}"), "consumable", 0.99))
        .collect();
    items[7]["price_usd"] = json!(-1);
    let r = app.bulk(&game, Value::Array(items.clone())).await;
    let body = expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(body["error"]["details"]["errors"][0]["index"], 7);
    assert_eq!(body["error"]["details"]["errors"][0]["field"], "price_usd");
    assert!(app.items(&game).await.is_empty());
    // A type error (unknown category) is located too.
    items[7]["price_usd"] = json!(0.99);
    items[3]["category"] = json!("weapon");
    let r = app.bulk(&game, Value::Array(items)).await;
    let body = expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(body["error"]["details"]["errors"][0]["index"], 3);
    assert!(app.items(&game).await.is_empty());
}

#[tokio::test]
async fn rerunning_bulk_is_an_upsert() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let items = json!([
        item("sword", "equipment", 2.99),
        item("potion", "consumable", 0.99)
    ]);
    assert_eq!(
        app.bulk(&game, items.clone()).await.status(),
        StatusCode::OK
    );
    let mut changed = items.clone();
    changed[0]["price_usd"] = json!(3.99);
    let r = app.bulk(&game, changed).await;
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["created"], 0);
    assert_eq!(body["updated"], 2);
    let all = app.items(&game).await;
    assert_eq!(all.len(), 2);
    let sword = all.iter().find(|i| i["item_id"] == "sword").expect("sword");
    assert_eq!(sword["price_cents"], 399);
}

#[tokio::test]
async fn single_add_conflict_patch_and_soft_delete() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let path = format!("/v1/games/{game}/items");
    let r = app
        .post(&path, &app.admin, item("sword", "equipment", 2.99))
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let r = app
        .post(&path, &app.admin, item("sword", "equipment", 2.99))
        .await;
    expect_error(r, StatusCode::CONFLICT, "conflict").await;
    // item_id is immutable.
    let r = app
        .patch(
            &format!("{path}/sword"),
            &app.admin,
            json!({"item_id": "axe"}),
        )
        .await;
    expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    let r = app
        .patch(
            &format!("{path}/sword"),
            &app.admin,
            json!({"description": "Sharp"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["description"], "Sharp");
    assert_eq!(body["item_id"], "sword");
    // Soft delete: gone from lists, visible with include_deleted.
    let r = app
        .client
        .delete(app.url(&format!("{path}/sword")))
        .bearer_auth(&app.admin)
        .send()
        .await
        .expect("req");
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(app.items(&game).await.is_empty());
    let r = app
        .get(&format!("{path}?include_deleted=true"), &app.admin)
        .await;
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["items"][0]["item_id"], "sword");
    assert!(body["items"][0]["deleted_at"].is_string());
    let r = app
        .client
        .delete(app.url(&format!("{path}/sword")))
        .bearer_auth(&app.admin)
        .send()
        .await
        .expect("req");
    expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
}

#[tokio::test]
async fn list_pages_with_a_cursor() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let many: Vec<Value> = (0..25)
        .map(|i| item(&format!("item_{i:02}"), "consumable", 0.99))
        .collect();
    app.bulk(&game, Value::Array(many)).await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let q = cursor
            .as_ref()
            .map_or(String::new(), |c| format!("&cursor={c}"));
        let r = app
            .get(&format!("/v1/games/{game}/items?limit=10{q}"), &app.admin)
            .await;
        let body: Value = r.json().await.expect("json");
        seen.extend(
            body["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i["item_id"].clone()),
        );
        match body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 25);
    let r = app
        .get(&format!("/v1/games/{game}/items?limit=0"), &app.admin)
        .await;
    expect_error(r, StatusCode::BAD_REQUEST, "bad_request").await;
}

#[tokio::test]
async fn item_art_is_checked_by_content_and_served() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let png: Vec<u8> = [b"\x89PNG\r\n\x1a\n".as_slice(), &[0u8; 64]].concat();
    let r = app
        .client
        .post(app.url(&format!("/v1/games/{game}/assets")))
        .bearer_auth(&app.admin)
        .header("content-type", "image/png")
        .body(png.clone())
        .send()
        .await
        .expect("req");
    assert_eq!(r.status(), StatusCode::CREATED);
    let asset: Value = r.json().await.expect("json");
    let asset_id = asset["asset_id"].as_str().expect("id");
    // A text file named and declared as an image is refused.
    let r = app
        .client
        .post(app.url(&format!("/v1/games/{game}/assets")))
        .bearer_auth(&app.admin)
        .header("content-type", "image/png")
        .body("hello, not an image")
        .send()
        .await
        .expect("req");
    expect_error(
        r,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    )
    .await;
    // Over 1 MiB is refused.
    let big = [b"\x89PNG\r\n\x1a\n".as_slice(), &vec![0u8; 1 << 20]].concat();
    // Its own client: the server drops a connection whose body it refused to read.
    let r = reqwest::Client::new()
        .post(app.url(&format!("/v1/games/{game}/assets")))
        .bearer_auth(&app.admin)
        .header("content-type", "image/png")
        .body(big)
        .send()
        .await
        .expect("req");
    expect_error(r, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    // An item names the asset and gets its URL; the URL serves the bytes.
    let mut sword = item("sword", "equipment", 2.99);
    sword["image"] = json!(asset_id);
    app.bulk(&game, json!([sword])).await;
    let items = app.items(&game).await;
    let url = items[0]["image_url"].as_str().expect("url").to_owned();
    let r = app.get(&url, &app.admin).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.bytes().await.expect("bytes").to_vec(), png);
    // An unknown asset is refused.
    let mut axe = item("axe", "equipment", 2.99);
    axe["image"] = json!("deadbeef");
    let r = app.bulk(&game, json!([axe])).await;
    expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
}

#[tokio::test]
async fn game_create_get_patch_merges_guardrails() {
    let app = spawn_app().await;
    let r = app
        .post(
            "/v1/games",
            &app.admin,
            json!({"name": "G", "genre": "puzzle",
        "guardrails": {"max_price_cents": 999}, "items": [item("hint", "consumable", 0.99)]}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let game: Value = r.json().await.expect("json");
    let id = game["game_id"].as_str().expect("id");
    assert_eq!(
        game["guardrails"]["loot_box_blocked_countries"],
        json!(["BE", "NL"])
    );
    assert_eq!(app.items(id).await.len(), 1);
    let r = app
        .patch(
            &format!("/v1/games/{id}"),
            &app.admin,
            json!({"guardrails": {"max_offers_per_session": 3}}),
        )
        .await;
    let game: Value = r.json().await.expect("json");
    assert_eq!(game["guardrails"]["max_price_cents"], 999);
    assert_eq!(game["guardrails"]["max_offers_per_session"], 3);
    let r = app
        .post(
            "/v1/games",
            &app.admin,
            json!({"name": "G", "genre": "racing"}),
        )
        .await;
    expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    let items: Vec<Value> = (0..21)
        .map(|i| item(&format!("i_{i}"), "consumable", 0.99))
        .collect();
    let r = app
        .post(
            "/v1/games",
            &app.admin,
            json!({"name": "G", "genre": "rpg", "items": items}),
        )
        .await;
    expect_error(r, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
}

#[tokio::test]
async fn two_nodes_creating_one_item_give_one_201_and_one_409() {
    let a = spawn_app_on(Backend::Redis).await;
    let prefix = a.running.state.settings.store.key_prefix.clone();
    let b =
        super::helpers::spawn_with(super::helpers::settings(Backend::Redis, Some(prefix))).await;
    let game = a.create_game().await;
    let path = format!("/v1/games/{game}/items");
    for i in 0..10 {
        let body = item(&format!("race_{i}"), "consumable", 0.99);
        let (ra, rb) = tokio::join!(
            a.post(&path, &a.admin, body.clone()),
            b.post(&path, &b.admin, body)
        );
        let mut statuses = [ra.status().as_u16(), rb.status().as_u16()];
        statuses.sort_unstable();
        assert_eq!(statuses, [201, 409], "item race_{i}");
    }
    // Node B's creations reach node A over the bus.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while a.items(&game).await.len() < 10 {
        assert!(
            std::time::Instant::now() < deadline,
            "node A never saw node B's items"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(a.items(&game).await.len(), 10);
}
