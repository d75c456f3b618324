//! Catalogue through the real HTTP surface, on the embedded store and on Redis: bulk
//! upserts and their limits, item values, single items (conflict, patch, soft delete),
//! paging, item art, game creation, and two nodes racing on one Redis (one item created
//! twice; one catalogue written by both at once).

use reqwest::{Method, StatusCode};
use serde_json::json;

use super::fixtures::{consumables, game_body, item, pack, png, with};
use super::helpers::{Backend, shared_backend, spawn_app, spawn_app_on};

/// Bulk-loads a catalogue on `backend`, checks the computed fields, and on Redis reads it
/// back through a second node (on the Redis Cluster when `OFFER_TEST_STORE=redis-cluster`).
async fn round_trip(backend: Backend) {
    let app = spawn_app_on(backend).await;
    let game = app.create_game().await;
    let body = app
        .bulk(
            &game,
            json!([
                pack("gems_100", 100, 0.99),
                pack("gems_1000", 1000, 4.99),
                item("sword", "equipment", 2.99)
            ]),
        )
        .expect(StatusCode::OK)
        .await;
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
    // An item without a quantity has none in its JSON (not a `null`).
    assert_eq!(by_id("gems_100")["quantity"], 100);
    assert!(
        by_id("sword").get("quantity").is_none(),
        "{}",
        by_id("sword")
    );
    // A new instance of the service on the same store sees the same catalogue.
    if backend.shared() {
        let second = app.spawn_peer().await;
        assert_eq!(second.items(&game).await.len(), 3);
    }
}

#[tokio::test]
async fn catalogue_round_trip_embedded() {
    round_trip(Backend::Embedded).await;
}

#[tokio::test]
async fn catalogue_round_trip_redis() {
    round_trip(shared_backend()).await;
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
    .expect(StatusCode::OK)
    .await;
    let items = app.items(&game).await;
    let potion = items
        .iter()
        .find(|i| i["item_id"] == "potion")
        .expect("potion");
    assert_eq!(potion["value_usd"], 1.98);
    app.patch(
        format!("/v1/games/{game}/items/gems_100"),
        json!({"price_usd": 1.99}),
    )
    .expect(StatusCode::OK)
    .await;
    let items = app.items(&game).await;
    let v =
        |id: &str| items.iter().find(|i| i["item_id"] == id).expect("item")["value_usd"].clone();
    assert_eq!(v("gems_1000"), 19.9);
    assert_eq!(v("potion"), 3.98);
    // The expert override wins.
    let body = app
        .patch(
            format!("/v1/games/{game}/items/potion"),
            json!({"value_override_usd": 5.0}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(body["value_override_usd"], 5.0);
}

#[tokio::test]
async fn bulk_500_accepted_501_rejected() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    app.bulk(&game, consumables("item", 500))
        .expect(StatusCode::OK)
        .await;
    app.bulk(&game, consumables("more", 501))
        .expect_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
        .await;
    assert_eq!(app.items(&game).await.len(), 500);
}

#[tokio::test]
async fn one_bad_item_rejects_all_and_names_its_index() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let mut items = consumables("item", 10);
    items[7]["price_usd"] = json!(-1);
    let body = app
        .bulk(&game, items.clone())
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    assert_eq!(body["error"]["details"]["errors"][0]["index"], 7);
    assert_eq!(body["error"]["details"]["errors"][0]["field"], "price_usd");
    assert!(app.items(&game).await.is_empty());
    // A type error (unknown category) is located too.
    items[7]["price_usd"] = json!(0.99);
    items[3]["category"] = json!("weapon");
    let body = app
        .bulk(&game, items)
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    assert_eq!(body["error"]["details"]["errors"][0]["index"], 3);
    assert!(app.items(&game).await.is_empty());
}

