//! Store products on items and bundles, and a game's store settings, through the REST API:
//! products round-trip and pay for one thing only, settings start `off`, only an admin
//! changes them or sees the Google Play token, and the rules of each field answer 422
//! naming it. The RSA test keys are `tests/keys/*.b64` (base64 DER SubjectPublicKeyInfo made
//! with openssl).

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{bundle, item, with};
use super::helpers::{Role, spawn_app};

const RSA_2048: &str = include_str!("../keys/rsa2048.b64");
const RSA_1024: &str = include_str!("../keys/rsa1024.b64");

/// The fields of a refusal's `details.errors`.
fn fields(body: &Value) -> Vec<String> {
    body["error"]["details"]["errors"]
        .as_array()
        .expect("details.errors")
        .iter()
        .map(|e| e["field"].as_str().expect("field").to_owned())
        .collect()
}

/// An item with store products.
fn sold(id: &str, products: Value) -> Value {
    with(
        item(id, "equipment", 4.99),
        json!({ "store_products": products }),
    )
}

#[tokio::test]
async fn store_products_round_trip_and_each_pays_for_one_thing() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let items = format!("/v1/games/{game}/items");
    let created = app
        .post(
            &items,
            sold(
                "sword",
                json!({"app_store": "com.game.sword", "google_play": "sword_1"}),
            ),
        )
        .expect(StatusCode::CREATED)
        .await;
    assert_eq!(
        created["store_products"],
        json!({"app_store": "com.game.sword", "google_play": "sword_1"})
    );
    let bulk = app
        .bulk(
            &game,
            json!([
                sold("axe", json!({"google_play": "axe-1"})),
                item("hat", "cosmetic", 1.99)
            ]),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(
        bulk["items"][0]["store_products"],
        json!({"google_play": "axe-1"})
    );
    assert_eq!(bulk["items"][1]["store_products"], json!({}));

    // The alphabet and the length of each store's ids.
    for bad in [
        json!({"app_store": "com game"}),
        json!({"google_play": "x".repeat(151)}),
    ] {
        let refused = app
            .post(&items, sold("bow", bad))
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
        assert!(
            fields(&refused)[0].starts_with("store_products."),
            "{refused}"
        );
    }

    // A product of another item: 409 naming the field, nothing written.
    let taken = app
        .post(&items, sold("bow", json!({"app_store": "com.game.sword"})))
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    assert_eq!(fields(&taken), ["store_products.app_store"]);
    // Two items of one bulk call naming one product: 422 at each index.
    let twice = app
        .bulk(
            &game,
            json!([
                sold("bow", json!({"google_play": "bow_1"})),
                sold("staff", json!({"google_play": "bow_1"}))
            ]),
        )
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    assert_eq!(fields(&twice), ["store_products.google_play"; 2]);
    let ids: Vec<Value> = app
        .items(&game)
        .await
        .into_iter()
        .map(|i| i["item_id"].clone())
        .collect();
    assert_eq!(ids, ["axe", "hat", "sword"]);

    // Bundles share the products' namespace with items, both ways.
    let bundles = format!("/v1/games/{game}/offer-bundles");
    let clash = app
        .add_bundle(
            &game,
            with(
                bundle("Kit", &["sword", "hat"], 5.99),
                json!({"store_products": {"google_play": "axe-1"}}),
            ),
        )
        .expect_error(StatusCode::CONFLICT, "conflict")
        .await;
    assert_eq!(fields(&clash), ["store_products.google_play"]);
    let kit = app
        .add_bundle(
            &game,
            with(
                bundle("Kit", &["sword", "hat"], 5.99),
                json!({"store_products": {"app_store": "com.game.kit"}}),
            ),
        )
        .expect(StatusCode::CREATED)
        .await;
    let kit_id = kit["bundle_id"].as_str().expect("id");
    let read = app.get_json(format!("{bundles}/{kit_id}")).await;
    assert_eq!(read["store_products"], json!({"app_store": "com.game.kit"}));
    app.patch(
        format!("{items}/hat"),
        json!({"store_products": {"app_store": "com.game.kit"}}),
    )
    .expect_error(StatusCode::CONFLICT, "conflict")
    .await;
    let patched = app
        .patch(
            format!("{bundles}/{kit_id}"),
            json!({"store_products": {"app_store": "com.game.kit2"}}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(
        patched["store_products"],
        json!({"app_store": "com.game.kit2"})
    );
    // The bundle let go of its old product, and a deleted item lets go of its own.
    app.patch(
        format!("{items}/hat"),
        json!({"store_products": {"app_store": "com.game.kit"}}),
    )
    .expect(StatusCode::OK)
    .await;
    app.delete_item(&game, "sword")
        .expect(StatusCode::NO_CONTENT)
        .await;
    app.post(&items, sold("bow", json!({"app_store": "com.game.sword"})))
        .expect(StatusCode::CREATED)
        .await;
}

#[tokio::test]
async fn store_settings_start_off_and_only_an_admin_changes_them_or_sees_the_token() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let path = format!("/v1/games/{game}/stores");
    let viewer = app.token("studio-a", Role::Viewer);

    let fresh = app.get_json(&path).await;
    assert_eq!(fresh["verification"], "off");
    assert_eq!(fresh["app_store"], Value::Null);
    assert_eq!(fresh["verified_since"], Value::Null);
    let apple_url = fresh["notification_urls"]["app_store"]
        .as_str()
        .expect("url");
    assert!(
        apple_url.ends_with(&format!("/v1/stores/app-store/notifications/{game}")),
        "{apple_url}"
    );
    assert!(apple_url.starts_with("http"), "{apple_url}");
    assert_eq!(fresh["notification_urls"]["google_play"], Value::Null);

    // Another studio's game is absent; a viewer reads but does not write.
    app.get(&path)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    let google = json!({"package_name": "com.studio.game", "public_key": RSA_2048.trim()});
    let report = json!({"verification": "report", "google_play": google});
    app.put(&path, report.clone())
        .token(&viewer)
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;

    // Field rules, each a 422 naming the field, none writing anything.
    for (body, field) in [
        (json!({"verification": "enforce"}), "verification"),
        (
            json!({"verification": "off", "google_play": {"package_name": "com.studio.game", "public_key": RSA_1024.trim()}}),
            "google_play.public_key",
        ),
        (
            json!({"verification": "off", "google_play": {"package_name": "com.studio.game", "public_key": "bm90IGEga2V5"}}),
            "google_play.public_key",
        ),
        (
            json!({"verification": "off", "app_store": {"bundle_id": "game"}}),
            "app_store.bundle_id",
        ),
        (
            // 2^53: past the largest whole number every JSON reader holds exactly.
            json!({"verification": "off", "app_store": {"bundle_id": "com.studio.game", "app_apple_id": 9_007_199_254_740_992_u64}}),
            "app_store.app_apple_id",
        ),
        (
            json!({"verification": "off", "app_store": {"bundle_id": "com.studio.game", "app_apple_id": 0}}),
            "app_store.app_apple_id",
        ),
        (
            json!({"verification": "off", "google_play": {"package_name": "com.1game", "public_key": RSA_2048.trim()}}),
            "google_play.package_name",
        ),
    ] {
        let refused = app
            .put(&path, body)
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
        assert_eq!(fields(&refused), [field], "{refused}");
    }
    assert_eq!(app.get_json(&path).await, fresh, "nothing was written");

    let saved = app.put(&path, report).expect(StatusCode::OK).await;
    assert_eq!(saved["verification"], "report");
    assert_eq!(saved["google_play"], google);
    let since = saved["verified_since"].clone();
    assert!(since.is_string(), "{saved}");
    let url = saved["notification_urls"]["google_play"]
        .as_str()
        .expect("url")
        .to_owned();
    let base = format!("/v1/stores/google-play/notifications/{game}");
    let token = url
        .split_once(&format!("{base}?token="))
        .map(|(_, token)| token.to_owned())
        .expect("the admin's URL carries the token");
    assert_eq!(token.len(), 43, "32 bytes, base64url");

    // A viewer sees the URL without its token.
    let seen = app.get(&path).token(&viewer).expect(StatusCode::OK).await;
    let viewer_url = seen["notification_urls"]["google_play"]
        .as_str()
        .expect("url");
    assert!(
        viewer_url.ends_with(&base) && !viewer_url.contains(&token),
        "{viewer_url}"
    );

    // Rotation: a new token, for admins only.
    let rotate = format!("{path}/google-play-token");
    app.post(&rotate, json!({}))
        .token(&viewer)
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    let rotated = app
        .call(reqwest::Method::POST, &rotate)
        .expect(StatusCode::OK)
        .await;
    let new_url = rotated["notification_urls"]["google_play"]
        .as_str()
        .expect("url");
    assert!(
        new_url.contains("?token=") && !new_url.contains(&token),
        "{new_url}"
    );
    assert_eq!(rotated["verified_since"], since);

    // Enforce keeps the stretch of verification; off ends it.
    let enforce = json!({"verification": "enforce", "google_play": google});
    let enforced = app.put(&path, enforce).expect(StatusCode::OK).await;
    assert_eq!(enforced["verified_since"], since);
    let off = app
        .put(&path, json!({"verification": "off", "google_play": google}))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(off["verified_since"], Value::Null);
    assert_eq!(off["notification_urls"]["google_play"], new_url);
}
