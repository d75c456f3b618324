//! Economy figures through the HTTP surface: the FSR report (rolling window, weighting,
//! quadrants, null ratios), its bounds, environments and studio isolation.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{Sdk, earned, spent, store_shelf};
use super::helpers::{Role, TestApp, default_backend, spawn_app, spawn_tuned};

fn fsr_path(game: &str, query: &str) -> String {
    format!("/v1/games/{game}/economy/fsr{query}")
}

#[tokio::test]
async fn a_quiet_game_has_no_ratio_and_no_quadrant() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    let viewer = app.token("studio-a", Role::Viewer);
    let report = app
        .get(fsr_path(&sdk.game, ""))
        .token(&viewer)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(report["game_id"], sdk.game.as_str());
    assert_eq!(report["genre"], "rpg");
    assert_eq!(report["period_days"], 7);
    assert_eq!(report["fsr"], Value::Null);
    assert_eq!(report["quadrant"], Value::Null);
    // The genre's range comes from the calibration table.
    assert_eq!(report["thresholds"], json!({"min": 0.8, "max": 2.0}));
    assert_eq!(report["currency_summary"], json!([]));
    let daily = report["daily_fsr"].as_array().expect("daily");
    assert_eq!(daily.len(), 7);
    assert!(daily.iter().all(|d| d["fsr"].is_null()));
    let today = chrono::Utc::now().date_naive().to_string();
    assert_eq!(daily[6]["date"], today.as_str());
}

#[tokio::test]
async fn earned_with_nothing_spent_is_hyper_inflation_without_a_ratio() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    app.send_events(&sdk, "p1", json!([earned("gold", 40, "t1")]))
        .await;
    let report = app.get_json(fsr_path(&sdk.game, "")).await;
    assert_eq!(report["fsr"], Value::Null);
    assert_eq!(report["quadrant"], "HYPER_INFL");
    assert_eq!(
        report["currency_summary"],
        json!([{"currency_id": "gold", "earned": 40, "spent": 0, "fsr": null}])
    );
}

#[tokio::test]
async fn a_currency_without_usd_value_falls_back_to_units() {
    let app = spawn_app().await;
    // Gems have packs (a USD value), gold has none.
    let sdk = app.game_with(store_shelf()).await;
    app.send_events(
        &sdk,
        "p1",
        json!([
            earned("gold", 300, "t1"),
            earned("gems", 60, "t2"),
            spent("gold", 100, "t3"),
            spent("gems", 20, "t4")
        ]),
    )
    .await;
    let report = app.get_json(fsr_path(&sdk.game, "?days=3")).await;
    assert_eq!(report["weighting"], "units");
    // (300 + 60) / (100 + 20) = 3: above 2.0, not above 2.0 x 2.5.
    assert_eq!(report["fsr"], 3.0);
    assert_eq!(report["quadrant"], "INFLATION");
    assert_eq!(report["period_days"], 3);
    assert_eq!(report["daily_fsr"].as_array().expect("daily").len(), 3);
    assert_eq!(report["daily_fsr"][2]["fsr"], 3.0);
    assert_eq!(
        report["currency_summary"],
        json!([
            {"currency_id": "gems", "earned": 60, "spent": 20, "fsr": 3.0},
            {"currency_id": "gold", "earned": 300, "spent": 100, "fsr": 3.0}
        ])
    );
}

#[tokio::test]
async fn valued_currencies_are_weighed_in_usd_and_exactly_max_is_healthy() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    app.send_events(
        &sdk,
        "p1",
        json!([earned("gems", 100, "t1"), spent("gems", 50, "t2")]),
    )
    .await;
    let report = app.get_json(fsr_path(&sdk.game, "")).await;
    assert_eq!(report["weighting"], "usd");
    assert_eq!(report["fsr"], 2.0);
    assert_eq!(report["quadrant"], "HEALTHY");
    // Sandbox figures are kept apart from production.
    let sandbox = app
        .get_json(fsr_path(&sdk.game, "?environment=sandbox"))
        .await;
    assert_eq!(sandbox["fsr"], Value::Null);
    assert_eq!(sandbox["quadrant"], Value::Null);
}

