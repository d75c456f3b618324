//! The offers page in a real browser: a developer creates, edits and deletes a bundle, sees a
//! refused bundle's error next to its field, sets templates and runs an experiment; a viewer
//! sees the same configuration without a single write control. Each change is checked
//! through the REST API.

use reqwest::StatusCode;
use serde_json::json;

use super::browser::{self, PASSWORD, add_member};
use super::fixtures::{bundle, item};
use super::helpers::spawn_app;

#[tokio::test]
async fn a_developer_configures_bundles_templates_and_experiments() {
    let app = spawn_app().await;
    add_member(&app, "dev@studio-a.test", "developer").await;
    let game = app.create_game().await;
    app.bulk(
        &game,
        json!([
            item("sword", "equipment", 4.99),
            item("shield", "equipment", 3.99)
        ]),
    )
    .expect(StatusCode::OK)
    .await;
    let b = browser::open(&app).await;
    b.sign_in("dev@studio-a.test", PASSWORD).await;
    b.go(&format!("/dashboard/games/{game}/offers")).await;
    b.shot("offers").await;

    // A bundle naming an item the catalogue lacks: the service's words next to the field,
    // what was typed kept, nothing stored.
    b.fill("#bundle-name", "Knight set").await;
    b.fill("#bundle-items", "sword, lance").await;
    b.fill("#bundle-price", "6.99").await;
    b.click("#bundle-form button[type=submit]").await;
    let error = b.el("#error-item_ids").await.text().await.expect("error");
    assert!(error.contains("no live item `lance`"), "{error}");
    assert_eq!(
        b.el("#bundle-items")
            .await
            .prop("value")
            .await
            .expect("value")
            .as_deref(),
        Some("sword, lance")
    );
    b.shot("offers-bundle-refused").await;
    let listed = app
        .get_json(format!("/v1/games/{game}/offer-bundles"))
        .await;
    assert_eq!(listed["bundles"], json!([]));

    // The fixed bundle is created, listed, and the same through the API.
    b.fill("#bundle-items", "sword, shield").await;
    b.fill("#bundle-triggers", "boss_raid").await;
    b.click("#bundle-form button[type=submit]").await;
    let listed = app
        .get_json(format!("/v1/games/{game}/offer-bundles"))
        .await;
    let stored = &listed["bundles"][0];
    assert_eq!(stored["name"], "Knight set");
    assert_eq!(stored["item_ids"], json!(["sword", "shield"]));
    assert_eq!(stored["price_usd"], 6.99);
    assert_eq!(stored["triggers"], json!(["boss_raid"]));
    let id = stored["bundle_id"].as_str().expect("id").to_owned();
    assert!(b.has(&format!("tr[data-bundle-id='{id}']")).await);

    // Edit it on its own page, then delete it.
    b.click(&format!("tr[data-bundle-id='{id}'] a")).await;
    b.shot("bundle").await;
    b.fill("#bundle-price", "5.49").await;
    b.click("#bundle-form button[type=submit]").await;
    let one = app
        .get_json(format!("/v1/games/{game}/offer-bundles/{id}"))
        .await;
    assert_eq!(one["price_usd"], 5.49);
    b.client
        .execute("window.confirm = () => true;", vec![])
        .await
        .expect("accept the confirmation");
    b.click("form[action$='/delete'] button").await;
    let listed = app
        .get_json(format!("/v1/games/{game}/offer-bundles"))
        .await;
    assert_eq!(listed["bundles"], json!([]));

    // Templates: a refused list shows the service's words, a good one replaces the stored.
    b.fill(
        "#templates-json",
        r#"[{"event_type": "boss_raid", "categories": ["bundle"]}]"#,
    )
    .await;
    b.click("#templates-form button[type=submit]").await;
    let error = b.el("#error-categories").await.text().await.expect("error");
    assert!(error.contains("bundles are served by L3"), "{error}");
    b.fill(
        "#templates-json",
        r#"[{"event_type": "boss_raid", "categories": ["consumable"], "discount_pct": 20}]"#,
    )
    .await;
    b.click("#templates-form button[type=submit]").await;
    let templates = app
        .get_json(format!("/v1/games/{game}/offer-templates"))
        .await;
    assert_eq!(
        templates["templates"],
        json!([{"event_type": "boss_raid", "categories": ["consumable"], "discount_pct": 20}])
    );
    assert!(b.has("tr[data-event='boss_raid']").await);

    // An experiment from one variant a line; then deleted.
    b.fill("#variants", "control 1\ncheaper 1 x0.8").await;
    b.click("#experiment-form button[type=submit]").await;
    let experiments = app.get_json(format!("/v1/games/{game}/experiments")).await;
    let exp = &experiments["experiments"][0];
    assert_eq!(exp["variants"][1]["name"], "cheaper");
    assert_eq!(exp["variants"][1]["price_multiplier"], 0.8);
    let exp_id = exp["experiment_id"].as_str().expect("id").to_owned();
    b.shot("offers-configured").await;
    b.client
        .execute("window.confirm = () => true;", vec![])
        .await
        .expect("accept the confirmation");
    b.click(&format!("tr[data-experiment-id='{exp_id}'] button"))
        .await;
    let experiments = app.get_json(format!("/v1/games/{game}/experiments")).await;
    assert_eq!(experiments["experiments"], json!([]));
}

#[tokio::test]
async fn a_viewer_sees_the_offer_configuration_without_write_controls() {
    let app = spawn_app().await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let game = app.create_game().await;
    app.bulk(&game, json!([item("sword", "equipment", 4.99)]))
        .expect(StatusCode::OK)
        .await;
    let made = app
        .add_bundle(&game, bundle("Sword deal", &["sword"], 3.99))
        .expect(StatusCode::CREATED)
        .await;
    let id = made["bundle_id"].as_str().expect("id").to_owned();
    let b = browser::open(&app).await;
    b.sign_in("vic@studio-a.test", PASSWORD).await;
    b.go(&format!("/dashboard/games/{game}/offers")).await;
    assert!(b.has(&format!("tr[data-bundle-id='{id}']")).await);
    assert!(b.text().await.contains("Sword deal"));
    b.shot("offers-viewer").await;
    for control in ["#templates-form", "#bundle-form", "#experiment-form"] {
        assert!(!b.has(control).await, "{control} shown to a viewer");
    }
    b.go(&format!("/dashboard/games/{game}/offers/bundles/{id}"))
        .await;
    assert!(b.text().await.contains("Sword deal"));
    assert!(!b.has("form[method=post][action*='/offers/']").await);
}
