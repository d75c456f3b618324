//! Custom-page validation through HTTP: a page bound to a live item passes; each gate that
//! depends on the game (a deleted or unknown item) or that an assistant trips most often (an
//! import outside the allow-list, a hard-coded service key, or one built from pieces the way
//! Dart joins strings) blocks with its gate and line, while folded look-alikes pass;
//! only the game's authoring key and the studio's developers may call it.

// The page every case starts from: a real assistant-written offer page.
use offer_preview::testing::FIXTURE_PAGE as PAGE;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::fixtures::{Sdk, store_shelf};
use super::helpers::{Role, TestApp, spawn_app};

fn bindings(item: &str) -> Value {
    json!({"items": [item], "title": "Spring sale", "discount": 40})
}

fn validate<'a>(
    app: &'a TestApp,
    sdk: &Sdk,
    template: &str,
    bindings: Value,
) -> super::http::Call<'a> {
    app.post(
        format!("/v1/games/{}/custom-pages/validate", sdk.game),
        json!({"template": template, "bindings": bindings}),
    )
}

/// The gates of the blockers of a verdict.
fn gates(verdict: &Value) -> Vec<String> {
    verdict["blockers"]
        .as_array()
        .expect("blockers")
        .iter()
        .map(|b| b["gate"].as_str().expect("gate").to_owned())
        .collect()
}

#[tokio::test]
async fn a_page_bound_to_a_live_item_passes_and_each_game_gate_blocks() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let ok = validate(&app, &sdk, PAGE, bindings("gems_500"))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(ok["valid"], true, "{ok}");
    assert!(gates(&ok).is_empty());

    // An item no catalogue has, then one that is deleted.
    let unknown = validate(&app, &sdk, PAGE, bindings("no_such_item"))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(unknown["valid"], false);
    assert_eq!(gates(&unknown), ["unknown_item"], "{unknown}");
    app.delete(format!("/v1/games/{}/items/gems_500", sdk.game))
        .expect(StatusCode::NO_CONTENT)
        .await;
    let deleted = validate(&app, &sdk, PAGE, bindings("gems_500"))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(gates(&deleted), ["deleted_item"], "{deleted}");

    // A file system import on line 2, and a live key written into the page.
    let io = PAGE.replacen(
        "import 'package:offer_sdk/offer_sdk.dart';",
        "import 'dart:io';",
        1,
    );
    let blocked = validate(&app, &sdk, &io, bindings("gems_100"))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(
        blocked["blockers"][0]["gate"], "import_not_allowed",
        "{blocked}"
    );
    assert_eq!(blocked["blockers"][0]["line"], 2);
    let key = "sk9_live_sk_Q2x7Rr0aZ81bKp4mW3nVt6yEu5sD";
    let leaked = PAGE.replacen(
        "'${offer['discount']}% off today only'",
        &format!("'{key}'"),
        1,
    );
    let secret = validate(&app, &sdk, &leaked, bindings("gems_100"))
        .expect(StatusCode::OK)
        .await;
    assert!(
        gates(&secret).contains(&"secret_pattern_found".to_owned()),
        "{secret}"
    );
    assert!(
        !secret.to_string().contains(key),
        "the verdict never echoes the key"
    );
}

#[tokio::test]
async fn the_games_authoring_key_and_its_developers_may_validate() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let (authoring, _) = app.authoring_key(&sdk.game).await;
    validate(&app, &sdk, PAGE, bindings("gems_500"))
        .token(&authoring)
        .expect(StatusCode::OK)
        .await;
    validate(&app, &sdk, PAGE, bindings("gems_500"))
        .token(&app.token("studio-a", Role::Developer))
        .expect(StatusCode::OK)
        .await;
    validate(&app, &sdk, PAGE, bindings("gems_500"))
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    validate(&app, &sdk, PAGE, bindings("gems_500"))
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    validate(&app, &sdk, PAGE, bindings("gems_500"))
        .token(&sdk.key)
        .expect_error(StatusCode::FORBIDDEN, "wrong_credential")
        .await;
    // Another game's authoring key: that game is not this key's.
    let other = app.game_with(store_shelf()).await;
    validate(&app, &other, PAGE, bindings("gems_500"))
        .token(&authoring)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
}