#[tokio::test]
async fn a_bulk_call_reports_every_problem_of_every_item() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let mut items = consumables("item", 6);
    items[1]["category"] = json!("weapon");
    items[4]["price_usd"] = json!(-1);
    items[5]["item_name"] = json!("");
    items[5]["price_usd"] = json!(-2);
    let body = app
        .bulk(&game, items)
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    let mut found: Vec<(u64, String)> = body["error"]["details"]["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| {
            let index = e["index"].as_u64().expect("index");
            (index, e["field"].as_str().expect("field").to_owned())
        })
        .collect();
    found.sort();
    assert_eq!(
        found,
        vec![
            (1, "category".to_owned()),
            (4, "price_usd".to_owned()),
            (5, "item_name".to_owned()),
            (5, "price_usd".to_owned()),
        ]
    );
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
    app.bulk(&game, items.clone()).expect(StatusCode::OK).await;
    let mut changed = items.clone();
    changed[0]["price_usd"] = json!(3.99);
    let body = app.bulk(&game, changed).expect(StatusCode::OK).await;
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
    app.post(&path, item("sword", "equipment", 2.99))
        .expect(StatusCode::CREATED)
        .await;
    app.post(&path, item("sword", "equipment", 2.99))
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    // item_id is immutable.
    let sword = format!("{path}/sword");
    app.patch(&sword, json!({"item_id": "axe"}))
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    let body = app
        .patch(&sword, json!({"description": "Sharp"}))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(body["description"], "Sharp");
    assert_eq!(body["item_id"], "sword");
    // Soft delete: gone from lists, visible with include_deleted.
    app.delete(&sword).expect(StatusCode::NO_CONTENT).await;
    assert!(app.items(&game).await.is_empty());
    let body = app.get_json(format!("{path}?include_deleted=true")).await;
    assert_eq!(body["items"][0]["item_id"], "sword");
    assert!(body["items"][0]["deleted_at"].is_string());
    app.delete(&sword)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn list_pages_with_a_cursor() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    app.bulk(&game, consumables("item", 25))
        .expect(StatusCode::OK)
        .await;
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let q = cursor
            .as_ref()
            .map_or(String::new(), |c| format!("&cursor={c}"));
        let body = app
            .get_json(format!("/v1/games/{game}/items?limit=10{q}"))
            .await;
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
    app.get(format!("/v1/games/{game}/items?limit=0"))
        .expect_error(StatusCode::BAD_REQUEST, "bad_request")
        .await;
}

#[tokio::test]
async fn item_art_is_checked_by_content_and_served() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let assets = format!("/v1/games/{game}/assets");
    let upload = |bytes: Vec<u8>| app.call(Method::POST, &assets).raw("image/png", bytes);
    let png = png(3, 2);
    let asset = upload(png.clone()).expect(StatusCode::CREATED).await;
    assert_eq!(
        (asset["width"].clone(), asset["height"].clone()),
        (json!(3), json!(2))
    );
    let asset_id = asset["asset_id"].as_str().expect("id");
    // A text file named and declared as an image is refused, and so is one that only starts
    // like an image.
    let disguised = [
        b"\x89PNG\r\n\x1a\n".as_slice(),
        b"<html><script>alert(1)</script></html>",
    ]
    .concat();
    for refused in [b"hello, not an image".to_vec(), disguised] {
        upload(refused)
            .expect_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type")
            .await;
    }
    // An image larger than the configured side is refused.
    upload(super::fixtures::png(5000, 1))
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    // Over 1 MiB is refused.
    let big = [b"\x89PNG\r\n\x1a\n".as_slice(), &vec![0u8; 1 << 20]].concat();
    upload(big)
        .expect_error(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large")
        .await;
    // An item names the asset and gets its URL; the URL serves the bytes.
    let sword = with(item("sword", "equipment", 2.99), json!({"image": asset_id}));
    app.bulk(&game, json!([sword])).expect(StatusCode::OK).await;
    let items = app.items(&game).await;
    let url = items[0]["image_url"].as_str().expect("url").to_owned();
    let r = app.get(url).send().await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "image/png");
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert_eq!(
        r.headers()["content-security-policy"],
        "default-src 'none'; sandbox"
    );
    assert_eq!(r.bytes().await.expect("bytes").to_vec(), png);
    // An unknown asset is refused.
    let axe = with(item("axe", "equipment", 2.99), json!({"image": "deadbeef"}));
    app.bulk(&game, json!([axe]))
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
}