#[tokio::test]
async fn days_outside_one_to_ninety_write_nothing_and_are_refused() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    for days in ["0", "91", "-1"] {
        let body = app
            .get(fsr_path(&sdk.game, &format!("?days={days}")))
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
        assert_eq!(body["error"]["details"]["errors"][0]["field"], "days");
    }
    let longest = app.get_json(fsr_path(&sdk.game, "?days=90")).await;
    assert_eq!(longest["daily_fsr"].as_array().expect("daily").len(), 90);
    // A cohort that names no ISO week is a 422 on `cohort`; an unknown parameter a 400.
    for cohort in ["2026-W00", "2026-W99", "last-week"] {
        let body = app
            .get(fsr_path(&sdk.game, &format!("?cohort={cohort}")))
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
        assert_eq!(body["error"]["details"]["errors"][0]["field"], "cohort");
    }
    app.get(fsr_path(&sdk.game, "?segment=whales"))
        .expect_error(StatusCode::BAD_REQUEST, "bad_request")
        .await;
}

#[tokio::test]
async fn fsr_by_install_cohort_counts_only_that_weeks_players() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    let now = chrono::Utc::now();
    let (old_day, new_day) = (
        now - chrono::Duration::days(20),
        now - chrono::Duration::days(3),
    );
    let week = |t: chrono::DateTime<chrono::Utc>| {
        let w = chrono::Datelike::iso_week(&t.date_naive());
        format!("{}-W{:02}", w.year(), w.week())
    };
    let session = json!({"type": "session_start"});
    let two_days_ago = now - chrono::Duration::days(2);
    let body = json!({"events": [
        past("veteran", session.clone(), old_day),
        past("newcomer", session, new_day),
        past("veteran", earned("gold", 300, "v1"), two_days_ago),
        past("veteran", spent("gold", 100, "v2"), two_days_ago),
        past("newcomer", earned("gold", 100, "n1"), two_days_ago),
        past("newcomer", spent("gold", 100, "n2"), two_days_ago),
    ]});
    app.post(import_path(&sdk.game), body)
        .expect(StatusCode::OK)
        .await;
    let fsr_of = |query: String| app.get_json(fsr_path(&sdk.game, &query));
    assert_eq!(fsr_of(String::new()).await["fsr"], 2.0);
    if week(old_day) != week(new_day) {
        let veterans = fsr_of(format!("?cohort={}", week(old_day))).await;
        assert_eq!(veterans["fsr"], 3.0, "{veterans}");
        assert_eq!(veterans["currency_summary"][0]["earned"], 300);
        let newcomers = fsr_of(format!("?cohort={}", week(new_day))).await;
        assert_eq!(newcomers["fsr"], 1.0, "{newcomers}");
    }
    // Live money counts in the cohort of the player's first session: this week.
    let this_week = || fsr_of(format!("?cohort={}", week(now)));
    let earned_of = |report: &Value| {
        report["currency_summary"][0]["earned"]
            .as_i64()
            .unwrap_or(0)
    };
    let before = earned_of(&this_week().await);
    app.send_events(&sdk, "first_timer", json!([earned("gold", 50, "f1")]))
        .await;
    let after = this_week().await;
    assert_eq!(earned_of(&after), before + 50, "{after}");
    // A week nobody installed in: nothing moved.
    let empty = fsr_of("?cohort=2020-W10".to_owned()).await;
    assert_eq!(
        (empty["fsr"].clone(), empty["quadrant"].clone()),
        (Value::Null, Value::Null)
    );
}

#[tokio::test]
async fn another_studios_game_is_not_found() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    let other = app.token("studio-b", Role::Admin);
    app.get(fsr_path(&sdk.game, ""))
        .token(&other)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(fsr_path(&sdk.game, ""))
        .no_token()
        .expect(StatusCode::UNAUTHORIZED)
        .await;
}

pub fn import_path(game: &str) -> String {
    format!("/v1/games/{game}/events/import")
}

/// `event` as history of `player` at `ts`.
pub fn past(player: &str, mut event: Value, ts: chrono::DateTime<chrono::Utc>) -> Value {
    event["player_id"] = json!(player);
    event["ts"] = json!(ts.to_rfc3339());
    event
}