#[tokio::test]
async fn a_run_takes_the_first_validation_and_three_fixes() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let (authoring, _) = app.authoring_key(&sdk.game).await;
    let runs = format!("/v1/games/{}/custom-pages/runs", sdk.game);
    let run = app
        .post(&runs, json!({"mode": "local"}))
        .token(&authoring)
        .expect(StatusCode::CREATED)
        .await;
    let run_id = run["run_id"].as_str().expect("run").to_owned();
    // A failing first try, then three fixes.
    let attempts = ["no_such_item", "gems_100", "gems_100", "gems_500"];
    for item in attempts {
        validate(&app, &sdk, PAGE, bindings(item))
            .token(&authoring)
            .header("X-Authoring-Run", &run_id)
            .expect(StatusCode::OK)
            .await;
    }
    let refused = validate(&app, &sdk, PAGE, bindings("gems_500"))
        .token(&authoring)
        .header("X-Authoring-Run", &run_id)
        .expect_error(StatusCode::CONFLICT, "run_limit_reached")
        .await;
    assert_eq!(
        refused["error"]["details"]["limit"], "validate",
        "{refused}"
    );
    // Outside the run the validator still answers.
    validate(&app, &sdk, PAGE, bindings("gems_500"))
        .token(&authoring)
        .expect(StatusCode::OK)
        .await;
    // The run shows each call and how it ended.
    let recorded = app.get_json(format!("{runs}/{run_id}")).await;
    let calls = recorded["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 5, "{recorded}");
    assert_eq!(calls[0]["outcome"]["valid"], false, "{recorded}");
    assert_eq!(calls[3]["outcome"]["valid"], true, "{recorded}");
}

/// The page with `expr` in place of its discount line's text and `members` added to its class.
fn with_text(expr: &str, members: &str) -> String {
    PAGE.replacen("'${offer['discount']}% off today only'", expr, 1)
        .replacen(
            "  final OfferData offer;",
            &format!("  final OfferData offer;\n{members}"),
            1,
        )
}

#[tokio::test]
async fn a_key_built_from_pieces_is_found_and_folded_look_alikes_pass() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let (head, body) = ("sk9_live_sk_", "Q2x7Rr0aZ81bKp4mW3nVt6yEu5sD");
    let cases = [
        (
            "adjacent literals",
            format!("'{head}' '{body}'"),
            String::new(),
        ),
        ("plus", format!("'{head}' + '{body}'"), String::new()),
        (
            "interpolation",
            format!("'${{'{head}'}}{body}'"),
            String::new(),
        ),
        (
            "getter",
            format!("head + '{body}'"),
            format!("  String get head => '{head}';"),
        ),
        (
            "const field",
            format!("'${{prefix}}{body}'"),
            format!("  static const prefix = '{head}';"),
        ),
    ];
    for (name, expr, members) in cases {
        let page = with_text(&expr, &members);
        let verdict = validate(&app, &sdk, &page, bindings("gems_500"))
            .expect(StatusCode::OK)
            .await;
        assert_eq!(verdict["valid"], false, "{name}: {verdict}");
        assert_eq!(
            gates(&verdict),
            ["secret_pattern_found"],
            "{name}: {verdict}"
        );
        assert!(!verdict.to_string().contains(body), "{name}: never echoed");
    }

    let near: Vec<String> = serde_json::from_str(include_str!(
        "../../domain/testdata/secret_scan_folded_near_misses.json"
    ))
    .expect("a list of expressions");
    for expr in near {
        let verdict = validate(&app, &sdk, &with_text(&expr, ""), bindings("gems_500"))
            .expect(StatusCode::OK)
            .await;
        assert_eq!(verdict["valid"], true, "{expr}: {verdict}");
    }
}