#[tokio::test]
async fn game_create_get_patch_merges_guardrails() {
    let app = spawn_app().await;
    let created = app
        .post(
            "/v1/games",
            with(
                game_body("puzzle"),
                json!({"guardrails": {"max_price_cents": 999},
                       "items": [item("hint", "consumable", 0.99)]}),
            ),
        )
        .expect(StatusCode::CREATED)
        .await;
    let id = created["game_id"].as_str().expect("id");
    assert_eq!(
        created["guardrails"]["loot_box_blocked_countries"],
        json!(["BE", "NL"])
    );
    assert_eq!(app.items(id).await.len(), 1);
    let patched = app
        .patch(
            format!("/v1/games/{id}"),
            json!({"guardrails": {"max_offers_per_session": 3}}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(patched["guardrails"]["max_price_cents"], 999);
    assert_eq!(patched["guardrails"]["max_offers_per_session"], 3);
    // An unknown genre, and more than 20 items at creation, are refused.
    for refused in [
        game_body("racing"),
        with(game_body("rpg"), json!({"items": consumables("i", 21)})),
    ] {
        app.post("/v1/games", refused)
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
    }
}

#[tokio::test]
async fn two_nodes_creating_one_item_give_one_201_and_one_409() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let game = a.create_game().await;
    let path = format!("/v1/games/{game}/items");
    for i in 0..10 {
        let body = item(&format!("race_{i}"), "consumable", 0.99);
        let (ra, rb) = tokio::join!(
            a.post(&path, body.clone()).send(),
            b.post(&path, body).send()
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

#[tokio::test]
async fn two_nodes_writing_one_catalogue_at_once_never_use_a_stale_copy() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    // A potion priced in gems is worth 200 gems at the face rate of the smallest pack, so
    // its value depends on the pack that node A reprices while node B adds the potion.
    let potion = json!({"item_id": "potion", "item_name": "Potion", "category": "consumable",
                        "price_usd": 0, "earned_price": {"currency_id": "gems", "amount": 200}});
    // Hundreds of other items make each write's read, recomputation and write long enough
    // for the two to overlap.
    let mut catalogue = consumables("filler", 400);
    catalogue
        .as_array_mut()
        .expect("array")
        .push(pack("gems_100", 100, 0.99));
    for round in 0..10 {
        let game = a.create_game().await;
        a.bulk(&game, catalogue.clone())
            .expect(StatusCode::OK)
            .await;
        // Node B loads the game first, so that both writes start together.
        assert_eq!(b.items(&game).await.len(), 401);
        let (repriced, added) = tokio::join!(
            a.bulk(&game, json!([pack("gems_100", 100, 1.99)])).send(),
            b.bulk(&game, json!([potion.clone()])).send()
        );
        assert_eq!(repriced.status(), StatusCode::OK, "round {round}");
        assert_eq!(added.status(), StatusCode::OK, "round {round}");
        // Each node shows the other's write once the bus made it reload; both then show the
        // values the store holds.
        for node in [&a, &b] {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            loop {
                let items = node.items(&game).await;
                let value = |id: &str| {
                    items
                        .iter()
                        .find(|i| i["item_id"] == id)
                        .map(|i| i["value_usd"].clone())
                };
                let seen = (value("gems_100"), value("potion"));
                if seen == (Some(json!(1.99)), Some(json!(3.98))) {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "round {round}: the potion's value must follow the new pack price: {seen:?}"
                );
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        }
    }
}

#[tokio::test]
async fn a_studio_lists_its_own_games_a_page_at_a_time() {
    let app = spawn_app().await;
    let mut mine = Vec::new();
    for _ in 0..3 {
        mine.push(app.create_game().await);
    }
    mine.sort();
    let other = app.token("studio-b", super::helpers::Role::Admin);
    let theirs = app
        .post("/v1/games", game_body("rpg"))
        .token(&other)
        .expect(StatusCode::CREATED)
        .await;
    let first = app.get("/v1/games?limit=2").expect(StatusCode::OK).await;
    let ids = |page: &serde_json::Value| -> Vec<String> {
        page["games"]
            .as_array()
            .expect("games")
            .iter()
            .map(|g| g["game_id"].as_str().expect("id").to_owned())
            .collect()
    };
    assert_eq!(ids(&first), mine[..2].to_vec());
    let cursor = first["next_cursor"].as_str().expect("a next page");
    let second = app
        .get(format!("/v1/games?limit=2&cursor={cursor}"))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(ids(&second), mine[2..].to_vec());
    assert!(second["next_cursor"].is_null());
    let listed = app
        .get("/v1/games")
        .token(&other)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(
        ids(&listed),
        vec![theirs["game_id"].as_str().expect("id").to_owned()]
    );
    app.get("/v1/games?limit=0")
        .expect_error(StatusCode::BAD_REQUEST, "bad_request")
        .await;
}

#[tokio::test]
async fn a_deleted_item_comes_back_only_when_asked_to() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let items = consumables("item", 3);
    app.bulk(&game, items.clone()).expect(StatusCode::OK).await;
    app.delete_item(&game, "item_01")
        .expect(StatusCode::NO_CONTENT)
        .await;
    // Re-running the same upload does not revive it by accident.
    let refused = app
        .bulk(&game, items.clone())
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    assert_eq!(
        refused["error"]["details"]["errors"],
        json!([{"index": 1, "field": "item_id", "reason": "deleted"}])
    );
    let live =
        |items: Vec<serde_json::Value>| items.iter().filter(|i| i["deleted_at"].is_null()).count();
    assert_eq!(live(app.items(&game).await), 2);
    // Asking for it brings it back.
    let mut restore = items;
    restore[1]["restore"] = json!(true);
    app.bulk(&game, restore).expect(StatusCode::OK).await;
    assert_eq!(live(app.items(&game).await), 3);
}
