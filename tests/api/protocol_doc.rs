//! Keeps `docs/protocol.md` true to the server.
//!
//! The document marks its examples with the info string of their fence: ` ```json client `
//! (one client message), ` ```json server ` (one server message, with its `seq`),
//! ` ```hex msgpack ` (the MessagePack bytes of the JSON example just before it, annotated)
//! and ` ```text transcript ` (a whole session). The tests check that every client example
//! is a message the server reads, that every server example has the fields its type has,
//! that every message type, and every SDK event type, has an example (so a new type without
//! documentation fails here), that the MessagePack bytes decode to their JSON twin, and they
//! play the transcript against a live server, in both wire formats.

use std::collections::{BTreeMap, BTreeSet};

use offer_wire::socket::{ClientMessage, ServerMessage};
use serde_json::{Map, Value, json};
use uuid::Uuid;

use super::fixtures::store_shelf;
use super::helpers::{TestApp, spawn_app};
use super::ws_client::{Client, Fmt, PATIENCE, VARYING_FIELDS, connect, fresh};

/// The document, as compiled into this test binary.
const DOC: &str = include_str!("../../docs/protocol.md");

/// One fenced block of the document.
struct Block {
    info: String,
    body: String,
    /// 1-based line of the opening fence, for messages.
    line: usize,
}

/// Every fenced block of the document, in order.
fn blocks() -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in DOC.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    body: String::new(),
                    line: i + 1,
                });
            }
            (Some(_), Some(rest)) if rest.trim().is_empty() => {
                out.extend(open.take());
            }
            (Some(b), _) => {
                b.body.push_str(line);
                b.body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "docs/protocol.md has an unclosed fence");
    out
}

/// The JSON examples with info string `info`, with their line.
fn examples(info: &str) -> Vec<(usize, Value)> {
    let found: Vec<(usize, Value)> = blocks()
        .into_iter()
        .filter(|b| b.info == info)
        .map(|b| {
            let v = serde_json::from_str(&b.body).unwrap_or_else(|e| {
                panic!("docs/protocol.md:{}: not JSON ({e}):\n{}", b.line, b.body)
            });
            (b.line, v)
        })
        .collect();
    assert!(
        !found.is_empty(),
        "docs/protocol.md has no `{info}` example"
    );
    found
}

/// The schema of a message enum as JSON, and the named schemas it refers to (from the live
/// server's OpenAPI document, which holds every shared type).
async fn schemas(app: &TestApp) -> (Value, Value, Map<String, Value>) {
    let openapi = app.get_json("/v1/openapi.json").await;
    let components = openapi["components"]["schemas"]
        .as_object()
        .expect("named schemas")
        .clone();
    let client = serde_json::to_value(<ClientMessage as utoipa::PartialSchema>::schema())
        .expect("schema as JSON");
    let server = serde_json::to_value(<ServerMessage as utoipa::PartialSchema>::schema())
        .expect("schema as JSON");
    (client, server, components)
}

/// Follows a `$ref` into the named schemas.
fn resolve<'a>(schema: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap_or_default();
            let target = defs
                .get(name)
                .unwrap_or_else(|| panic!("schema {r} is not in the OpenAPI document"));
            resolve(target, defs)
        }
        None => schema,
    }
}

/// The `type` tags of a tagged enum's schema (`oneOf` of objects whose `type` is a one-value
/// enum, possibly inside an `allOf`).
fn tags(schema: &Value, defs: &Map<String, Value>) -> BTreeSet<String> {
    let schema = resolve(schema, defs);
    schema["oneOf"]
        .as_array()
        .expect("a tagged enum is a oneOf")
        .iter()
        .filter_map(|variant| tag_of(variant, defs))
        .collect()
}

fn tag_of(variant: &Value, defs: &Map<String, Value>) -> Option<String> {
    let variant = resolve(variant, defs);
    if let Some(t) = variant["properties"]["type"]["enum"][0].as_str() {
        return Some(t.to_owned());
    }
    variant["allOf"]
        .as_array()?
        .iter()
        .find_map(|part| tag_of(part, defs))
}

