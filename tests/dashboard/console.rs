//! The console in a real browser: what a studio does in it, checked through the page and
//! through the REST API and the SDK's WebSocket, which must agree with what the page did.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::browser::{self, Browser, PASSWORD, add_member};
use super::helpers::{Role, default_backend, spawn_app, spawn_tuned};
use super::ws_client::{Fmt, connect, fresh};

/// A catalogue file as a studio exports it: two gem packs and a sword, one quoted cell.
const CATALOGUE_CSV: &str = "item_id,item_name,category,price_usd,currency_id,quantity,is_consumable,fallback_eligible,description\n\
gems_100,100 gems,currency_pack,0.99,gems,100,true,true,\n\
gems_500,500 gems,currency_pack,3.99,gems,500,true,true,\"the best deal, by far\"\n\
sword,Sword,equipment,4.99,,,false,true,sharp\n";

/// The game the page's path names.
async fn game_of_page(b: &Browser) -> String {
    let path = b.path().await;
    path.trim_start_matches("/dashboard/games/")
        .split('/')
        .next()
        .expect("a game id in the path")
        .to_owned()
}

/// The cell `css` of the catalogue row of `item_id`.
async fn cell(b: &Browser, item_id: &str, css: &str) -> String {
    b.el(&format!("tr[data-item-id='{item_id}'] {css}"))
        .await
        .text()
        .await
        .expect("text")
}

