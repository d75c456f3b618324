//! Signed player identity through the real surfaces: a game that requires player tokens opens
//! a session, over REST and as the WebSocket's `hello`, only for the player a key of the game
//! signed a valid token for; every kind of bad token is refused alone with its code, and two
//! keys let one be rotated. The test keys are `tests/keys/player-*.pem` (made with openssl:
//! P-256 and RSA 2048, PKCS#8).

use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use reqwest::StatusCode;
use serde_json::{Value, json};
use uuid::Uuid;

use super::fixtures::{Sdk, store_shelf};
use super::helpers::{Role, TestApp, spawn_app};
use super::ws_client::{Fmt, assert_fields, connect};

const ES256_A: &str = include_str!("../keys/player-es256-a.pem");
const ES256_A_PUB: &str = include_str!("../keys/player-es256-a.pub.pem");
const ES256_B: &str = include_str!("../keys/player-es256-b.pem");
const ES256_B_PUB: &str = include_str!("../keys/player-es256-b.pub.pem");
const RS256: &str = include_str!("../keys/player-rs256.pem");
const RS256_PUB: &str = include_str!("../keys/player-rs256.pub.pem");

/// Now, in Unix seconds.
fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// A token for `sub` in game `aud`, expiring `exp_in` seconds from now, signed by `key`.
fn token(key: (Algorithm, &str), sub: &str, aud: &str, exp_in: i64) -> String {
    let (alg, pem) = key;
    let encoding = match alg {
        Algorithm::ES256 => EncodingKey::from_ec_pem(pem.as_bytes()),
        _ => EncodingKey::from_rsa_pem(pem.as_bytes()),
    }
    .expect("a test private key");
    let claims = json!({"sub": sub, "aud": aud, "exp": now() + exp_in, "iat": now()});
    encode(&Header::new(alg), &claims, &encoding).expect("signed")
}

/// A token whose header names `alg` but whose signature is `signature`, as an attacker makes.
fn forged(alg: &str, sub: &str, aud: &str, signature: &str) -> String {
    use base64::Engine as _;
    let b64 = |v: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let header = b64(&json!({"alg": alg, "typ": "JWT"}));
    let claims = b64(&json!({"sub": sub, "aud": aud, "exp": now() + 600, "iat": now()}));
    format!("{header}.{claims}.{signature}")
}

/// A token signed with HMAC-SHA256 using the game's public key text as the secret: the
/// classic confusion attack on a verifier that lets the token choose its algorithm.
fn hs256_with_public_key(sub: &str, aud: &str) -> String {
    let claims = json!({"sub": sub, "aud": aud, "exp": now() + 600, "iat": now()});
    let secret = EncodingKey::from_secret(ES256_A_PUB.as_bytes());
    encode(&Header::new(Algorithm::HS256), &claims, &secret).expect("signed")
}

/// A game whose player identity is `required` with `keys`.
async fn game_requiring(app: &TestApp, keys: &[&str]) -> Sdk {
    let sdk = app.game_with(store_shelf()).await;
    app.put(
        format!("/v1/games/{}/player-auth", sdk.game),
        json!({"mode": "required", "keys": keys}),
    )
    .expect(StatusCode::OK)
    .await;
    sdk
}