/// The JSON kind of a value, as schemas name it.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks `value` against `schema`: the kinds, enums, required fields, and no field the
/// schema does not name. Returns what is wrong, with the path to it.
fn conforms(value: &Value, schema: &Value, defs: &Map<String, Value>, path: &str) -> Vec<String> {
    let schema = resolve(schema, defs);
    if let Some(options) = schema["oneOf"].as_array() {
        let tries: Vec<Vec<String>> = options
            .iter()
            .map(|o| conforms(value, o, defs, path))
            .collect();
        return if tries.iter().any(Vec::is_empty) {
            Vec::new()
        } else {
            // The closest try (the variant of the right tag) says the most.
            tries.into_iter().min_by_key(Vec::len).unwrap_or_default()
        };
    }
    if let Some(parts) = schema["allOf"].as_array() {
        // One object of every part's fields.
        let mut merged = Map::new();
        let mut properties = Map::new();
        let mut required = Vec::new();
        for part in parts {
            let part = resolve(part, defs);
            if let Some(p) = part["properties"].as_object() {
                properties.extend(p.clone());
            }
            if let Some(r) = part["required"].as_array() {
                required.extend(r.clone());
            }
        }
        merged.insert("type".into(), "object".into());
        merged.insert("properties".into(), properties.into());
        merged.insert("required".into(), required.into());
        return conforms(value, &Value::Object(merged), defs, path);
    }
    let mut wrong = Vec::new();
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        wrong.push(format!("{path}: {value} is not one of {allowed:?}"));
    }
    let kinds: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let k = kind(value);
    // An integer is also a number.
    let kind_allowed =
        kinds.is_empty() || kinds.contains(&k) || (k == "integer" && kinds.contains(&"number"));
    if !kind_allowed {
        wrong.push(format!("{path}: a {k}, the schema says {kinds:?}"));
        return wrong;
    }
    if let (Some(items), Value::Array(values)) = (schema.get("items"), value) {
        for (i, v) in values.iter().enumerate() {
            wrong.extend(conforms(v, items, defs, &format!("{path}[{i}]")));
        }
    }
    if let (Some(properties), Value::Object(fields)) = (schema["properties"].as_object(), value) {
        for r in schema["required"].as_array().into_iter().flatten() {
            let r = r.as_str().unwrap_or_default();
            if !fields.contains_key(r) {
                wrong.push(format!("{path}: `{r}` is missing"));
            }
        }
        for (name, v) in fields {
            match properties.get(name) {
                Some(s) => wrong.extend(conforms(v, s, defs, &format!("{path}.{name}"))),
                None if schema.get("additionalProperties").is_some() => {}
                None => wrong.push(format!("{path}: no field `{name}` in this message")),
            }
        }
    }
    wrong
}

/// A server example without its `seq`, which the socket adds to every message.
fn body_of(line: usize, example: &Value) -> Value {
    let mut body = example.clone();
    let seq = body
        .as_object_mut()
        .and_then(|o| o.remove("seq"))
        .unwrap_or_else(|| panic!("docs/protocol.md:{line}: a server message has a seq"));
    assert!(seq.is_u64(), "docs/protocol.md:{line}: seq is an integer");
    body
}

#[tokio::test]
async fn every_client_example_is_a_message_the_server_reads() {
    let app = spawn_app().await;
    let (client, _, defs) = schemas(&app).await;
    for (line, example) in examples("json client") {
        if let Err(e) = serde_json::from_value::<ClientMessage>(example.clone()) {
            panic!("docs/protocol.md:{line}: the server refuses this example: {e}\n{example}");
        }
        let wrong = conforms(&example, &client, &defs, "message");
        assert!(wrong.is_empty(), "docs/protocol.md:{line}: {wrong:#?}");
    }
}

#[tokio::test]
async fn every_server_example_has_the_fields_of_its_type() {
    let app = spawn_app().await;
    let (_, server, defs) = schemas(&app).await;
    for (line, example) in examples("json server") {
        let wrong = conforms(&body_of(line, &example), &server, &defs, "message");
        assert!(wrong.is_empty(), "docs/protocol.md:{line}: {wrong:#?}");
    }
}

#[tokio::test]
async fn every_message_type_and_every_sdk_event_has_an_example() {
    let app = spawn_app().await;
    let (client, server, defs) = schemas(&app).await;
    let types_of = |info: &str| -> BTreeSet<String> {
        examples(info)
            .iter()
            .filter_map(|(_, e)| e["type"].as_str().map(str::to_owned))
            .collect()
    };
    let client_types = tags(&client, &defs);
    let server_types = tags(&server, &defs);
    assert!(client_types.contains("hello") && server_types.contains("ready"));
    let documented = types_of("json client");
    let missing: Vec<&String> = client_types.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "client messages without an example: {missing:?}"
    );
    let documented = types_of("json server");
    let missing: Vec<&String> = server_types.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "server messages without an example: {missing:?}"
    );

    let event_types = tags(&json!({"$ref": "#/components/schemas/SdkEvent"}), &defs);
    assert!(event_types.contains("currency_earned"));
    let shown: BTreeSet<String> = examples("json client")
        .iter()
        .filter_map(|(_, e)| e["event"]["type"].as_str().map(str::to_owned))
        .collect();
    let missing: Vec<&String> = event_types.difference(&shown).collect();
    assert!(
        missing.is_empty(),
        "SDK events without an example: {missing:?}"
    );
}

