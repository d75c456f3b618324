//! The OpenAPI document (`GET /v1/openapi.json`) as clients and API testers read it: every
//! status an operation answers is documented, every single-field rule a validator enforces
//! is in the schema (and the published patterns agree with the validators), and the links
//! that let a stateful tester go from a created object to its operations are there.

use std::collections::{BTreeMap, BTreeSet};

use offer_domain::game::Guardrails;
use offer_domain::validation::{Errors, is_snake_case};
use regex::Regex;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use super::fixtures::{earned, item, pack, store_shelf, template, with};
use super::helpers::spawn_app;

/// The document, as served.
async fn document() -> Value {
    let app = spawn_app().await;
    app.get("/v1/openapi.json")
        .no_token()
        .expect(StatusCode::OK)
        .await
}

/// Every operation: (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            out.push((method.to_uppercase(), path.clone(), op));
        }
    }
    assert!(out.len() >= 40, "only {} operations", out.len());
    out
}

/// The operations that take no credential: the probes, and starting and polling a device
/// sign-in (the tool has no credential yet).
const OPEN: [&str; 4] = [
    "/healthz",
    "/readyz",
    "/v1/auth/device",
    "/v1/auth/device/token",
];

/// The operations the app stores call: no bearer credential, but a proof of their own (a
/// signature, a token in the URL), answered 401 when it does not check out.
const STORE_NOTIFICATIONS: [&str; 2] = [
    "/v1/stores/app-store/notifications/{game_id}",
    "/v1/stores/google-play/notifications/{game_id}",
];

fn statuses(op: &Value) -> BTreeSet<String> {
    op["responses"]
        .as_object()
        .expect("responses")
        .keys()
        .cloned()
        .collect()
}

#[tokio::test]
async fn every_operation_documents_the_statuses_its_extractors_answer() {
    let doc = document().await;
    assert_eq!(doc["security"], json!([{"bearer": []}]));
    for (method, path, op) in operations(&doc) {
        let id = format!("{method} {path}");
        let answers = statuses(op);
        if OPEN.contains(&path.as_str()) {
            assert_eq!(op["security"], json!([{}]), "{id} is open");
            assert!(!answers.contains("401"), "{id} takes no credential");
        } else if STORE_NOTIFICATIONS.contains(&path.as_str()) {
            assert_eq!(
                op["security"],
                json!([{}]),
                "{id} takes no bearer credential"
            );
            assert!(answers.contains("401"), "{id} does not document 401");
        } else {
            assert!(answers.contains("401"), "{id} does not document 401");
            // No operation but the open ones opts out of the bearer credential (/metrics takes
            // it as an option).
            if let Some(security) = op.get("security") {
                assert!(
                    security
                        .as_array()
                        .expect("list")
                        .contains(&json!({"bearer": []})),
                    "{id} drops the bearer credential"
                );
            }
        }
        if op
            .pointer("/requestBody/content/application~1json")
            .is_some()
        {
            for status in ["400", "413", "415", "422"] {
                assert!(
                    answers.contains(status),
                    "{id} has a JSON body but no {status}"
                );
            }
        }
        if path.contains('{') {
            // A malformed or unknown id names nothing.
            assert!(answers.contains("404"), "{id} has a path id but no 404");
        }
        if path.contains("{game_id}") || path.contains("{approval_id}") {
            // Loading the game reaches the store.
            assert!(answers.contains("503"), "{id} loads a game but has no 503");
        }
        if op.get("parameters").is_some_and(|p| {
            p.as_array()
                .expect("parameters")
                .iter()
                .any(|p| p["in"] == "query")
        }) {
            assert!(answers.contains("400"), "{id} has a query but no 400");
        }
        for (status, response) in op["responses"].as_object().expect("responses") {
            assert!(
                response["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{id} {status} has no description"
            );
            if status == "503" || status == "429" {
                assert!(
                    response["headers"]["Retry-After"].is_object(),
                    "{id} {status} does not document Retry-After"
                );
            }
        }
    }
}

/// The schema `schema` stands for: through a `$ref`, and through the `oneOf: [x, null]` of an
/// optional field.
fn resolve<'a>(doc: &'a Value, schema: &'a Value) -> &'a Value {
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference
            .strip_prefix("#/components/schemas/")
            .expect("a component reference");
        return resolve(doc, &doc["components"]["schemas"][name]);
    }
    if let Some(branches) = schema["oneOf"].as_array()
        && branches.len() == 2
        && let Some(other) = branches.iter().find(|b| b["type"] != "null")
    {
        return resolve(doc, other);
    }
    schema
}