#[tokio::test]
async fn imported_history_lands_on_its_days_without_a_balance_check_and_once() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    let three_days_ago = chrono::Utc::now() - chrono::Duration::days(3);
    let body = json!({"events": [
        // A spend before any earning: history has no opening balance.
        past("p1", spent("gold", 100, "h1"), three_days_ago),
        past("p2", earned("gold", 300, "h2"), three_days_ago),
    ]});
    let first = app
        .post(import_path(&sdk.game), body.clone())
        .expect(StatusCode::OK)
        .await;
    assert_eq!(
        first,
        json!({"imported": 2, "duplicates": 0, "rejected": []})
    );
    // Re-running the import changes nothing.
    let again = app
        .post(import_path(&sdk.game), body)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(
        again,
        json!({"imported": 0, "duplicates": 2, "rejected": []})
    );
    let report = app.get_json(fsr_path(&sdk.game, "")).await;
    let daily: Vec<Value> = report["daily_fsr"]
        .as_array()
        .expect("daily")
        .iter()
        .map(|d| d["fsr"].clone())
        .collect();
    // Windows ending before the imported day see nothing; from it on they see 300 / 100.
    assert_eq!(
        daily,
        vec![
            Value::Null,
            Value::Null,
            Value::Null,
            json!(3.0),
            json!(3.0),
            json!(3.0),
            json!(3.0)
        ]
    );
    // Sandbox history is kept apart.
    let sandbox = json!({"environment": "sandbox", "events": [
        past("p1", earned("gold", 5, "s1"), three_days_ago),
    ]});
    app.post(import_path(&sdk.game), sandbox)
        .expect(StatusCode::OK)
        .await;
    let report = app.get_json(fsr_path(&sdk.game, "")).await;
    assert_eq!(report["currency_summary"][0]["earned"], 300);
}

#[tokio::test]
async fn one_bad_event_refuses_the_import_and_writes_nothing() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    let yesterday = chrono::Utc::now() - chrono::Duration::days(1);
    let mut no_ts = earned("gold", 1, "b3");
    no_ts["player_id"] = json!("p1");
    for (bad, index) in [
        (past("p1", earned("silver", 5, "b2"), yesterday), 1),
        (no_ts, 1),
        (past("p1", json!({"type": "first_loss"}), yesterday), 1),
        (
            past(
                "p1",
                earned("gold", 5, "b4"),
                chrono::Utc::now() + chrono::Duration::days(2),
            ),
            1,
        ),
        // History older than 2000 is refused, a session start too: it would move the launch.
        (
            past("p1", earned("gold", 5, "b5"), ancient(1999, 12, 31)),
            1,
        ),
        (
            past("p1", json!({"type": "session_start"}), ancient(1, 1, 1)),
            1,
        ),
    ] {
        let body = json!({"events": [past("p1", earned("gold", 5, "b1"), yesterday), bad]});
        let err = app
            .post(import_path(&sdk.game), body)
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
        assert_eq!(
            err["error"]["details"]["errors"][0]["index"], index,
            "{err}"
        );
    }
    let report = app.get_json(fsr_path(&sdk.game, "")).await;
    assert_eq!(report["currency_summary"], json!([]));
    let arpu = app
        .get_json(format!("/v1/games/{}/holdout-arpu", sdk.game))
        .await;
    assert_eq!(arpu["days_live"], 0, "{arpu}");
    // 2000-01-01 itself is history an import takes.
    let body = json!({"events": [past("p1", earned("gold", 5, "b6"), ancient(2000, 1, 1))]});
    app.post(import_path(&sdk.game), body)
        .expect(StatusCode::OK)
        .await;
}

/// Midnight UTC of a day.
fn ancient(year: i32, month: u32, day: u32) -> chrono::DateTime<chrono::Utc> {
    chrono::NaiveDate::from_ymd_opt(year, month, day)
        .expect("a day")
        .and_hms_opt(0, 0, 0)
        .expect("midnight")
        .and_utc()
}