/// The bytes of an annotated hex dump: every pair of hex digits before a `#`.
fn hex_bytes(body: &str) -> Vec<u8> {
    body.lines()
        .flat_map(|line| {
            line.split('#')
                .next()
                .unwrap_or_default()
                .split_whitespace()
        })
        .map(|pair| {
            u8::from_str_radix(pair, 16).unwrap_or_else(|e| panic!("`{pair}` is not a byte: {e}"))
        })
        .collect()
}

#[test]
fn every_msgpack_example_decodes_to_its_json_twin() {
    let all = blocks();
    let mut checked = 0;
    for (i, b) in all.iter().enumerate() {
        if b.info != "hex msgpack" {
            continue;
        }
        let twin = all[..i]
            .iter()
            .rev()
            .find(|p| p.info.starts_with("json"))
            .unwrap_or_else(|| panic!("docs/protocol.md:{}: no JSON example before", b.line));
        let json: Value = serde_json::from_str(&twin.body).expect("json");
        let decoded: Value = rmp_serde::from_slice(&hex_bytes(&b.body))
            .unwrap_or_else(|e| panic!("docs/protocol.md:{}: not MessagePack: {e}", b.line));
        assert_eq!(decoded, json, "docs/protocol.md:{}", b.line);
        // Field names, never positions: a map whose keys are the JSON's.
        let bytes = hex_bytes(&b.body);
        assert_eq!(bytes.first().map(|b| b & 0xf0), Some(0x80), "a map");
        checked += 1;
    }
    assert!(checked >= 2, "a client and a server message in MessagePack");
}

/// One step of the transcript.
#[derive(Debug)]
enum Step {
    /// The client sends this message.
    Send(Value),
    /// The server sends a message like this one.
    Receive(Value),
    /// A dashboard call made meanwhile: method, path, body.
    Call(String, String, Value),
    /// The client's connection closes.
    Close,
    /// The client connects again.
    Connect,
}

/// The transcript's steps, with the document's session and player ids replaced by
/// `session` and `player`.
fn transcript(session: Uuid, player: &str) -> Vec<Step> {
    let block = blocks()
        .into_iter()
        .find(|b| b.info == "text transcript")
        .expect("docs/protocol.md has a `text transcript` block");
    let first_hello = block
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("> "))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "hello")
        .expect("the transcript says hello");
    let doc_session = first_hello["session_id"].as_str().expect("session id");
    let doc_player = first_hello["player_id"].as_str().expect("player id");
    let text = block
        .body
        .replace(doc_session, &session.to_string())
        .replace(doc_player, player);
    let json = |l: &str, n: usize| -> Value {
        serde_json::from_str(l).unwrap_or_else(|e| {
            panic!(
                "docs/protocol.md:{}: not JSON ({e}): {l}",
                block.line + n + 1
            )
        })
    };
    text.lines()
        .enumerate()
        .filter_map(|(n, line)| {
            let (mark, rest) = line.split_at(line.len().min(2));
            Some(match mark {
                "> " => Step::Send(json(rest, n)),
                "< " => Step::Receive(json(rest, n)),
                "! " => {
                    let mut parts = rest.splitn(3, ' ');
                    let method = parts.next().unwrap_or_default().to_owned();
                    let path = parts.next().unwrap_or_default().to_owned();
                    Step::Call(method, path, json(parts.next().unwrap_or("null"), n))
                }
                "~ " if rest == "close" => Step::Close,
                "~ " if rest == "connect" => Step::Connect,
                _ if line.trim().is_empty() || line.starts_with("# ") => return None,
                _ => panic!(
                    "docs/protocol.md:{}: a transcript line starts with >, <, !, ~ or #: {line}",
                    block.line + n + 1
                ),
            })
        })
        .collect()
}

