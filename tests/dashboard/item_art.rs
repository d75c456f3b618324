//! Item art in a real browser: a developer uploads an image on the item's page, the item names
//! the stored asset (checked through the REST API) and the page shows it, loaded through the
//! member's session; a file that is not an image is refused next to the field.

use reqwest::StatusCode;
use serde_json::json;

use super::browser::{self, PASSWORD, add_member};
use super::fixtures::{item, png};
use super::helpers::{remove_scratch, scratch_dir, spawn_app};

#[tokio::test]
async fn a_developer_uploads_item_art_and_sees_it() {
    let app = spawn_app().await;
    add_member(&app, "dev@studio-a.test", "developer").await;
    let game = app.create_game().await;
    app.bulk(&game, json!([item("sword", "equipment", 4.99)]))
        .expect(StatusCode::OK)
        .await;
    let dir = scratch_dir();
    let art = dir.join("sword.png");
    std::fs::write(&art, png(40, 30)).expect("write the image");
    let text = dir.join("notes.png");
    std::fs::write(&text, "not an image at all").expect("write the text");
    let b = browser::open(&app).await;
    b.sign_in("dev@studio-a.test", PASSWORD).await;
    b.go(&format!("/dashboard/games/{game}/items/sword")).await;
    assert!(!b.has("#item-art").await, "no art yet");

    // Not an image: the asset service's words next to the field, the item unchanged.
    b.el("#art")
        .await
        .send_keys(text.to_str().expect("path"))
        .await
        .expect("choose the file");
    b.click("#art-form button[type=submit]").await;
    let error = b.el("#error-art").await.text().await.expect("error");
    assert!(!error.is_empty());
    let sword = &app.items(&game).await[0];
    assert!(sword["image"].is_null(), "{sword}");

    // A PNG: stored, named by the item, shown on its page.
    b.el("#art")
        .await
        .send_keys(art.to_str().expect("path"))
        .await
        .expect("choose the file");
    b.click("#art-form button[type=submit]").await;
    let sword = &app.items(&game).await[0];
    let asset = sword["image"].as_str().expect("the item names its art");
    let src = b
        .el("#item-art")
        .await
        .attr("src")
        .await
        .expect("src")
        .expect("an image source");
    assert!(src.ends_with(&format!("/assets/{asset}")), "{src}");
    let width = b
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];
             const img = document.getElementById('item-art');
             if (img.complete) { done(img.naturalWidth); }
             else { img.onload = () => done(img.naturalWidth); img.onerror = () => done(0); }",
            vec![],
        )
        .await
        .expect("the image's width");
    assert_eq!(width, json!(40), "the art loaded through the session");
    b.shot("item-art").await;
    remove_scratch(&art);
}
