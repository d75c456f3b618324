//! Custom-page previews through the real HTTP surface: a saved page rendered to PNG at both
//! phone sizes with the bound item's price drawn, the screenshots served to the game's
//! authoring key and the studio only, their expiry, a page that cannot be rendered, unknown
//! pages, the bounded build queue refusing a burst with 503 and `Retry-After`, pages over
//! the render budget failing while the engine keeps serving offers, and one game's share of
//! the queue leaving room for another's.

use std::time::{Duration, Instant};

use reqwest::header::{CONTENT_TYPE, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use offer_preview::testing::{FIXTURE_PAGE as PAGE, fan_out_page, font_size_page, price_page};

use super::fixtures::{mixed_catalogue, pack, png, store_shelf, with};
use super::helpers::{
    Role, TestApp, default_backend, shared_backend, spawn_app, spawn_app_on, spawn_tuned,
};
use super::offers::{featured, offer};

const RUN_HEADER: &str = "X-Authoring-Run";

fn preview_path(game: &str) -> String {
    format!("/v1/games/{game}/custom-pages/preview")
}

/// A game with the store shelf; returns it and its authoring key.
async fn game_with_shelf(app: &TestApp) -> (String, String) {
    let game = app.create_game().await;
    app.bulk(&game, store_shelf()).expect(StatusCode::OK).await;
    let (key, _) = app.authoring_key(&game).await;
    (game, key)
}

/// Saves `template` bound to `gems_500` with the authoring key; returns the page id
/// (version 1).
async fn save(app: &TestApp, game: &str, key: &str, template: &str) -> String {
    let saved = app
        .post(
            format!("/v1/games/{game}/custom-pages/draft"),
            json!({"template": template,
                   "bindings": {"items": ["gems_500"], "title": "Spring sale", "discount": 40}}),
        )
        .token(key)
        .expect(StatusCode::CREATED)
        .await;
    saved["page_id"].as_str().expect("page id").to_owned()
}

/// Requests a preview of version 1 of `page`; returns its id.
async fn request(app: &TestApp, game: &str, key: &str, page: &str) -> String {
    let queued = app
        .post(preview_path(game), json!({"page_id": page, "version": 1}))
        .token(key)
        .expect(StatusCode::ACCEPTED)
        .await;
    queued["preview_id"]
        .as_str()
        .expect("preview id")
        .to_owned()
}

/// Sends `n` preview requests of one page at once and sorts the answers: the preview ids of
/// those queued (202), and the error bodies of those refused with `refusal`, each checked for
/// a `Retry-After` and the error `code`. Any other answer fails the test.
async fn burst(
    app: &TestApp,
    game: &str,
    key: &str,
    page: &str,
    n: usize,
    refusal: StatusCode,
    code: &str,
) -> (Vec<String>, Vec<Value>) {
    let body = json!({"page_id": page, "version": 1});
    let path = preview_path(game);
    let answers =
        futures::future::join_all((0..n).map(|_| app.post(&path, body.clone()).token(key).send()))
            .await;
    let mut accepted = Vec::new();
    let mut refused = Vec::new();
    for r in answers {
        match r.status() {
            StatusCode::ACCEPTED => {
                let queued: Value = r.json().await.expect("json");
                accepted.push(queued["preview_id"].as_str().expect("id").to_owned());
            }
            status if status == refusal => {
                assert!(r.headers().get(RETRY_AFTER).is_some(), "no Retry-After");
                let body: Value = r.json().await.expect("json");
                assert_eq!(body["error"]["code"], code, "{body}");
                refused.push(body);
            }
            other => panic!("a burst answered {other}"),
        }
    }
    (accepted, refused)
}

/// Polls a preview until its build ended (`ready` or `failed`); returns it.
async fn wait(app: &TestApp, game: &str, key: &str, preview: &str) -> Value {
    let path = format!("{}/{preview}", preview_path(game));
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let state = app.get(&path).token(key).expect(StatusCode::OK).await;
        let status = state["status"].as_str().expect("status");
        assert!(
            ["queued", "building", "ready", "failed"].contains(&status),
            "{state}"
        );
        if status == "ready" || status == "failed" {
            return state;
        }
        assert!(
            Instant::now() < deadline,
            "the preview never ended: {state}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Downloads a screenshot URL as raw bytes, asserting `200 image/png`.
async fn download(app: &TestApp, url: &str, key: &str) -> Vec<u8> {
    let r = app.get(url).token(key).send().await;
    assert_eq!(r.status(), StatusCode::OK, "{url}");
    assert_eq!(
        r.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()),
        Some("image/png")
    );
    r.bytes().await.expect("body").to_vec()
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn ihdr(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().expect("4 bytes"));
    (be(16), be(20))
}

/// Pixels darker than mid-grey in the centre band where the button's label is drawn.
fn dark_centre(png: &[u8]) -> usize {
    let img = image::load_from_memory(png).expect("decodes").to_rgba8();
    let (w, h) = img.dimensions();
    let (cx, cy) = (w / 2, h / 2);
    (cy - 40..cy + 40)
        .flat_map(|y| (cx - 200..cx + 200).map(move |x| (x, y)))
        .filter(|&(x, y)| img.get_pixel(x, y).0[0] < 128)
        .count()
}

#[tokio::test]
async fn a_preview_renders_the_page_to_pngs_at_both_phone_sizes() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let asset = app
        .call(Method::POST, format!("/v1/games/{game}/assets"))
        .raw("image/png", png(64, 64))
        .expect(StatusCode::CREATED)
        .await;
    let art = with(
        pack("gems_500", 500, 3.99),
        json!({"image": asset["asset_id"]}),
    );
    app.bulk(&game, json!([art])).expect(StatusCode::OK).await;
    let page = save(&app, &game, &key, PAGE).await;
    let preview = request(&app, &game, &key, &page).await;
    let state = wait(&app, &game, &key, &preview).await;
    assert_eq!(state["status"], "ready", "{state}");
    assert_eq!(state["page_id"], page.as_str());
    assert_eq!(state["version"], 1);
    assert!(state.get("error").is_none(), "{state}");
    assert!(state["expires_at"].is_string());
    let shots = state["screenshots"].as_array().expect("screenshots");
    let mut sizes = Vec::new();
    for shot in shots {
        let url = shot["url"].as_str().expect("url");
        let png = download(&app, url, &key).await;
        let (width, height) = ihdr(&png);
        assert_eq!(
            (json!(width), json!(height)),
            (shot["width"].clone(), shot["height"].clone())
        );
        sizes.push((width, height));
        // The item's art from the asset library, all black, is drawn: nothing else on the
        // page is pure black.
        let img = image::load_from_memory(&png).expect("decodes").to_rgb8();
        let black = img.pixels().filter(|p| p.0 == [0, 0, 0]).count();
        assert!(
            black > 10_000,
            "the item art is not drawn ({black} black pixels)"
        );
        // The studio's viewers read them too.
        let viewer = app.token("studio-a", Role::Viewer);
        let status = app.get(url).token(&viewer).send().await.status();
        assert_eq!(status, StatusCode::OK);
    }
    sizes.sort_unstable();
    assert_eq!(sizes, [(1080, 1920), (1170, 2532)]);
}

#[tokio::test]
async fn the_bound_items_price_is_drawn() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let mut dark = Vec::new();
    for label in ["", "label: '', "] {
        let page = save(&app, &game, &key, &price_page(label)).await;
        let preview = request(&app, &game, &key, &page).await;
        let state = wait(&app, &game, &key, &preview).await;
        assert_eq!(state["status"], "ready", "{state}");
        let shot = state["screenshots"]
            .as_array()
            .expect("screenshots")
            .iter()
            .find(|s| s["width"] == 1080)
            .expect("the 1080x1920 screenshot")
            .clone();
        let png = download(&app, shot["url"].as_str().expect("url"), &key).await;
        dark.push(dark_centre(&png));
    }
    assert!(
        dark[0] > 300,
        "the price region is blank ({} dark pixels)",
        dark[0]
    );
    assert_eq!(dark[1], 0, "a button without a label draws no text");
}