#[tokio::test]
async fn an_admin_creates_a_game_uploads_a_catalogue_and_overrides_a_value() {
    let app = spawn_app().await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    let b = browser::open(&app).await;
    b.go("/dashboard/sign-in").await;
    b.shot("sign-in").await;
    b.sign_in("ada@studio-a.test", PASSWORD).await;
    assert_eq!(b.path().await, "/dashboard/games");
    b.shot("games").await;

    b.fill("#name", "Dungeon Dash").await;
    b.el("#genre")
        .await
        .select_by_value("rpg")
        .await
        .expect("genre");
    b.fill("#currencies", "gems hard Gems").await;
    b.click("form[action='/dashboard/games'] button[type=submit]")
        .await;
    let game = game_of_page(&b).await;
    let record = app.get_json(format!("/v1/games/{game}")).await;
    assert_eq!(record["name"], "Dungeon Dash");
    assert_eq!(record["currencies"][0]["currency_id"], "gems");
    assert_eq!(b.el("#mode").await.text().await.expect("mode"), "Shadow");
    b.shot("game").await;

    // Upload the catalogue file through the file input.
    let dir = super::helpers::scratch_dir();
    let file = dir.join("catalogue.csv");
    std::fs::write(&file, CATALOGUE_CSV).expect("write the file");
    b.go(&format!("/dashboard/games/{game}/items")).await;
    b.el("#file")
        .await
        .send_keys(file.to_str().expect("path"))
        .await
        .expect("choose the file");
    b.click("form[enctype='multipart/form-data'] button[type=submit]")
        .await;
    let outcome = b.el("#upload-outcome").await.text().await.expect("outcome");
    assert!(outcome.contains("3 created"), "{outcome}");
    b.shot("catalogue").await;

    // The computed values on the page are the engine's.
    let items = app.items(&game).await;
    assert_eq!(items.len(), 3);
    for item in &items {
        let id = item["item_id"].as_str().expect("id");
        let value = item["value_usd"].as_f64().expect("value");
        assert_eq!(
            cell(&b, id, "td.value").await,
            format!("${value:.2}"),
            "{id}"
        );
    }
    // Search narrows the table.
    b.fill("#q", "sword").await;
    b.click("form[role=search] button").await;
    assert!(b.has("tr[data-item-id='sword']").await);
    assert!(!b.has("tr[data-item-id='gems_100']").await);

    // The expert override, set in the item's form.
    b.click("tr[data-item-id='sword'] a").await;
    b.fill("#value_override_usd", "7.5").await;
    b.click("form.card button[type=submit]").await;
    b.shot("item").await;
    let sword = app
        .items(&game)
        .await
        .into_iter()
        .find(|i| i["item_id"] == "sword")
        .expect("sword");
    assert_eq!(sword["value_override_usd"], 7.5);
    // A value the service refuses is shown next to its field, in its words.
    b.fill("#value_override_usd", "-3").await;
    b.click("form.card button[type=submit]").await;
    let error = b
        .el("#error-value_override_usd")
        .await
        .text()
        .await
        .expect("error");
    assert!(!error.is_empty());
    b.go(&format!("/dashboard/games/{game}/items?q=sword"))
        .await;
    assert_eq!(cell(&b, "sword", "td.override").await, "$7.50");
    // At phone width the page still fits: nothing is wider than the window.
    b.client.set_window_size(390, 844).await.expect("resize");
    b.go(&format!("/dashboard/games/{game}/items")).await;
    let fits = b
        .client
        .execute(
            "return document.documentElement.scrollWidth <= window.innerWidth;",
            vec![],
        )
        .await
        .expect("script");
    assert_eq!(
        fits,
        json!(true),
        "the page scrolls sideways at phone width"
    );
    b.shot("catalogue-phone").await;

    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn an_admin_issues_and_revokes_a_key_promotes_the_game_and_flips_the_kill_switch() {
    let app = spawn_app().await;
    add_member(&app, "ada@studio-a.test", "admin").await;
    let game = app.create_game().await;
    let b = browser::open(&app).await;
    b.sign_in("ada@studio-a.test", PASSWORD).await;

    // Issue an SDK key: shown once, and it works.
    b.go(&format!("/dashboard/games/{game}/keys")).await;
    b.click("form[action$='/keys/sdk'] button").await;
    let key = b
        .el("#new-key")
        .await
        .prop("value")
        .await
        .expect("value")
        .expect("the key");
    assert!(b.has("button[data-copy='new-key']").await);
    b.shot("keys").await;
    app.get(format!("/v1/sdk/status/{game}"))
        .token(&key)
        .expect(StatusCode::OK)
        .await;

    // Revoke it (the confirmation dialog answered yes): the key stops working at once.
    b.client
        .execute("window.confirm = () => true;", vec![])
        .await
        .expect("script");
    b.click("form[action$='/revoke'] button").await;
    assert_eq!(
        b.el("td.state").await.text().await.expect("state"),
        "revoked"
    );
    app.get(format!("/v1/sdk/status/{game}"))
        .token(&key)
        .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
        .await;

    // Promote Shadow -> Assisted.
    b.go(&format!("/dashboard/games/{game}")).await;
    b.click("form[action$='/mode'] input[value='assisted'] ~ button")
        .await;
    assert_eq!(b.el("#mode").await.text().await.expect("mode"), "Assisted");
    assert_eq!(
        app.get_json(format!("/v1/games/{game}")).await["mode"],
        "assisted"
    );
    // Autonomous without a price ceiling: the service's refusal, shown on the page.
    b.click("form[action$='/mode'] input[value='autonomous'] ~ button")
        .await;
    assert!(b.text().await.contains("max_price_cents"));
    assert_eq!(
        app.get_json(format!("/v1/games/{game}")).await["mode"],
        "assisted"
    );

    // The kill switch, after its confirmation step, reaches a connected game.
    let sdk_key = app.sdk_key(&game, "production").await;
    let mut socket = connect(&app, &sdk_key, Fmt::Json).await;
    assert_eq!(socket.hello(fresh(&game), None).await["type"], "ready");
    b.go(&format!("/dashboard/games/{game}/live")).await;
    b.el("#level")
        .await
        .select_by_value("2")
        .await
        .expect("level");
    b.fill("#reason", "store outage").await;
    b.click("form[action$='/kill-switch'] button").await;
    b.shot("kill-switch-confirm").await;
    assert!(b.has("#confirm").await, "a confirmation step first");
    assert_eq!(
        app.get_json(format!("/v1/games/{game}/kill-switch")).await["level"],
        0,
        "nothing changes before the confirmation"
    );
    b.click("#confirm").await;
    let pushed = socket.recv_type("kill_switch").await;
    assert_eq!(pushed["level"], 2, "{pushed}");
    assert!(
        b.el("#kill-level")
            .await
            .text()
            .await
            .expect("level")
            .starts_with('2')
    );
    b.shot("live").await;
}

#[tokio::test]
async fn a_device_sign_in_approved_in_the_console_hands_the_waiting_poller_its_key() {
    let app = spawn_tuned(default_backend(), |s| {
        s.device.poll_interval_s = std::num::NonZeroU32::MIN;
    })
    .await;
    add_member(&app, "dev@studio-a.test", "developer").await;
    let game = app.create_game().await;
    let sign_in = app
        .call(reqwest::Method::POST, "/v1/auth/device")
        .no_token()
        .expect(StatusCode::OK)
        .await;
    let code = sign_in["user_code"].as_str().expect("code").to_owned();
    let device_code = sign_in["device_code"].clone();
    // The tool polls as it would, until it holds its key (bounded: at most 60 polls).
    let addr = app.addr;
    let poller = tokio::spawn(async move {
        let client = reqwest::Client::new();
        for _ in 0..60 {
            tokio::time::sleep(Duration::from_millis(1100)).await;
            let answer = client
                .post(format!("http://{addr}/v1/auth/device/token"))
                .json(&json!({"device_code": device_code}))
                .send()
                .await
                .expect("poll");
            if answer.status() == StatusCode::OK {
                return answer.json::<Value>().await.expect("json");
            }
        }
        panic!("no key after 60 polls");
    });

    let b = browser::open(&app).await;
    b.sign_in("dev@studio-a.test", PASSWORD).await;
    b.go("/dashboard/device").await;
    b.fill("#user_code", &code).await;
    b.el("#game_id")
        .await
        .select_by_value(&game)
        .await
        .expect("game");
    b.click("button[value='approve']").await;
    let outcome = b.el("#device-outcome").await.text().await.expect("outcome");
    assert!(outcome.starts_with("Approved"), "{outcome}");
    b.shot("device").await;

    let issued = poller.await.expect("the poller");
    let key = issued["authoring_key"]
        .as_str()
        .unwrap_or_else(|| panic!("a key in {issued}"));
    app.get(format!("/v1/games/{game}/items"))
        .token(key)
        .expect(StatusCode::OK)
        .await;
}

#[tokio::test]
async fn a_viewer_sees_no_write_controls_and_another_studios_game_is_not_found() {
    let app = spawn_app().await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let game = app.create_game().await;
    let other_admin = app.token("studio-b", Role::Admin);
    let theirs = app
        .post("/v1/games", json!({"name": "Theirs", "genre": "rpg"}))
        .token(&other_admin)
        .expect(StatusCode::CREATED)
        .await["game_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let b = browser::open(&app).await;
    b.sign_in("vic@studio-a.test", PASSWORD).await;
    assert!(
        !b.has("form[action='/dashboard/games']").await,
        "no create form"
    );
    b.go(&format!("/dashboard/games/{game}")).await;
    b.shot("viewer-game").await;
    assert!(!b.has("form[action$='/mode']").await, "no promotion");
    assert!(
        !b.has("form[action$='/guardrails']").await,
        "no guardrails form"
    );
    assert!(!b.has("a[href$='/keys']").await, "no keys tab");
    b.go(&format!("/dashboard/games/{game}/items")).await;
    assert!(!b.has("#file").await, "no upload");
    b.go(&format!("/dashboard/games/{game}/live")).await;
    assert!(
        !b.has("form[action$='/kill-switch']").await,
        "no kill switch"
    );
    b.go(&format!("/dashboard/games/{theirs}")).await;
    assert!(b.text().await.contains("Not found"));
    assert!(!b.text().await.contains("Theirs"));
    b.shot("not-found").await;
}

/// An Assisted game with a week's history and one pending offer approval: its id.
async fn pending_offer(app: &super::helpers::TestApp) -> (String, String) {
    use super::fixtures::{earned, player, spent, template};
    let potion = json!({"item_id": "potion", "item_name": "Potion", "category": "consumable",
        "price_usd": 0.99, "earned_price": {"currency_id": "gold", "amount": 50},
        "is_consumable": true, "fallback_eligible": true});
    let sdk = app.game_with(json!([potion])).await;
    app.set_templates(&sdk.game, json!([template("first_loss", &["consumable"])]))
        .await;
    let yesterday = (chrono::Utc::now() - chrono::Duration::days(1)).to_rfc3339();
    let mut events = Vec::new();
    for i in 0..50 {
        for mut e in [
            json!({"type": "session_start"}),
            earned("gold", 100, format!("e{i}")),
            spent("gold", 90, format!("s{i}")),
        ] {
            e["player_id"] = json!(format!("history_{i}"));
            e["ts"] = json!(yesterday);
            events.push(e);
        }
    }
    app.post(
        format!("/v1/games/{}/events/import", sdk.game),
        json!({ "events": events }),
    )
    .expect(StatusCode::OK)
    .await;
    app.set_mode(&sdk.game, "assisted")
        .expect(StatusCode::OK)
        .await;
    let sid = app
        .open_session(
            &sdk,
            &player(&sdk.game, false),
            json!({"country": "US", "platform": "android"}),
        )
        .await;
    // Offers are queued for approval behind the answers: ask until one waits (bounded).
    for _ in 0..50 {
        app.post(
            "/v1/sdk/offers/next",
            json!({"session_id": sid, "trigger_context": {"event_type": "first_loss"}}),
        )
        .token(&sdk.key)
        .send()
        .await;
        let list = app
            .get_json(format!("/v1/games/{}/approvals?status=pending", sdk.game))
            .await;
        if let Some(first) = list["approvals"].as_array().and_then(|a| a.first()) {
            let id = first["approval_id"].as_str().expect("id").to_owned();
            return (sdk.game, id);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no approval was queued");
}

#[tokio::test]
async fn a_developer_simulates_a_queued_offer_then_approves_it() {
    let app = spawn_app().await;
    add_member(&app, "dev@studio-a.test", "developer").await;
    let (game, approval) = pending_offer(&app).await;
    let b = browser::open(&app).await;
    b.sign_in("dev@studio-a.test", PASSWORD).await;
    b.go(&format!("/dashboard/games/{game}/approvals")).await;
    assert_eq!(
        b.el(&format!("tr[data-approval-id='{approval}'] td.state"))
            .await
            .text()
            .await
            .expect("state"),
        "pending"
    );
    b.click(&format!("tr[data-approval-id='{approval}'] a"))
        .await;
    b.click("#simulate").await;
    let stored = app.get_json(format!("/v1/approvals/{approval}")).await;
    let sim = &stored["simulation"];
    let rate = sim["pass_rate"].as_f64().expect("a stored simulation");
    assert_eq!(
        b.el("#pass-rate").await.text().await.expect("rate"),
        format!("{:.1}% of {} runs", rate * 100.0, sim["monte_carlo_runs"])
    );
    let band = b.el("#healthy-band").await.text().await.expect("band");
    let ctx = &sim["genre_context"];
    assert_eq!(
        band,
        format!(
            "{:.2} to {:.2}",
            ctx["healthy_fsr_min"].as_f64().expect("min"),
            ctx["healthy_fsr_max"].as_f64().expect("max")
        )
    );
    assert!(b.has("#fsr-bounds").await);
    b.shot("approval-simulated").await;
    b.click("#approve").await;
    assert_eq!(
        b.el("#approval-state").await.text().await.expect("state"),
        "approved"
    );
    let decided = app.get_json(format!("/v1/approvals/{approval}")).await;
    assert_eq!(decided["status"], "approved");
    assert_eq!(decided["decided_by"], "dev@studio-a.test");
    b.shot("approval-approved").await;
}

#[tokio::test]
async fn the_economy_page_draws_the_imported_history_and_the_revenue_share_conditions() {
    use super::fixtures::{earned, spent};
    let app = spawn_app().await;
    add_member(&app, "vic@studio-a.test", "viewer").await;
    let game = app.create_game().await;
    // Five days of history: gold earned and spent, a different ratio each day.
    let mut events = Vec::new();
    for day in 1..=5i64 {
        let ts = (chrono::Utc::now() - chrono::Duration::days(day)).to_rfc3339();
        for p in 0..4 {
            for mut e in [
                json!({"type": "session_start"}),
                earned("gold", 100, format!("e{day}-{p}")),
                spent("gold", 20 * day, format!("s{day}-{p}")),
            ] {
                e["player_id"] = json!(format!("player_{p}"));
                e["ts"] = json!(ts);
                events.push(e);
            }
        }
    }
    app.post(
        format!("/v1/games/{game}/events/import"),
        json!({ "events": events }),
    )
    .expect(StatusCode::OK)
    .await;
    let b = browser::open(&app).await;
    b.sign_in("vic@studio-a.test", PASSWORD).await;
    b.go(&format!("/dashboard/games/{game}/economy?days=7"))
        .await;
    b.shot("economy").await;
    // The chart: the healthy band, and a point for each day the report has a value.
    let report = app
        .get_json(format!("/v1/games/{game}/economy/fsr?days=7"))
        .await;
    let valued = report["daily_fsr"]
        .as_array()
        .expect("days")
        .iter()
        .filter(|d| d["fsr"].is_number())
        .count();
    assert!(valued >= 5, "{report}");
    assert!(b.has("svg#fsr-chart rect.band").await);
    let line = b
        .el("svg#fsr-chart path.line")
        .await
        .attr("d")
        .await
        .expect("attr")
        .expect("d");
    assert_eq!(line.matches(['M', 'L']).count(), valued, "{line}");
    let points = b
        .client
        .find_all(fantoccini::Locator::Css("svg#fsr-chart circle"))
        .await
        .expect("points");
    assert_eq!(points.len(), valued);
    // The gold row: 2,000 earned, 20*(1+2+3+4+5)*4 = 1,200 spent.
    let gold = b.el("#currencies tbody").await.text().await.expect("text");
    assert!(gold.contains("gold 2000 1200"), "{gold}");
    // The five conditions, each with the verdict the API gives.
    let share = app
        .get_json(format!("/v1/games/{game}/revenue-share"))
        .await;
    for (row, key) in [
        ("n_treatment", "n_treatment_gte_10k"),
        ("n_control", "n_control_gte_1k"),
        ("days_live", "days_live_gte_30"),
        ("p_value", "p_value_lt_0_05"),
        ("uplift", "arpu_uplift_positive"),
    ] {
        let shown = b
            .el(&format!("tr[data-condition='{row}'] td.verdict"))
            .await
            .text()
            .await
            .expect("verdict");
        let pass = share["conditions"][key]["pass"].as_bool().expect("pass");
        assert_eq!(shown, if pass { "pass" } else { "fail" }, "{key}");
    }
    assert_eq!(
        b.el("#plan").await.text().await.expect("plan"),
        share["plan"].as_str().expect("plan")
    );
    assert!(b.has("a#samples").await);
    // The month so far: the plan's base fee, and no revenue share without eligibility.
    let due = b.el("#month-to-date").await.text().await.expect("text");
    assert!(
        due.contains(&format!(
            "base fee ${:.2}",
            share["base_fee_usd"].as_f64().expect("fee")
        )),
        "{due}"
    );
    assert!(due.contains("revenue share $0.00"), "{due}");
}