#[tokio::test]
async fn import_is_for_admins_of_the_studio_and_at_most_ten_thousand_events() {
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    let yesterday = chrono::Utc::now() - chrono::Duration::days(1);
    let one = json!({"events": [past("p1", earned("gold", 5, "a1"), yesterday)]});
    app.post(import_path(&sdk.game), one.clone())
        .token(&app.token("studio-a", Role::Developer))
        .expect(StatusCode::FORBIDDEN)
        .await;
    app.post(import_path(&sdk.game), one)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    let event = past("p", earned("gold", 1, "x"), yesterday);
    let too_many: Vec<Value> = (0..10_001).map(|_| event.clone()).collect();
    app.post(import_path(&sdk.game), json!({"events": too_many}))
        .expect(StatusCode::PAYLOAD_TOO_LARGE)
        .await;
    let report = app.get_json(fsr_path(&sdk.game, "")).await;
    assert_eq!(report["currency_summary"], json!([]));
}

/// The SDK status's quadrant of `sdk`'s game.
async fn quadrant(app: &TestApp, sdk: &Sdk) -> Value {
    app.get(format!("/v1/sdk/status/{}", sdk.game))
        .token(&sdk.key)
        .expect(StatusCode::OK)
        .await["quadrant"]
        .clone()
}

#[tokio::test]
async fn a_production_import_recomputes_the_quadrant_at_once() {
    // The default schedule (a minute) does not come round during the test: only the import
    // moves the quadrant.
    let app = spawn_app().await;
    let sdk = app.game_with(json!([])).await;
    assert_eq!(quadrant(&app, &sdk).await, "HEALTHY");
    let three_days_ago = chrono::Utc::now() - chrono::Duration::days(3);
    let earned_only = json!({"events": [
        past("p1", earned("gold", 1000, "h1"), three_days_ago),
    ]});
    app.post(import_path(&sdk.game), earned_only)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(quadrant(&app, &sdk).await, "HYPER_INFL");
    let record = app.get_json(format!("/v1/games/{}", sdk.game)).await;
    assert_eq!(record["quadrant"], "HYPER_INFL");
    // Sandbox history never moves the production quadrant.
    let sandbox = json!({"environment": "sandbox", "events": [
        past("p1", spent("gold", 600, "s1"), three_days_ago),
    ]});
    app.post(import_path(&sdk.game), sandbox)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(quadrant(&app, &sdk).await, "HYPER_INFL");
    let spending = json!({"events": [
        past("p1", spent("gold", 600, "h2"), three_days_ago),
    ]});
    app.post(import_path(&sdk.game), spending)
        .expect(StatusCode::OK)
        .await;
    assert_eq!(quadrant(&app, &sdk).await, "HEALTHY");
}

/// The first `n` players `player_<i>` of `game` whose holdout membership is `holdout`.
pub fn players_of(game: &str, holdout: bool, n: usize) -> Vec<String> {
    let id: uuid::Uuid = game.parse().expect("game id");
    (0..)
        .map(|i| format!("player_{i}"))
        .filter(|p| offer_domain::holdout::is_holdout(p, id) == holdout)
        .take(n)
        .collect()
}