#[tokio::test]
async fn previews_are_the_callers_studios_and_games_only() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let page = save(&app, &game, &key, PAGE).await;
    let preview = request(&app, &game, &key, &page).await;
    let state = wait(&app, &game, &key, &preview).await;
    let url = state["screenshots"][0]["url"].as_str().expect("url");
    let status = format!("{}/{preview}", preview_path(&game));
    // Another studio, even its admin, finds nothing.
    let stranger = app.token("studio-b", Role::Admin);
    for path in [status.as_str(), url] {
        app.get(path)
            .token(&stranger)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    app.post(preview_path(&game), json!({"page_id": page, "version": 1}))
        .token(&stranger)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // Another game of the same studio: its key, or the preview under its path.
    let other = app.create_game().await;
    let (other_key, _) = app.authoring_key(&other).await;
    for path in [status.as_str(), url] {
        app.get(path)
            .token(&other_key)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    app.get(format!("{}/{preview}", preview_path(&other)))
        .token(&other_key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // A viewer reads but does not request.
    let viewer = app.token("studio-a", Role::Viewer);
    app.get(&status).token(&viewer).expect(StatusCode::OK).await;
    app.post(preview_path(&game), json!({"page_id": page, "version": 1}))
        .token(&viewer)
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    // A screenshot size the preview does not have.
    app.get(format!("{status}/screenshots/100x100.png"))
        .token(&key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(format!("{status}/screenshots/big.png"))
        .token(&key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn screenshots_expire_then_answer_404() {
    let app = spawn_tuned(default_backend(), |s| {
        s.authoring.screenshot_ttl_s = std::num::NonZeroU64::MIN;
    })
    .await;
    let (game, key) = game_with_shelf(&app).await;
    let page = save(&app, &game, &key, PAGE).await;
    let preview = request(&app, &game, &key, &page).await;
    let state = wait(&app, &game, &key, &preview).await;
    assert_eq!(state["status"], "ready", "{state}");
    let url = state["screenshots"][0]["url"]
        .as_str()
        .expect("url")
        .to_owned();
    let status = format!("{}/{preview}", preview_path(&game));
    // Read within its second or already gone: either way, it ends as a 404 for both.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let shot = app.get(&url).token(&key).send().await.status();
        let record = app.get(&status).token(&key).send().await.status();
        assert!([StatusCode::OK, StatusCode::NOT_FOUND].contains(&shot));
        assert!([StatusCode::OK, StatusCode::NOT_FOUND].contains(&record));
        if shot == StatusCode::NOT_FOUND && record == StatusCode::NOT_FOUND {
            break;
        }
        assert!(Instant::now() < deadline, "the screenshots never expired");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    app.get(&url)
        .token(&key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn a_page_that_does_not_parse_fails_with_why() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let page = save(
        &app,
        &game,
        &key,
        "class Page extends StatelessWidget {\n  Widget build(\n}\n",
    )
    .await;
    let preview = request(&app, &game, &key, &page).await;
    let state = wait(&app, &game, &key, &preview).await;
    assert_eq!(state["status"], "failed", "{state}");
    assert!(
        state["error"].as_str().is_some_and(|e| e.contains("line")),
        "{state}"
    );
    assert_eq!(state["screenshots"], json!([]));
}

#[tokio::test]
async fn unknown_pages_and_versions_are_404_and_bad_bodies_422() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let page = save(&app, &game, &key, PAGE).await;
    for body in [
        json!({"page_id": uuid::Uuid::new_v4(), "version": 1}),
        json!({"page_id": page, "version": 2}),
    ] {
        app.post(preview_path(&game), body)
            .token(&key)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
    app.post(preview_path(&game), json!({"page_id": page}))
        .token(&key)
        .expect(StatusCode::UNPROCESSABLE_ENTITY)
        .await;
    app.get(format!("{}/{}", preview_path(&game), uuid::Uuid::new_v4()))
        .token(&key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

/// One worker and a queue of one hold two builds; a burst of twelve requests at once can
/// only be taken if ten builds (twenty full-size renders) end while it arrives.
#[tokio::test]
async fn a_full_queue_refuses_with_503_and_retry_after() {
    let app = spawn_tuned(default_backend(), |s| {
        s.authoring.preview_workers = 1;
        s.authoring.preview_queue = std::num::NonZeroUsize::MIN;
        // Shares larger than the burst: only the queue refuses here.
        s.authoring.preview_per_game = std::num::NonZeroUsize::new(100).expect("positive");
        s.authoring.preview_per_key = std::num::NonZeroUsize::new(100).expect("positive");
    })
    .await;
    let (game, key) = game_with_shelf(&app).await;
    let page = save(&app, &game, &key, PAGE).await;
    let (accepted, refused) = burst(
        &app,
        &game,
        &key,
        &page,
        12,
        StatusCode::SERVICE_UNAVAILABLE,
        "preview_queue_full",
    )
    .await;
    assert!(!accepted.is_empty(), "nothing was queued");
    assert!(
        !refused.is_empty(),
        "a burst of 12 never filled a queue of one"
    );
    // What was taken is built all the same.
    for preview in &accepted {
        let state = wait(&app, &game, &key, preview).await;
        assert_eq!(state["status"], "ready", "{state}");
    }
}

/// The node that took the request builds it; any node answers for the preview and its
/// screenshots, which are in the store.
#[tokio::test]
async fn another_node_serves_the_preview_and_its_screenshots() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let (game, key) = game_with_shelf(&a).await;
    let page = save(&a, &game, &key, PAGE).await;
    let preview = request(&a, &game, &key, &page).await;
    let state = wait(&b, &game, &key, &preview).await;
    assert_eq!(state["status"], "ready", "{state}");
    for shot in state["screenshots"].as_array().expect("screenshots") {
        let png = download(&b, shot["url"].as_str().expect("url"), &key).await;
        let (width, height) = ihdr(&png);
        assert_eq!(
            json!([width, height]),
            json!([shot["width"], shot["height"]])
        );
    }
}

/// A preview named in an authoring run is recorded there with what it queued (or why it was
/// refused), and an unconfirmed cloud run refuses it.
#[tokio::test]
async fn a_preview_in_a_run_is_recorded_and_a_cloud_run_refuses_it_until_confirmed() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    let page = save(&app, &game, &key, PAGE).await;
    let runs = format!("/v1/games/{game}/custom-pages/runs");
    let open = |mode: &'static str| {
        app.post(&runs, json!({ "mode": mode }))
            .token(&key)
            .expect(StatusCode::CREATED)
    };
    let run = open("local").await;
    let run_id = run["run_id"].as_str().expect("run id");
    let queued = app
        .post(preview_path(&game), json!({"page_id": page, "version": 1}))
        .token(&key)
        .header(RUN_HEADER, run_id)
        .expect(StatusCode::ACCEPTED)
        .await;
    app.post(preview_path(&game), json!({"page_id": page, "version": 9}))
        .token(&key)
        .header(RUN_HEADER, run_id)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    let read = app.get_json(format!("{runs}/{run_id}")).await;
    let calls = read["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 2, "{read}");
    assert_eq!(calls[0]["kind"], "preview");
    assert_eq!(
        calls[0]["outcome"],
        json!({"status": 202, "page_id": page, "version": 1,
               "preview_id": queued["preview_id"]})
    );
    assert_eq!(
        calls[1]["outcome"],
        json!({"status": 404, "code": "not_found"})
    );

    let cloud = open("cloud").await;
    app.post(preview_path(&game), json!({"page_id": page, "version": 1}))
        .token(&key)
        .header(RUN_HEADER, cloud["run_id"].as_str().expect("run id"))
        .expect_error(StatusCode::CONFLICT, "run_not_confirmed")
        .await;
}

/// A preview of `template` (saved as a new page) that ended failed; its error.
async fn failed_with(app: &TestApp, game: &str, key: &str, template: &str) -> String {
    let page = save(app, game, key, template).await;
    let preview = request(app, game, key, &page).await;
    let state = wait(app, game, key, &preview).await;
    assert_eq!(state["status"], "failed", "{state}");
    assert_eq!(state["screenshots"], json!([]));
    state["error"].as_str().expect("why it failed").to_owned()
}

/// Huge fonts (a glyph of 20000 logical pixels is gigabytes as a buffer of its own) and
/// methods calling each other ten ways seven deep (ten million calls) fail their previews
/// naming the limit, and the engine goes on serving: offers to a player, and a good page's
/// preview after them.
#[tokio::test]
async fn pages_over_the_render_budget_fail_naming_the_limit_and_the_engine_keeps_serving() {
    let app = spawn_app().await;
    let (game, key) = game_with_shelf(&app).await;
    for size in [5_000, 20_000, 100_000] {
        let error = failed_with(&app, &game, &key, &font_size_page(size)).await;
        assert!(
            error.contains("over the preview budget")
                && error.contains("font size limit")
                && error.contains(&size.to_string()),
            "{error}"
        );
    }
    let error = failed_with(&app, &game, &key, &fan_out_page(10, 7)).await;
    assert!(error.contains("evaluation step limit"), "{error}");

    let sdk = app.game_with(mixed_catalogue()).await;
    let session = featured(&app, &sdk).await;
    let (status, served, _) = offer(&app, &sdk, &session, "boss_raid").await;
    assert_eq!(status, StatusCode::OK, "{served}");
    assert!(served["offer_id"].is_string(), "{served}");

    let page = save(&app, &game, &key, PAGE).await;
    let preview = request(&app, &game, &key, &page).await;
    let state = wait(&app, &game, &key, &preview).await;
    assert_eq!(state["status"], "ready", "{state}");
}

/// One key of game A sends a burst: past its share it is refused with 429
/// `preview_share_full`, and game B's preview is still taken at once (the queue holds 16).
#[tokio::test]
async fn one_key_filling_its_share_leaves_room_for_another_games_previews() {
    let app = spawn_tuned(default_backend(), |s| {
        s.authoring.preview_workers = 1;
        s.authoring.preview_per_game = std::num::NonZeroUsize::new(3).expect("positive");
        s.authoring.preview_per_key = std::num::NonZeroUsize::new(2).expect("positive");
    })
    .await;
    let (game_a, key_a) = game_with_shelf(&app).await;
    let (game_b, key_b) = game_with_shelf(&app).await;
    let page_a = save(&app, &game_a, &key_a, PAGE).await;
    let page_b = save(&app, &game_b, &key_b, PAGE).await;
    let (accepted, refused) = burst(
        &app,
        &game_a,
        &key_a,
        &page_a,
        8,
        StatusCode::TOO_MANY_REQUESTS,
        "preview_share_full",
    )
    .await;
    for body in &refused {
        let message = body["error"]["message"].as_str().expect("message");
        assert!(message.contains("authoring key already has 2"), "{message}");
    }
    assert!(!accepted.is_empty(), "nothing was queued");
    assert!(
        !refused.is_empty(),
        "a burst of 8 never filled a share of 2"
    );
    // Game B is not held back by game A's burst.
    let preview_b = request(&app, &game_b, &key_b, &page_b).await;
    // What was taken is built all the same, and the share is given back after.
    for preview in &accepted {
        let state = wait(&app, &game_a, &key_a, preview).await;
        assert_eq!(state["status"], "ready", "{state}");
    }
    let state = wait(&app, &game_b, &key_b, &preview_b).await;
    assert_eq!(state["status"], "ready", "{state}");
}
