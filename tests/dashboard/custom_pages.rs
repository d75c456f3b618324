//! Custom pages and authoring runs in a real browser: the authoring tool drafts a page over
//! REST with its key; a developer finds the draft in the dashboard, makes its preview and sees
//! both screenshots load, asks to publish it and finds it in the approval queue with its
//! screenshots; a cloud run opened by the tool is confirmed with the Confirm button, which
//! REST then reports. A viewer sees none of the write controls and the server refuses the
//! writes anyway (without the CSRF token too); another studio's member gets a 404 for the
//! page, its screenshots and the runs. A custom page's approval shows its template (escaped)
//! and the validator's verdict on it now; approving one that no longer validates is refused
//! on that page and leaves it pending, and asking to publish it again is refused on the
//! custom page's form.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::browser::{self, Browser, PASSWORD, add_member, add_member_as};
use super::fixtures::store_shelf;
use super::helpers::{Role, TestApp, spawn_app};
use super::web::{get_page, post_form, sign_in};

const PAGE: &str = include_str!("../../domain/tests/fixtures/offer_page.dart");

/// Only to avoid hangs: the longest wait for a preview's build.
const BUILD: Duration = Duration::from_secs(180);

/// Saves the page as the authoring tool does (its key, no member); returns its id.
async fn draft(app: &TestApp, game: &str, key: &str) -> String {
    let saved = app
        .post(
            format!("/v1/games/{game}/custom-pages/draft"),
            json!({"template": PAGE,
                   "bindings": {"items": ["gems_500"], "title": "Spring sale", "discount": 40}}),
        )
        .token(key)
        .expect(StatusCode::CREATED)
        .await;
    saved["page_id"].as_str().expect("page id").to_owned()
}

/// Opens a cloud run with the tool's key; returns its id.
async fn cloud_run(app: &TestApp, game: &str, key: &str) -> String {
    let run = app
        .post(
            format!("/v1/games/{game}/custom-pages/runs"),
            json!({"mode": "cloud"}),
        )
        .token(key)
        .expect(StatusCode::CREATED)
        .await;
    run["run_id"].as_str().expect("run id").to_owned()
}

/// The `(complete, naturalWidth)` of every image under `css`.
async fn images(b: &Browser, css: &str) -> Vec<(bool, u64)> {
    let found = b
        .client
        .execute(
            "return Array.from(document.querySelectorAll(arguments[0])).map(i => [i.complete, i.naturalWidth]);",
            vec![json!(css)],
        )
        .await
        .expect("script");
    found
        .as_array()
        .expect("a list")
        .iter()
        .map(|pair| {
            (
                pair[0].as_bool().expect("complete"),
                pair[1].as_u64().expect("width"),
            )
        })
        .collect()
}

/// Reloads the page until its preview's build ended; returns its status.
async fn built(b: &Browser) -> String {
    let started = Instant::now();
    loop {
        let status = b
            .el("#preview-state")
            .await
            .attr("data-status")
            .await
            .expect("attr")
            .unwrap_or_default();
        if status == "ready" || status == "failed" {
            return status;
        }
        assert!(started.elapsed() < BUILD, "the preview is still {status}");
        tokio::time::sleep(Duration::from_millis(500)).await;
        b.client.refresh().await.expect("reload");
    }
}