#[tokio::test]
async fn imported_history_counts_in_the_sandbox_and_in_no_billing_figure_of_production() {
    let app = spawn_tuned(default_backend(), |s| s.economy.figures_cache_ms = 0).await;
    let sdk = app.game_with(store_shelf()).await;
    // A live session today launches production.
    app.send_events(&sdk, "live_player", json!([{"type": "first_loss"}]))
        .await;
    let month_ago = chrono::Utc::now() - chrono::Duration::days(40);
    let session = json!({"type": "session_start"});
    let history = |env: &str| {
        json!({"environment": env, "events": [
            past("old_1", session.clone(), month_ago),
            past("old_2", session.clone(), month_ago + chrono::Duration::days(2)),
            past("old_2", purchase(300, "old_2_buy"), month_ago + chrono::Duration::days(2)),
        ]})
    };
    for env in ["production", "sandbox"] {
        let outcome = app
            .post(import_path(&sdk.game), history(env))
            .expect(StatusCode::OK)
            .await;
        assert_eq!(outcome["imported"], 3, "{outcome}");
    }
    // Production: the imported players, their $3 and their sessions count in no billing
    // figure, and the launch stays the first live session.
    let arpu = app
        .get_json(format!("/v1/games/{}/holdout-arpu", sdk.game))
        .await;
    let players =
        |a: &Value| a["n_treatment"].as_u64().expect("n") + a["n_control"].as_u64().expect("n");
    assert_eq!(players(&arpu), 1, "{arpu}");
    assert_eq!(arpu["days_live"], 0, "{arpu}");
    assert_eq!(arpu["treatment_arpu"], 0.0, "{arpu}");
    assert_eq!(arpu["control_arpu"], 0.0, "{arpu}");
    let share = app
        .get_json(format!("/v1/games/{}/revenue-share", sdk.game))
        .await;
    assert_eq!(share["monthly_players"], 1, "{share}");
    // The player still joins the population (its install day, for its cohort), its revenue
    // is shown apart, and its spend moves no spender tier.
    let record = app
        .get_json(format!("/v1/games/{}/players/old_2", sdk.game))
        .await;
    assert_eq!(
        record["install_day"],
        json!(
            (month_ago + chrono::Duration::days(2))
                .date_naive()
                .to_string()
        ),
        "{record}"
    );
    assert_eq!(record["lifetime_spend_cents"], 0, "{record}");
    assert_eq!(record["purchases"]["unverified_cents"], 300, "{record}");
    // A live session of an imported player makes it a player of the billing figures.
    app.send_events(&sdk, "old_1", json!([{"type": "first_loss"}]))
        .await;
    let arpu = app
        .get_json(format!("/v1/games/{}/holdout-arpu", sdk.game))
        .await;
    assert_eq!(players(&arpu), 2, "{arpu}");
    // The sandbox counts its imported history in every figure: both players, the launch
    // 40 days ago.
    let sandbox = app
        .get_json(format!(
            "/v1/games/{}/holdout-arpu?environment=sandbox",
            sdk.game
        ))
        .await;
    assert_eq!(players(&sandbox), 2, "{sandbox}");
    assert_eq!(sandbox["days_live"], 40, "{sandbox}");
}

#[tokio::test]
async fn the_holdout_comparison_is_reused_for_the_cache_time() {
    let app = spawn_tuned(default_backend(), |s| {
        s.economy.figures_cache_ms = 3_600_000;
    })
    .await;
    let sdk = app.game_with(store_shelf()).await;
    let path = format!("/v1/games/{}/holdout-arpu", sdk.game);
    let treated = players_of(&sdk.game, false, 2);
    app.send_events(&sdk, &treated[0], json!([purchase(1000, "t0")]))
        .await;
    let first = app.get_json(&path).await;
    assert_eq!(first["n_treatment"], 1);
    // A new payer within the cache time: the same figures, for both endpoints.
    app.send_events(&sdk, &treated[1], json!([purchase(500, "t1")]))
        .await;
    assert_eq!(app.get_json(&path).await, first);
    let share = app
        .get_json(format!("/v1/games/{}/revenue-share", sdk.game))
        .await;
    assert_eq!(share["conditions"]["n_treatment_gte_10k"]["value"], 1.0);
    // The sandbox has its own slot: computed now, it has no players.
    let sandbox = app.get_json(format!("{path}?environment=sandbox")).await;
    assert_eq!(sandbox["n_treatment"], 0);
}

/// A purchase of `cents` with its own `tx_id`.
pub fn purchase(cents: i64, tx_id: &str) -> Value {
    json!({"type": "purchase", "item_ids": ["sword"], "price_cents": cents, "tx_id": tx_id})
}