/// Opens a REST session of `player` with `player_token`; the answer's status and body.
async fn open(
    app: &TestApp,
    sdk: &Sdk,
    player: &str,
    player_token: Option<&str>,
) -> (StatusCode, Value) {
    let mut body = json!({"session_id": Uuid::new_v4(), "player_id": player});
    if let Some(t) = player_token {
        body["player_token"] = json!(t);
    }
    let r = app
        .post("/v1/sdk/sessions", body)
        .token(&sdk.key)
        .send()
        .await;
    let status = r.status();
    (status, r.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_required_game_opens_sessions_only_for_the_signed_player() {
    let app = spawn_app().await;
    let sdk = game_requiring(&app, &[ES256_A_PUB]).await;
    let game = sdk.game.as_str();
    let a = (Algorithm::ES256, ES256_A);
    let good = token(a, "alice", game, 600);
    assert_eq!(
        open(&app, &sdk, "alice", Some(&good)).await.0,
        StatusCode::CREATED
    );

    let other_game = Uuid::new_v4().to_string();
    for (player, sent, code, reason) in [
        ("alice", None, "player_token_required", "required"),
        (
            "bob",
            Some(good.clone()),
            "player_token_mismatch",
            "other_player",
        ),
        (
            "alice",
            Some(token(a, "alice", game, -600)),
            "player_token_invalid",
            "expired",
        ),
        (
            "alice",
            Some(token(a, "alice", &other_game, 600)),
            "player_token_invalid",
            "wrong_audience",
        ),
        (
            "alice",
            Some(token((Algorithm::ES256, ES256_B), "alice", game, 600)),
            "player_token_invalid",
            "unknown_key",
        ),
        (
            "alice",
            Some(token(a, "alice", game, 48 * 3600)),
            "player_token_invalid",
            "too_long_lived",
        ),
        (
            "alice",
            Some(forged("none", "alice", game, "")),
            "player_token_invalid",
            "algorithm",
        ),
        (
            "alice",
            Some(hs256_with_public_key("alice", game)),
            "player_token_invalid",
            "algorithm",
        ),
        (
            "alice",
            Some("not.a.token".to_owned()),
            "player_token_invalid",
            "malformed",
        ),
    ] {
        let (status, body) = open(&app, &sdk, player, sent.as_deref()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{code} {reason}: {body}");
        assert_eq!(body["error"]["code"], code, "{body}");
        assert_eq!(body["error"]["details"]["reason"], reason, "{body}");
        if code == "player_token_invalid" {
            let message = body["error"]["message"].as_str().expect("message");
            assert!(message.contains(reason), "{reason}: {message}");
        }
    }

    // The socket's hello follows the same rule.
    let mut c = connect(&app, &sdk.key, Fmt::Json).await;
    let session = Uuid::new_v4();
    c.send(json!({"type": "hello", "session_id": session, "player_id": "mallory"}))
        .await;
    assert_fields(
        &c.recv().await,
        json!({"type": "error", "code": "player_token_required"}),
    );
    let mut c = connect(&app, &sdk.key, Fmt::Json).await;
    let mallory = token(a, "mallory", game, 600);
    c.send(json!({"type": "hello", "session_id": session, "player_id": "mallory", "player_token": mallory}))
        .await;
    assert_fields(&c.recv().await, json!({"type": "ready"}));
    // Another player cannot take the session over with its own valid token.
    let mut c = connect(&app, &sdk.key, Fmt::Json).await;
    let eve = token(a, "eve", game, 600);
    c.send(json!({"type": "hello", "session_id": session, "player_id": "mallory", "player_token": eve}))
        .await;
    assert_fields(
        &c.recv().await,
        json!({"type": "error", "code": "player_token_mismatch"}),
    );
}

#[tokio::test]
async fn two_keys_rotate_and_rs256_verifies_too() {
    let app = spawn_app().await;
    let sdk = game_requiring(&app, &[ES256_A_PUB, ES256_B_PUB, RS256_PUB]).await;
    let game = sdk.game.as_str();
    for key in [
        (Algorithm::ES256, ES256_A),
        (Algorithm::ES256, ES256_B),
        (Algorithm::RS256, RS256),
    ] {
        let t = token(key, "carol", game, 600);
        assert_eq!(
            open(&app, &sdk, "carol", Some(&t)).await.0,
            StatusCode::CREATED
        );
    }
    // The old key removed: its tokens stop working, the new key's keep working.
    app.put(
        format!("/v1/games/{game}/player-auth"),
        json!({"mode": "required", "keys": [ES256_B_PUB]}),
    )
    .expect(StatusCode::OK)
    .await;
    let old = token((Algorithm::ES256, ES256_A), "carol", game, 600);
    assert_eq!(
        open(&app, &sdk, "carol", Some(&old)).await.0,
        StatusCode::UNAUTHORIZED
    );
    let new = token((Algorithm::ES256, ES256_B), "carol", game, 600);
    assert_eq!(
        open(&app, &sdk, "carol", Some(&new)).await.0,
        StatusCode::CREATED
    );
    // Back to none: the SDK key alone opens sessions again.
    app.put(
        format!("/v1/games/{game}/player-auth"),
        json!({"mode": "none", "keys": []}),
    )
    .expect(StatusCode::OK)
    .await;
    assert_eq!(open(&app, &sdk, "dave", None).await.0, StatusCode::CREATED);
}

#[tokio::test]
async fn settings_start_none_and_only_an_admin_sets_well_formed_keys() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let path = format!("/v1/games/{game}/player-auth");
    assert_eq!(
        app.get_json(&path).await,
        json!({"mode": "none", "keys": []})
    );
    app.put(&path, json!({"mode": "required", "keys": [ES256_A_PUB]}))
        .token(&app.token("studio-a", Role::Viewer))
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    app.get(&path)
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    for body in [
        json!({"mode": "required", "keys": []}),
        json!({"mode": "required", "keys": [ES256_A_PUB, ES256_B_PUB, RS256_PUB, ES256_A_PUB]}),
        json!({"mode": "required", "keys": ["-----BEGIN PUBLIC KEY-----\nbm90IGEga2V5\n-----END PUBLIC KEY-----\n"]}),
        json!({"mode": "sometimes", "keys": []}),
    ] {
        app.put(&path, body.clone())
            .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
            .await;
    }
    assert_eq!(app.get_json(&path).await["mode"], "none", "nothing written");
}