#[tokio::test]
async fn a_developer_previews_and_asks_to_publish_a_drafted_page_and_confirms_a_cloud_run() {
    let app = spawn_app().await;
    add_member(&app, "dev@studio-a.test", "developer").await;
    let game = app.create_game().await;
    app.bulk(&game, store_shelf()).expect(StatusCode::OK).await;
    // The admin's token ("alice") approves the tool's key: the developer is a second member.
    let (key, _) = app.authoring_key(&game).await;
    let page = draft(&app, &game, &key).await;

    let b = browser::open(&app).await;
    b.sign_in("dev@studio-a.test", PASSWORD).await;
    b.go(&format!("/dashboard/games/{game}")).await;
    b.click("nav.tabs a[href$='/custom-pages']").await;
    let row = format!("tr[data-page-id='{page}']");
    let listed = b.el(&row).await.text().await.expect("row");
    assert!(listed.contains("draft"), "{listed}");
    assert!(listed.contains("authoring_key:"), "{listed}");
    b.shot("custom-pages").await;

    // The page: its version's content, no preview yet; the preview is made and both phone
    // sizes load as images.
    b.click(&format!("{row} a")).await;
    let bound = b.el("#bound-items").await.text().await.expect("items");
    assert_eq!(bound, "gems_500");
    assert!(b.text().await.contains("Spring sale"));
    assert_eq!(
        b.el("#preview-state")
            .await
            .attr("data-status")
            .await
            .expect("attr"),
        None
    );
    b.click("#make-preview").await;
    assert_eq!(built(&b).await, "ready");
    let shots = images(&b, "#preview .shots img").await;
    assert_eq!(shots, [(true, 1080), (true, 1170)], "both sizes load");
    b.shot("custom-page").await;

    // The screenshot route is the studio's only.
    let src = b
        .el("#preview .shots img")
        .await
        .attr("src")
        .await
        .expect("attr")
        .expect("a src");
    let dev = sign_in(&app, "dev@studio-a.test").await;
    let png = get_page(&app, &src, &dev.cookie).await;
    assert_eq!(png.status(), StatusCode::OK);
    assert_eq!(png.headers()["content-type"], "image/png");
    add_member_as(
        &app,
        &app.token("studio-b", Role::Admin),
        "bob@studio-b.test",
        "admin",
    )
    .await;
    let bob = sign_in(&app, "bob@studio-b.test").await;
    for path in [
        src.clone(),
        format!("/dashboard/games/{game}/custom-pages"),
        format!("/dashboard/games/{game}/custom-pages/{page}"),
    ] {
        let answer = get_page(&app, &path, &bob.cookie).await;
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{path}");
    }

    // The publish request lands in the approval queue, the page shown with its screenshots.
    b.click("#request-publish").await;
    assert!(b.path().await.starts_with("/dashboard/approvals/"));
    assert_eq!(
        images(&b, "#page-preview .shots img").await,
        [(true, 1080), (true, 1170)]
    );
    b.shot("approval-custom-page").await;
    let pending = app
        .get_json(format!("/v1/games/{game}/approvals?status=pending"))
        .await;
    let queued = &pending["approvals"][0];
    assert_eq!(queued["page"]["page_id"], Value::from(page.clone()));
    assert_eq!(queued["page"]["version"], 1);
    let approval = queued["approval_id"].as_str().expect("id").to_owned();
    b.click("nav.tabs a[href$='/approvals']").await;
    let row = format!("tr[data-approval-id='{approval}']");
    assert!(
        b.el(&row)
            .await
            .text()
            .await
            .expect("row")
            .contains("Custom page")
    );
    let thumbs = images(&b, &format!("{row} .shots img")).await;
    assert_eq!(thumbs.len(), 2);
    assert!(thumbs.iter().all(|&(done, width)| done && width > 0));
    b.go(&format!("/dashboard/games/{game}/custom-pages")).await;
    let listed = b
        .el(&format!("tr[data-page-id='{page}'] .state"))
        .await
        .text()
        .await
        .expect("state");
    assert_eq!(listed, "version 1 under review");

    // A cloud run waits for a second member; the developer confirms it in the browser.
    let run = cloud_run(&app, &game, &key).await;
    b.click("a[href$='/custom-pages/runs']").await;
    let row = format!("tr[data-run-id='{run}']");
    let state = b
        .el(&format!("{row} .state"))
        .await
        .text()
        .await
        .expect("state");
    assert_eq!(state, "waits for confirmation");
    b.shot("authoring-runs").await;
    b.click(&format!("{row} a")).await;
    b.shot("authoring-run").await;
    b.client
        .execute("window.confirm = () => true;", vec![])
        .await
        .expect("accept the confirmation");
    b.click("#confirm-run").await;
    let state = b.el("#run-state").await.text().await.expect("state");
    assert_eq!(state, "confirmed by dev@studio-a.test");
    assert!(!b.has("#confirm-run").await);
    let read = app
        .get_json(format!("/v1/games/{game}/custom-pages/runs/{run}"))
        .await;
    assert_eq!(read["confirmed_by"], "dev@studio-a.test");
    assert!(read["confirmed_at"].is_string());

    // Another studio's member finds no such run, to read or to confirm.
    let other = cloud_run(&app, &game, &key).await;
    let run_path = format!("/dashboard/games/{game}/custom-pages/runs/{other}");
    let answer = get_page(&app, &run_path, &bob.cookie).await;
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
    let answer = post_form(
        &app,
        &format!("{run_path}/confirm"),
        Some(&bob.cookie),
        &[("csrf", &bob.csrf)],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
    let read = app
        .get_json(format!("/v1/games/{game}/custom-pages/runs/{other}"))
        .await;
    assert!(read["confirmed_at"].is_null(), "{read}");
}

#[tokio::test]
async fn a_viewer_sees_no_publish_or_confirm_control_and_the_server_refuses_them() {
    let app = spawn_app().await;
    add_member(&app, "dev@studio-a.test", "developer").await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let game = app.create_game().await;
    app.bulk(&game, store_shelf()).expect(StatusCode::OK).await;
    let (key, _) = app.authoring_key(&game).await;
    let page = draft(&app, &game, &key).await;
    let run = cloud_run(&app, &game, &key).await;
    let page_path = format!("/dashboard/games/{game}/custom-pages/{page}");
    let run_path = format!("/dashboard/games/{game}/custom-pages/runs/{run}");

    let b = browser::open(&app).await;
    b.sign_in("vic@studio-a.test", PASSWORD).await;
    b.go(&page_path).await;
    assert!(b.text().await.contains("Spring sale"));
    for control in [
        "#make-preview",
        "#request-publish",
        "main form[method=post]",
    ] {
        assert!(!b.has(control).await, "{control} shown to a viewer");
    }
    b.shot("custom-page-viewer").await;
    b.go(&run_path).await;
    assert_eq!(
        b.el("#run-state").await.text().await.expect("state"),
        "waits for confirmation"
    );
    assert!(!b.has("#confirm-run").await);

    // The server refuses the viewer's writes, and anyone's without the CSRF token.
    let v = sign_in(&app, "vic@studio-a.test").await;
    let d = sign_in(&app, "dev@studio-a.test").await;
    let writes = [
        (format!("{page_path}/publish-request"), Some("1")),
        (format!("{page_path}/preview"), Some("1")),
        (format!("{run_path}/confirm"), None),
    ];
    for (path, version) in &writes {
        let mut fields = vec![("csrf", v.csrf.as_str())];
        fields.extend(version.map(|v| ("version", v)));
        let answer = post_form(&app, path, Some(&v.cookie), &fields).await;
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "a viewer: {path}");
        let without: Vec<(&str, &str)> = version.map(|v| ("version", v)).into_iter().collect();
        let answer = post_form(&app, path, Some(&d.cookie), &without).await;
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "no token: {path}");
    }
    let pending = app
        .get_json(format!("/v1/games/{game}/approvals?status=pending"))
        .await;
    assert_eq!(pending["approvals"], json!([]));
    let read = app
        .get_json(format!("/v1/games/{game}/custom-pages/runs/{run}"))
        .await;
    assert!(read["confirmed_at"].is_null(), "{read}");
}