/// Every object property of every schema of the document (components, bodies, responses),
/// as (where, name, schema).
fn properties(doc: &Value) -> Vec<(String, String, Value)> {
    fn walk(at: &str, schema: &Value, out: &mut Vec<(String, String, Value)>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    for (name, prop) in props {
                        out.push((at.to_owned(), name.clone(), prop.clone()));
                    }
                }
                for (key, value) in map {
                    walk(&format!("{at}/{key}"), value, out);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(&format!("{at}/{i}"), item, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk("", doc, &mut out);
    out
}

const ID_FIELDS: [&str; 3] = ["item_id", "currency_id", "event_type"];
const ID_LIST_FIELDS: [&str; 2] = ["item_ids", "triggers"];

/// Every snake_case id field, single or listed, request or response, carries the pattern
/// and bound of `is_snake_case`.
#[tokio::test]
async fn every_id_field_carries_the_snake_case_rule() {
    let doc = document().await;
    let mut patterns = BTreeSet::new();
    let mut checked = 0;
    let mut check = |at: &str, schema: &Value| {
        let schema = resolve(&doc, schema);
        let pattern = schema["pattern"]
            .as_str()
            .unwrap_or_else(|| panic!("{at} has no pattern: {schema}"));
        patterns.insert(pattern.to_owned());
        assert_eq!(schema["maxLength"], 64, "{at}");
        checked += 1;
    };
    for (at, name, schema) in properties(&doc) {
        if ID_FIELDS.contains(&name.as_str()) {
            check(&format!("{at}.{name}"), &schema);
        }
        if ID_LIST_FIELDS.contains(&name.as_str()) {
            let list = resolve(&doc, &schema);
            check(&format!("{at}.{name}[]"), &list["items"]);
        }
    }
    for (method, path, op) in operations(&doc) {
        for param in op["parameters"].as_array().into_iter().flatten() {
            if param["name"] == "item_id" {
                check(
                    &format!("{method} {path} {}", param["name"]),
                    &param["schema"],
                );
            }
        }
    }
    // Items, inputs, patches, bundles, templates, events, offers...
    assert!(checked >= 20, "only {checked} id fields found");
    assert_eq!(patterns.len(), 1, "{patterns:?}");
    let pattern = patterns.pop_first().expect("one pattern");
    agrees_with_snake_case(&pattern);
}

/// Every string of up to four characters from an alphabet that exercises each part of the
/// rule, then some longer ones.
fn samples(alphabet: &[char], longest: usize) -> Vec<String> {
    let mut all = vec![String::new()];
    let mut last = vec![String::new()];
    for _ in 0..longest {
        last = last
            .iter()
            .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
            .collect();
        all.extend(last.iter().cloned());
    }
    all
}

fn agrees_with_snake_case(pattern: &str) {
    let re = Regex::new(pattern).expect("the pattern compiles");
    let mut cases = samples(&['a', 'z', '0', '9', '_', 'A', '-', ' ', 'é', '\n'], 4);
    cases.extend(["gem_pack_100", "a1_b2_c3", "x_", "a__b", "_a", "1a"].map(String::from));
    for case in cases {
        // The length bound is the schema's maxLength, which counts characters.
        let schema_says = re.is_match(&case) && case.chars().count() <= 64;
        assert_eq!(
            schema_says,
            is_snake_case(&case, 64),
            "the pattern and is_snake_case disagree on {case:?}"
        );
    }
}

/// The fields validated as "not blank" (at least one character `trim` keeps) carry the
/// pattern saying so, and it agrees with `trim`.
#[tokio::test]
async fn every_name_field_carries_the_not_blank_rule() {
    let doc = document().await;
    let schemas = &doc["components"]["schemas"];
    let mut patterns = BTreeSet::new();
    for (schema, field, max) in [
        ("CreateGame", "name", 200),
        ("PatchGame", "name", 200),
        ("ItemInput", "item_name", 200),
        ("ItemPatch", "item_name", 200),
        ("BundleInput", "name", 200),
        ("BundlePatch", "name", 200),
        ("Variant", "name", 64),
        ("OpenSession", "player_id", 128),
    ] {
        let prop = resolve(&doc, &schemas[schema]["properties"][field]);
        assert_eq!(prop["maxLength"], max, "{schema}.{field}");
        assert_eq!(prop["minLength"], 1, "{schema}.{field}");
        patterns.insert(
            prop["pattern"]
                .as_str()
                .unwrap_or_else(|| panic!("{schema}.{field} has no pattern"))
                .to_owned(),
        );
    }
    assert_eq!(patterns.len(), 1, "{patterns:?}");
    let re = Regex::new(&patterns.pop_first().expect("one")).expect("compiles");
    // Every character Rust's `trim` removes, and a few it keeps.
    let spaces: Vec<char> = (0..=0x3000_u32)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .collect();
    let mut cases: Vec<String> = spaces.iter().map(|c| c.to_string()).collect();
    cases.push(spaces.iter().collect());
    cases.extend(["", "a", " a ", "\u{1c}", "\u{200b}", "\t\u{3000}x"].map(String::from));
    for case in cases {
        assert_eq!(
            re.is_match(&case),
            !case.trim().is_empty(),
            "the pattern and trim disagree on {case:?}"
        );
    }
}

/// The country-code pattern agrees with the guardrails' own check.
#[tokio::test]
async fn the_country_code_pattern_agrees_with_the_guardrails() {
    let doc = document().await;
    let pattern = doc["components"]["schemas"]["CountryCode"]["pattern"]
        .as_str()
        .expect("a pattern");
    let re = Regex::new(pattern).expect("compiles");
    let accepted = |code: &str| {
        let mut guardrails = Guardrails {
            loot_box_blocked_countries: vec![code.to_owned()],
            ..Guardrails::default()
        };
        let mut errors = Errors::default();
        guardrails.validate(&mut errors);
        errors.0.is_empty()
    };
    for case in samples(&['a', 'Z', 'é', '1', ' ', '\n'], 3) {
        assert_eq!(re.is_match(&case), accepted(&case), "disagree on {case:?}");
    }
}

/// The numeric and list bounds the validators enforce, as published.
#[tokio::test]
async fn bounds_are_published() {
    let doc = document().await;
    let s = &doc["components"]["schemas"];
    let prop = |schema: &str, field: &str| resolve(&doc, &s[schema]["properties"][field]).clone();
    let item = prop("ItemInput", "price_usd");
    assert_eq!(
        (item["minimum"].as_f64(), item["maximum"].as_f64()),
        (Some(0.0), Some(100000.0))
    );
    assert_eq!(item["multipleOf"].as_f64(), Some(0.01));
    assert_eq!(prop("ItemInput", "quantity")["minimum"], 1);
    assert_eq!(prop("ItemInput", "description")["maxLength"], 2000);
    assert_eq!(prop("KillSwitchChange", "level")["maximum"], 3);
    assert_eq!(prop("KillSwitchChange", "reason")["maxLength"], 500);
    assert_eq!(prop("RejectBody", "reason")["maxLength"], 1000);
    assert_eq!(prop("EventBatch", "events")["maxItems"], 100);
    assert_eq!(prop("BulkBody", "items")["maxItems"], 500);
    assert_eq!(prop("CreateGame", "items")["maxItems"], 20);
    assert_eq!(prop("CreateGame", "currencies")["maxItems"], 20);
    assert_eq!(prop("BundleInput", "item_ids")["minItems"], 1);
    assert_eq!(prop("BundleInput", "item_ids")["maxItems"], 50);
    assert_eq!(prop("ExperimentInput", "variants")["maxItems"], 10);
    assert_eq!(
        prop("Variant", "price_multiplier")["exclusiveMinimum"].as_f64(),
        Some(0.0)
    );
    assert_eq!(
        prop("Guardrails", "loot_box_blocked_countries")["maxItems"],
        250
    );
    // A u32 is not an int32: its whole range is documented.
    assert_eq!(
        prop("Guardrails", "max_offers_per_session")["maximum"],
        4_294_967_295_u64
    );
    let categories = prop("Template", "categories");
    assert!(
        !categories["items"]["enum"]
            .as_array()
            .expect("enum")
            .contains(&Value::from("bundle")),
        "templates never name bundles"
    );
    // The alias a request may use is documented.
    assert!(
        s["Category"]["enum"]
            .as_array()
            .expect("enum")
            .contains(&Value::from("currency_pack"))
    );
    // Query parameters are in the query, optional, and bounded.
    let list_games = &doc["paths"]["/v1/games"]["get"]["parameters"];
    let limit = list_games
        .as_array()
        .expect("parameters")
        .iter()
        .find(|p| p["name"] == "limit")
        .expect("limit");
    assert_eq!(limit["in"], "query");
    assert_eq!(limit["required"], false);
    assert_eq!(
        (
            limit["schema"]["minimum"].clone(),
            limit["schema"]["maximum"].clone()
        ),
        (1.into(), 100.into())
    );
}

/// The links a stateful tester follows: from a game to its catalogue, bundles, keys and
/// approvals; from a created item, bundle or key to what acts on it; from a session to its
/// events and offers. Every link names an existing operation and that operation's
/// parameters.
#[tokio::test]
async fn links_lead_from_created_objects_to_their_operations() {
    let doc = document().await;
    let ops = operations(&doc);
    let by_id: BTreeMap<&str, &Value> = ops
        .iter()
        .map(|(_, _, op)| (op["operationId"].as_str().expect("operationId"), *op))
        .collect();
    assert_eq!(by_id.len(), ops.len(), "operation ids are unique");
    let expected: [(&str, &str, &[&str]); 9] = [
        (
            "create_game",
            "201",
            &[
                "get_game",
                "list_items",
                "create_item",
                "bulk_items",
                "list_bundles",
                "create_bundle",
                "list_keys",
                "issue_sdk_key",
                "list_approvals",
            ],
        ),
        (
            "get_game",
            "200",
            &["list_items", "list_bundles", "list_keys", "list_approvals"],
        ),
        ("create_item", "201", &["patch_item", "delete_item"]),
        (
            "create_bundle",
            "201",
            &["get_bundle", "patch_bundle", "delete_bundle"],
        ),
        ("create_experiment", "201", &["delete_experiment"]),
        ("issue_sdk_key", "201", &["revoke_sdk_key"]),
        ("issue_authoring_key", "201", &["revoke_authoring_key"]),
        ("sessions_open", "201", &["post_events", "next_offer"]),
        ("sessions_open", "200", &["post_events", "next_offer"]),
    ];
    for (source, status, targets) in expected {
        let links = &by_id[source]["responses"][status]["links"];
        let found: BTreeSet<&str> = links
            .as_object()
            .unwrap_or_else(|| panic!("{source} {status} has no links"))
            .values()
            .map(|l| l["operationId"].as_str().expect("operationId"))
            .collect();
        for target in targets {
            assert!(
                found.contains(target),
                "{source} {status} has no link to {target}"
            );
        }
    }
    let mut links = 0;
    for (method, path, op) in &ops {
        let source_params: BTreeSet<&str> = op["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| p["name"].as_str().expect("name"))
            .collect();
        for (status, response) in op["responses"].as_object().expect("responses") {
            for (name, link) in response["links"].as_object().into_iter().flatten() {
                links += 1;
                let at = format!("{method} {path} {status} {name}");
                let target_id = link["operationId"].as_str().expect("operationId");
                let target = by_id
                    .get(target_id)
                    .unwrap_or_else(|| panic!("{at} names no operation"));
                let target_params: BTreeSet<&str> = target["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| p["name"].as_str().expect("name"))
                    .collect();
                for (param, expression) in link["parameters"].as_object().into_iter().flatten() {
                    assert!(
                        target_params.contains(param.as_str()),
                        "{at}: {target_id} has no {param}"
                    );
                    let expression = expression.as_str().expect("an expression");
                    if let Some(from) = expression.strip_prefix("$request.path.") {
                        assert!(
                            source_params.contains(from),
                            "{at}: no path parameter {from}"
                        );
                    } else {
                        assert!(
                            expression.starts_with("$response.body#/"),
                            "{at}: {expression}"
                        );
                    }
                }
                if let Some(body) = link.get("requestBody") {
                    assert!(
                        target
                            .pointer("/requestBody/content/application~1json")
                            .is_some(),
                        "{at}: {target_id} takes no body"
                    );
                    for value in body.as_object().expect("an object").values() {
                        assert!(
                            value
                                .as_str()
                                .is_some_and(|v| v.starts_with("$response.body#/"))
                        );
                    }
                }
            }
        }
    }
    assert!(links >= 25, "only {links} links");
}

/// Values the schemas admit are accepted: a whole number written as a float (`2.0` is the
/// integer 2 in JSON Schema), the full range of a `u32`, the `currency_pack` alias where
/// categories are listed, lengths counted in characters.
#[tokio::test]
async fn values_the_schemas_admit_are_accepted() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let game = &sdk.game;
    let ks = app
        .put(
            format!("/v1/games/{game}/kill-switch"),
            json!({"level": 1.0, "reason": "maintenance"}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(ks["level"], 1);
    app.put(format!("/v1/games/{game}/kill-switch"), json!({"level": 0}))
        .expect(StatusCode::OK)
        .await;
    let created = app
        .post(
            format!("/v1/games/{game}/items"),
            json!({"item_id": "gems_50", "item_name": "50 Gems", "category": "currency_pack",
                   "currency_id": "gems", "quantity": 50.0, "price_cents": 49.0}),
        )
        .expect(StatusCode::CREATED)
        .await;
    assert_eq!(
        (created["quantity"].clone(), created["price_cents"].clone()),
        (json!(50), json!(49))
    );
    // In a bulk call too, where each entry is read on its own.
    let bulk = app
        .bulk(
            game,
            json!([with(
                pack("gems_900", 900, 6.99),
                json!({"quantity": 900.0})
            )]),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(bulk["items"][0]["quantity"], 900);
    let guardrails = app
        .patch(
            format!("/v1/games/{game}/guardrails"),
            json!({"max_offers_per_session": 4_294_967_295_u64, "min_offer_interval_s": 2.0}),
        )
        .expect(StatusCode::OK)
        .await;
    assert_eq!(guardrails["max_offers_per_session"], 4_294_967_295_u64);
    assert_eq!(guardrails["min_offer_interval_s"], 2);
    app.put(
        format!("/v1/games/{game}/offer-templates"),
        json!([template("currency_low", &["currency_pack"])]),
    )
    .expect(StatusCode::OK)
    .await;
    // 128 characters of two bytes each: the bound counts characters, as the schema does.
    let player = "é".repeat(128);
    let sid = app
        .open_session(&sdk, &player, json!({"platform": "ü".repeat(32)}))
        .await;
    let outcome = app
        .post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": [earned("gems", 5, "ß".repeat(128))]}),
        )
        .token(&sdk.key)
        .expect(StatusCode::ACCEPTED)
        .await;
    assert_eq!(outcome["accepted"], 1, "{outcome}");
}

/// Values the schemas refuse are refused with 422, and change nothing.
#[tokio::test]
async fn values_the_schemas_refuse_are_refused() {
    let app = spawn_app().await;
    let sdk = app.game_with(store_shelf()).await;
    let game = &sdk.game;
    for level in [json!(1.5), json!(4), json!(-1)] {
        app.put(
            format!("/v1/games/{game}/kill-switch"),
            json!({"level": level}),
        )
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    }
    // A whole float does not make a repeated key acceptable.
    app.call(Method::PUT, format!("/v1/games/{game}/kill-switch"))
        .raw("application/json", r#"{"level": 1.0, "level": 2}"#)
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    // A struct written as an array of its fields, at any depth: the schemas say object.
    let bulk = format!("/v1/games/{game}/items/bulk");
    for (method, path, body) in [
        (
            Method::PATCH,
            format!("/v1/games/{game}"),
            json!({"guardrails": []}),
        ),
        (
            Method::PATCH,
            format!("/v1/games/{game}"),
            json!({"guardrails": [null, ["BE"]]}),
        ),
        (
            Method::POST,
            bulk,
            json!({"items": [["potion", "Potion", "consumable", 1.99]]}),
        ),
    ] {
        app.call(method, &path)
            .json(body)
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
    }
    app.put(
        format!("/v1/games/{game}/offer-templates"),
        json!([["boss_raid", ["equipment"]]]),
    )
    .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    .await;
    // More than 2 decimal places, however close to a whole cent (multipleOf 0.01).
    for price in [1.000_000_001, 1e-10, 0.001] {
        app.bulk(game, json!([item("potion", "consumable", price)]))
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
    }
    let sid = app.open_session(&sdk, "player_1", json!({})).await;
    let purchase = json!({"type": "purchase", "item_ids": ["Sword!"], "price_cents": 499,
                          "tx_id": "p1"});
    for event in [purchase, earned("gems", 5, "ß".repeat(129))] {
        app.post(
            "/v1/sdk/events",
            json!({"session_id": sid, "events": [event]}),
        )
        .token(&sdk.key)
        .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
        .await;
    }
    assert!(
        app.items(game)
            .await
            .iter()
            .all(|i| i["item_id"] != "potion")
    );
    let ks = app.get_json(format!("/v1/games/{game}/kill-switch")).await;
    assert_eq!(ks["level"], 0);
    let guardrails = app.get_json(format!("/v1/games/{game}/guardrails")).await;
    assert_eq!(
        guardrails["loot_box_blocked_countries"],
        json!(["BE", "NL"])
    );
}