/// Compares a server message with the transcript's: the same fields, equal values except
/// the [`VARYING_FIELDS`] ones (and everything in an offer, whose contents the pipeline picks),
/// which only keep their JSON kind.
fn same_message(expected: &Value, actual: &Value, varying: bool, path: &str) -> Vec<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let ek: BTreeSet<&String> = e.keys().collect();
            let ak: BTreeSet<&String> = a.keys().collect();
            if ek != ak {
                return vec![format!("{path}: fields {ek:?}, the server sent {ak:?}")];
            }
            let offer = path.is_empty() && e.get("type") == Some(&Value::from("offer"));
            e.iter()
                .flat_map(|(k, v)| {
                    let vary = varying
                        || VARYING_FIELDS.contains(&k.as_str())
                        || (offer && k != "type" && k != "seq");
                    same_message(v, &a[k], vary, &format!("{path}.{k}"))
                })
                .collect()
        }
        _ if varying && kind(expected) == kind(actual) => Vec::new(),
        _ if !varying && expected == actual => Vec::new(),
        _ => vec![format!(
            "{path}: expected {expected}, the server sent {actual}"
        )],
    }
}

/// Replaces the document's ids of server-made objects with the real ones.
fn substitute(v: &Value, ids: &BTreeMap<String, String>) -> Value {
    match v {
        Value::String(s) => Value::String(ids.get(s).cloned().unwrap_or_else(|| s.clone())),
        Value::Array(a) => a.iter().map(|x| substitute(x, ids)).collect(),
        Value::Object(o) => o
            .iter()
            .map(|(k, x)| (k.clone(), substitute(x, ids)))
            .collect::<Map<String, Value>>()
            .into(),
        other => other.clone(),
    }
}

/// Plays the transcript in `fmt` on a fresh game.
async fn play(app: &TestApp, fmt: Fmt) {
    let sdk = app.game_with(store_shelf()).await;
    let session = fresh(&sdk.game);
    let player = format!("p-{session}");
    let key = offer_actors::SessionKey {
        game_id: sdk.game.parse().expect("uuid"),
        env: offer_domain::environment::Environment::Production,
        session_id: session,
    };
    let actors = &app.running.state.services.actors;
    let mut client: Option<Client> = None;
    // Ids the server made (offers, the session's epoch), from the document's value to this
    // run's, so the client's later messages name the real ones.
    let mut ids = BTreeMap::new();
    for step in transcript(session, &player) {
        match step {
            Step::Send(msg) => {
                let c = client
                    .as_mut()
                    .expect("the transcript connects before it sends");
                c.send(substitute(&msg, &ids)).await;
            }
            Step::Receive(expected) => {
                let c = client
                    .as_mut()
                    .expect("the transcript connects before it reads");
                let actual = c.recv().await;
                let wrong = same_message(&expected, &actual, false, "");
                assert!(
                    wrong.is_empty(),
                    "{fmt:?}: expected {expected}\nreceived {actual}\n{wrong:#?}"
                );
                for made in ["offer_id", "epoch"] {
                    if let (Some(doc), Some(real)) =
                        (expected[made].as_str(), actual[made].as_str())
                    {
                        ids.insert(doc.to_owned(), real.to_owned());
                    }
                }
            }
            Step::Call(method, path, body) => {
                let path = path.replace("{game_id}", &sdk.game);
                let method = method.parse().expect("an HTTP method");
                // While the client is away, wait until the session has what the call
                // pushes, so the resume finds it.
                let away = client.is_none();
                let before = actors.session(&key).map(|s| s.last_seq());
                let answer = app.call(method, path).json(body).send().await;
                assert!(answer.status().is_success(), "{answer:?}");
                if away && let Some(before) = before {
                    wait_until(|| actors.session(&key).is_some_and(|s| s.last_seq() > before))
                        .await;
                }
            }
            Step::Close => {
                let mut c = client.take().expect("an open connection to close");
                c.ws.close(None).await.expect("close");
                drop(c);
                wait_until(|| actors.session(&key).is_some_and(|s| !s.socket_attached())).await;
            }
            Step::Connect => {
                client = Some(connect(app, &sdk.key, fmt).await);
            }
        }
    }
}

/// Polls `done` until it holds (within [`PATIENCE`]).
async fn wait_until(mut done: impl FnMut() -> bool) {
    tokio::time::timeout(PATIENCE, async {
        while !done() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("condition reached in time");
}

#[tokio::test]
async fn the_transcript_plays_against_a_live_server_in_both_formats() {
    let app = spawn_app().await;
    play(&app, Fmt::Json).await;
    play(&app, Fmt::MsgPack).await;
}