#[tokio::test]
async fn the_approval_page_shows_template_and_verdict_and_refuses_an_invalid_page() {
    let app = spawn_app().await;
    add_member(&app, "dev@studio-a.test", "developer").await;
    let game = app.create_game().await;
    app.bulk(&game, store_shelf()).expect(StatusCode::OK).await;
    let sdk = app.sdk_key(&game, "production").await;
    // A comment a reviewer must read as text, never as markup.
    let template = PAGE.replacen(
        "/// Spring sale:",
        "/// <script>alert(1)</script> Spring sale:",
        1,
    );
    let saved = app
        .post(
            format!("/v1/games/{game}/custom-pages/draft"),
            json!({"template": template,
                   "bindings": {"items": ["gems_500"], "title": "Spring sale", "discount": 40}}),
        )
        .expect(StatusCode::CREATED)
        .await;
    let page = saved["page_id"].as_str().expect("page id");
    let approval = app
        .post(
            format!("/v1/games/{game}/custom-pages/{page}/publish-request"),
            json!({"version": 1}),
        )
        .expect(StatusCode::CREATED)
        .await;
    let id = approval["approval_id"].as_str().expect("id");
    let path = format!("/dashboard/approvals/{id}");
    let dev = sign_in(&app, "dev@studio-a.test").await;

    let shown = get_page(&app, &path, &dev.cookie).await;
    assert_eq!(shown.status(), StatusCode::OK);
    let html = shown.text().await.expect("body");
    assert!(
        html.contains("<p id=\"validation-verdict\"><strong>Valid</strong>"),
        "{html}"
    );
    assert!(html.contains("id=\"template-source\""), "{html}");
    assert!(html.contains("class SpringSalePage extends StatelessWidget"));
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "escaped"
    );
    assert!(!html.contains("<script>alert(1)"), "never markup");

    // The item it shows is deleted: the verdict says so, and approving is refused.
    app.delete(format!("/v1/games/{game}/items/gems_500"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    let html = get_page(&app, &path, &dev.cookie)
        .await
        .text()
        .await
        .expect("body");
    assert!(html.contains("Not valid"), "{html}");
    assert!(html.contains("data-gate=\"deleted_item\""), "{html}");
    let answer = post_form(
        &app,
        &format!("{path}/approve"),
        Some(&dev.cookie),
        &[("csrf", &dev.csrf)],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = answer.text().await.expect("body");
    assert!(html.contains("does not pass validation"), "{html}");
    assert!(
        html.contains("<strong id=\"approval-state\">pending</strong>"),
        "{html}"
    );
    let read = app.get_json(format!("/v1/approvals/{id}")).await;
    assert_eq!(read["status"], "pending");
    // Asking again from the page's publish form is refused next to it, and queues nothing.
    let answer = post_form(
        &app,
        &format!("/dashboard/games/{game}/custom-pages/{page}/publish-request"),
        Some(&dev.cookie),
        &[("csrf", &dev.csrf), ("version", "1")],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = answer.text().await.expect("body");
    assert!(html.contains("id=\"error-publish\""), "{html}");
    assert!(html.contains("cannot be published"), "{html}");
    let all = app.get_json(format!("/v1/games/{game}/approvals")).await;
    assert_eq!(all["approvals"].as_array().map(Vec::len), Some(1), "{all}");
    let status = app
        .get(format!("/v1/sdk/status/{game}"))
        .token(&sdk)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(status["custom_page"], Value::Null);
}