#[tokio::test]
async fn holdout_arpu_counts_every_player_and_its_samples_recompute_the_p_value() {
    // Every read computes: the test reads before and after the players arrive.
    let app = spawn_tuned(default_backend(), |s| s.economy.figures_cache_ms = 0).await;
    let sdk = app.game_with(store_shelf()).await;
    let path = format!("/v1/games/{}/holdout-arpu", sdk.game);
    // Nobody yet: both groups empty, p = 1, no uplift, not eligible.
    let empty = app.get_json(&path).await;
    assert_eq!(
        (empty["n_treatment"].as_u64(), empty["n_control"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(empty["p_value"], 1.0);
    assert!(empty["uplift_pct"].is_null());
    // 12 treated players of whom 6 pay 10 dollars; 6 holdout players of whom 1 pays 2.
    let treated = players_of(&sdk.game, false, 12);
    let held = players_of(&sdk.game, true, 6);
    for (i, p) in treated.iter().enumerate() {
        let events = if i < 6 {
            json!([purchase(1000, &format!("t{i}"))])
        } else {
            json!([{"type": "first_loss"}])
        };
        app.send_events(&sdk, p, events).await;
    }
    for (i, p) in held.iter().enumerate() {
        let events = if i == 0 {
            json!([purchase(200, "c0")])
        } else {
            json!([{"type": "first_loss"}])
        };
        app.send_events(&sdk, p, events).await;
    }
    // A player's second session does not count it twice.
    app.send_events(&sdk, &treated[0], json!([{"type": "first_loss"}]))
        .await;
    let report = app.get_json(&path).await;
    assert_eq!(report["n_treatment"], 12);
    assert_eq!(report["n_control"], 6);
    // 60 dollars over 12 players, 2 dollars over 6: non-payers count as 0.
    assert_eq!(report["treatment_arpu"], 5.0);
    let control = report["control_arpu"].as_f64().expect("control");
    assert!((control - 2.0 / 6.0).abs() < 1e-12, "{report}");
    let uplift = report["uplift_pct"].as_f64().expect("uplift");
    assert!((uplift - (5.0 - 2.0 / 6.0) / (2.0 / 6.0) * 100.0).abs() < 1e-9);
    assert_eq!(report["days_live"], 0);
    assert_eq!(report["revenue_share_eligible"], false);
    let reasons: Vec<&str> = report["ineligible_reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| r["condition"].as_str().expect("condition"))
        .collect();
    assert!(
        reasons.contains(&"n_treatment_gte_10k") && reasons.contains(&"days_live_gte_30"),
        "{report}"
    );
    // The samples: every player once, pseudonymised, and the same p-value recomputed.
    let r = app.get(format!("{path}/samples")).send().await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .expect("ascii")
            .starts_with("text/csv")
    );
    let csv = r.text().await.expect("body");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("group,player_hash,revenue_cents"));
    let (mut t, mut c) = (Vec::new(), Vec::new());
    let mut hashes = std::collections::HashSet::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        assert_eq!(fields.len(), 3, "{line}");
        assert!(fields[1].len() == 64 && fields[1].bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!fields[1].contains("player"), "{line}");
        assert!(hashes.insert(fields[1].to_owned()), "a player listed twice");
        let cents: u64 = fields[2].parse().expect("cents");
        match fields[0] {
            "treatment" => t.push(cents),
            "control" => c.push(cents),
            other => panic!("group {other}"),
        }
    }
    assert_eq!((t.len(), c.len()), (12, 6));
    let group = |v: &[u64]| {
        let paid: Vec<u64> = v.iter().copied().filter(|c| *c > 0).collect();
        (v.len() as u64 - paid.len() as u64, paid)
    };
    let ((tz, tp), (cz, cp)) = (group(&t), group(&c));
    let p = offer_domain::mann_whitney::greater(
        offer_domain::mann_whitney::Group {
            zeros: tz,
            paid: &tp,
        },
        offer_domain::mann_whitney::Group {
            zeros: cz,
            paid: &cp,
        },
    )
    .p_value;
    assert_eq!(report["p_value"].as_f64(), Some(p));
    // The same hashes on a second export; sandbox is its own population; another studio
    // sees nothing.
    let again = app
        .get(format!("{path}/samples"))
        .send()
        .await
        .text()
        .await
        .expect("body");
    assert_eq!(again, csv);
    let sandbox = app.get_json(format!("{path}?environment=sandbox")).await;
    assert_eq!(sandbox["n_treatment"], 0);
    app.get(&path)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn revenue_share_reports_each_condition_the_plan_and_the_operators_rate() {
    let app = spawn_tuned(default_backend(), |s| {
        s.billing.rates.insert("studio-a".into(), 15.0);
    })
    .await;
    let sdk = app.game_with(store_shelf()).await;
    for (i, p) in players_of(&sdk.game, false, 4).iter().enumerate() {
        app.send_events(&sdk, p, json!([purchase(500, &format!("t{i}"))]))
            .await;
    }
    for p in players_of(&sdk.game, true, 2) {
        app.send_events(&sdk, &p, json!([{"type": "first_loss"}]))
            .await;
    }
    // A sandbox player is not a monthly production player.
    let sandbox = Sdk {
        game: sdk.game.clone(),
        key: app.sdk_key(&sdk.game, "sandbox").await,
    };
    app.send_events(&sandbox, "sandbox_player", json!([{"type": "first_loss"}]))
        .await;
    let share = app
        .get_json(format!("/v1/games/{}/revenue-share", sdk.game))
        .await;
    assert_eq!(share["eligible"], false);
    assert_eq!(share["standing"], "provisional");
    assert_eq!(share["rate_pct"], 15.0);
    assert_eq!(share["plan"], "Indie");
    assert_eq!(share["monthly_players"], 6);
    let today = chrono::Utc::now().date_naive();
    let next = share["next_bill"].as_str().expect("date");
    let next: chrono::NaiveDate = next.parse().expect("a date");
    assert_eq!(chrono::Datelike::day(&next), 1);
    assert!(next > today && (next - today).num_days() <= 31);
    let c = &share["conditions"];
    assert_eq!(
        c["n_treatment_gte_10k"],
        json!({"value": 4.0, "pass": false})
    );
    assert_eq!(c["n_control_gte_1k"], json!({"value": 2.0, "pass": false}));
    assert_eq!(c["days_live_gte_30"], json!({"value": 0.0, "pass": false}));
    // 5 dollars of ARPU against 0: a positive uplift, however small the sample.
    assert_eq!(
        c["arpu_uplift_positive"],
        json!({"value": 5.0, "pass": true})
    );
    let p = c["p_value_lt_0_05"]["value"].as_f64().expect("p");
    assert_eq!(c["p_value_lt_0_05"]["pass"], p < 0.05);
    // A studio without a contract rate gets the default; another studio's game is a 404.
    app.get(format!("/v1/games/{}/revenue-share", sdk.game))
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn a_players_record_shows_its_group_balances_spend_and_ledger() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let treated = players_of(&sdk.game, false, 1).remove(0);
    app.send_events(
        &sdk,
        &treated,
        json!([
            earned("gems", 100, "e1"),
            spent("gems", 30, "s1"),
            purchase(499, "b1")
        ]),
    )
    .await;
    let path = format!("/v1/games/{}/players/{treated}", sdk.game);
    let record = app.get_json(&path).await;
    assert_eq!(record["group"], "treatment");
    let today = chrono::Utc::now().date_naive().to_string();
    assert_eq!(record["install_day"], today.as_str());
    assert_eq!(record["last_seen"], today.as_str());
    assert_eq!(record["balances"]["gems"], 70);
    assert_eq!(record["lifetime_spend_cents"], 499);
    assert_eq!(record["ledger_total"], 3);
    let kinds: Vec<&str> = record["ledger"]
        .as_array()
        .expect("ledger")
        .iter()
        .map(|l| l["kind"].as_str().expect("kind"))
        .collect();
    assert_eq!(kinds, ["purchase", "currency_spent", "currency_earned"]);
    let page = app.get_json(format!("{path}?offset=1&limit=1")).await;
    assert_eq!(page["ledger"].as_array().expect("ledger").len(), 1);
    assert_eq!(page["ledger"][0]["tx_id"], "s1");
    assert_eq!(page["ledger"][0]["balance_after"], 70);
    // A holdout player's group; an unknown player, a bad page and another studio.
    let held = players_of(&sdk.game, true, 1).remove(0);
    app.send_events(&sdk, &held, json!([{"type": "first_loss"}]))
        .await;
    let record = app
        .get_json(format!("/v1/games/{}/players/{held}", sdk.game))
        .await;
    assert_eq!(record["group"], "holdout");
    assert_eq!(record["ledger_total"], 0);
    app.get(format!("/v1/games/{}/players/nobody", sdk.game))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(format!("{path}?limit=0"))
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    app.get(format!("{path}?environment=sandbox"))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.get(&path)
        .token(&app.token("studio-b", Role::Viewer))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}
