//! The credential matrix through the real HTTP surface: forged, expired and misdirected
//! JWTs, roles, studio isolation, SDK keys (hashed, checksummed, revocable, also on a
//! kept-alive connection that remembers the key it verified) and authoring keys (read-only,
//! one game, expiring).

use std::time::{Duration, Instant};

use base64::Engine;
use reqwest::StatusCode;
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::fixtures::item;
use super::helpers::{
    Role, SECRET, default_backend, shared_backend, spawn_app, spawn_app_on, spawn_tuned,
};
use super::raw::{RawAnswer, connect, read_one};

/// A JWT signed with `secret` (HS256 by hand, so the test does not trust the server's JWT
/// library to sign what it verifies).
fn forge(header: &serde_json::Value, claims: &serde_json::Value, secret: &[u8]) -> String {
    use sha2::Digest;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let head = format!(
        "{}.{}",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string())
    );
    let mut key = [0u8; 64];
    if secret.len() > 64 {
        key[..32].copy_from_slice(&sha2::Sha256::digest(secret));
    } else {
        key[..secret.len()].copy_from_slice(secret);
    }
    let ipad: Vec<u8> = key.iter().map(|b| b ^ 0x36).collect();
    let opad: Vec<u8> = key.iter().map(|b| b ^ 0x5c).collect();
    let inner = sha2::Sha256::digest([ipad.as_slice(), head.as_bytes()].concat());
    let mac = sha2::Sha256::digest([opad.as_slice(), inner.as_slice()].concat());
    format!("{head}.{}", b64.encode(mac))
}

/// Admin claims of studio A for audience `aud`, expiring `exp_offset` seconds from now.
fn claims(aud: &str, exp_offset: i64) -> serde_json::Value {
    let now = chrono::Utc::now().timestamp();
    json!({"sub": "mallory", "studio_id": "studio-a", "role": "admin", "aud": aud,
           "iss": "offer-engine", "exp": now + exp_offset, "iat": now})
}

#[tokio::test]
async fn credential_matrix() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let path = format!("/v1/games/{game}");
    let hs256 = json!({"alg": "HS256", "typ": "JWT"});
    let dashboard = || claims("offer-engine-dashboard", 600);

    // No credential.
    app.get(&path)
        .no_token()
        .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
        .await;
    // A correctly forged token is accepted (the forger is right)...
    let good = forge(&hs256, &dashboard(), SECRET.as_bytes());
    app.get(&path).token(&good).expect(StatusCode::OK).await;
    // ...but a bad signature, alg none, a wrong audience, an expired token and one without
    // an issuer are not.
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let alg_none = format!(
        "{}.{}.",
        b64.encode(json!({"alg": "none", "typ": "JWT"}).to_string()),
        b64.encode(dashboard().to_string())
    );
    let mut no_iss = dashboard();
    no_iss.as_object_mut().expect("obj").remove("iss");
    for refused in [
        forge(&hs256, &dashboard(), b"another-secret"),
        alg_none,
        forge(&hs256, &claims("someone-else", 600), SECRET.as_bytes()),
        forge(
            &hs256,
            &claims("offer-engine-dashboard", -600),
            SECRET.as_bytes(),
        ),
        forge(&hs256, &no_iss, SECRET.as_bytes()),
    ] {
        app.get(&path)
            .token(&refused)
            .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
            .await;
    }

    // An SDK key on a dashboard path.
    let sdk = app.sdk_key(&game, "production").await;
    app.get(&path)
        .token(&sdk)
        .expect_error(StatusCode::FORBIDDEN, "wrong_credential")
        .await;
    // A viewer reads but cannot write.
    let viewer = app.token("studio-a", Role::Viewer);
    app.get(&path).token(&viewer).expect(StatusCode::OK).await;
    app.post(format!("{path}/items"), item("x", "consumable", 1.0))
        .token(&viewer)
        .expect_error(StatusCode::FORBIDDEN, "forbidden")
        .await;
    // A developer cannot mint keys.
    let dev = app.token("studio-a", Role::Developer);
    app.post(
        format!("{path}/sdk-keys"),
        json!({"environment": "sandbox"}),
    )
    .token(&dev)
    .expect_error(StatusCode::FORBIDDEN, "forbidden")
    .await;
    // Studio B cannot see studio A's game, nor tell that it exists.
    let b = app.token("studio-b", Role::Admin);
    for hidden in [
        app.get(&path),
        app.get(format!("{path}/items")),
        app.post(format!("{path}/items/bulk"), json!({"items": []})),
    ] {
        hidden
            .token(&b)
            .expect_error(StatusCode::NOT_FOUND, "not_found")
            .await;
    }
}

#[tokio::test]
async fn keys_are_hashed_checked_and_revocable() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let body = app.issue_sdk_key(&game, "production").await;
    let key = body["api_key"].as_str().expect("key").to_owned();
    assert!(key.starts_with("ofr_live_sk_"));
    let key_id = body["key_id"].as_str().expect("id").to_owned();
    let sandbox = app.sdk_key(&game, "sandbox").await;
    assert!(sandbox.starts_with("ofr_test_sk_"));
    // Only hashes are listed; the key never appears again.
    let listed = app.get_json(format!("/v1/games/{game}/keys")).await;
    assert!(!listed.to_string().contains(&key));
    // A typo fails the checksum; a revoked key is refused.
    let mut typo = key.clone();
    typo.replace_range(20..21, if &key[20..21] == "A" { "B" } else { "A" });
    let asset = format!("/v1/games/{game}/assets/x");
    app.get(&asset)
        .token(&typo)
        .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
        .await;
    app.get(&asset)
        .token(&key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    app.revoke_sdk_key(&game, &key_id).await;
    app.get(&asset)
        .token(&key)
        .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
        .await;
}

#[tokio::test]
async fn authoring_key_reads_its_catalogue_only_and_expires() {
    let app = spawn_tuned(default_backend(), |s| s.auth.authoring_key_ttl_days = 1).await;
    let game = app.create_game().await;
    let other = app.create_game().await;
    let body = app
        .post(format!("/v1/games/{game}/authoring-keys"), json!({}))
        .expect(StatusCode::CREATED)
        .await;
    let key = body["authoring_key"].as_str().expect("key").to_owned();
    assert!(key.starts_with("ofr_auth_"));
    let items = format!("/v1/games/{game}/items");
    app.get(&items).token(&key).expect(StatusCode::OK).await;
    app.get(format!("/v1/games/{other}/items"))
        .token(&key)
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    // It can never write, publish or touch dashboard paths.
    for refused in [
        app.post(&items, item("x", "consumable", 1.0)),
        app.get(format!("/v1/games/{game}")),
    ] {
        refused
            .token(&key)
            .expect_error(StatusCode::FORBIDDEN, "wrong_credential")
            .await;
    }

    // Expiry: rewrite the stored record's expiry into the past, as 90 days would.
    let state = &app.running.state;
    let game_id: uuid::Uuid = game.parse().expect("uuid");
    let key_id = body["key_id"].as_str().expect("id");
    let coll = offer_engine::store::Collection::game(game_id, "keys");
    let bytes = state
        .services
        .store
        .get(coll, key_id)
        .await
        .expect("get")
        .expect("record");
    let mut record: offer_engine::service::studio::keys::KeyRecord =
        serde_json::from_slice(&bytes).expect("record");
    record.expires_at = Some(chrono::Utc::now() - chrono::Duration::seconds(1));
    state
        .services
        .store
        .put_all(
            coll,
            vec![(
                key_id.to_owned(),
                serde_json::to_vec(&record).expect("json"),
            )],
        )
        .await
        .expect("put");
    state.auth.forget(&record.key_hash);
    app.get(&items)
        .token(&key)
        .expect_error(StatusCode::UNAUTHORIZED, "authoring_key_expired")
        .await;
}

#[tokio::test]
async fn token_claims_are_read_as_the_jwt_rules_say() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let path = format!("/v1/games/{game}");
    let hs256 = json!({"alg": "HS256", "typ": "JWT"});
    let now = chrono::Utc::now().timestamp();
    let with = |changes: serde_json::Value| {
        let mut c = claims("offer-engine-dashboard", 600);
        for (k, v) in changes.as_object().expect("object") {
            c[k] = v.clone();
        }
        forge(&hs256, &c, SECRET.as_bytes())
    };
    // Refused: not valid yet, issued in the future, or claiming to live far too long.
    for refused in [
        with(json!({"nbf": now + 3600})),
        with(json!({"iat": now + 3600})),
        with(json!({"exp": 253_402_300_799_i64})),
    ] {
        app.get(&path)
            .token(&refused)
            .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
            .await;
    }
    // Accepted: an audience list that contains ours, an `nbf` already past.
    for accepted in [
        with(json!({"aud": ["another-service", "offer-engine-dashboard"]})),
        with(json!({"nbf": now - 60})),
    ] {
        app.get(&path).token(&accepted).expect(StatusCode::OK).await;
    }
    // The scheme is case-insensitive.
    let good = with(json!({}));
    app.get(&path)
        .token(&good)
        .scheme("bearer")
        .expect(StatusCode::OK)
        .await;
}

#[tokio::test]
async fn a_bad_credential_on_the_sdk_surface_is_401_and_a_dashboard_token_403() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let path = format!("/v1/sdk/status/{game}");
    for garbage in [
        "garbage",
        "eyJhbGciOiJIUzI1NiJ9.e30.c2ln",
        "ofr_live_sk_nope",
    ] {
        app.get(&path)
            .token(garbage)
            .expect_error(StatusCode::UNAUTHORIZED, "unauthorized")
            .await;
    }
    app.get(&path)
        .expect_error(StatusCode::FORBIDDEN, "wrong_credential")
        .await;
}

/// One keep-alive request for the game's status with `key` on `conn`; its answer.
async fn status_on(conn: &mut TcpStream, game: &str, key: &str) -> RawAnswer {
    let head = format!(
        "GET /v1/sdk/status/{game} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
    );
    conn.write_all(head.as_bytes()).await.expect("write");
    read_one(conn).await
}

/// A connection remembers the key it verified (it skips hashing it again), and still
/// refuses it on its next request once it is revoked: on the node that revoked it at once,
/// and on another node as soon as the bus tells it. Every request of a node is on one
/// socket, so the remembered key is the one being tested.
#[tokio::test]
async fn a_key_revoked_is_refused_on_the_kept_alive_connection_that_verified_it() {
    let a = spawn_app_on(shared_backend()).await;
    let b = a.spawn_peer().await;
    let game = a.create_game().await;
    let body = a.issue_sdk_key(&game, "production").await;
    let key = body["api_key"].as_str().expect("key").to_owned();
    let key_id = body["key_id"].as_str().expect("id").to_owned();
    let other = a.sdk_key(&game, "sandbox").await;
    let mut here = connect(a.addr).await;
    let mut there = connect(b.addr).await;
    for conn in [&mut here, &mut there] {
        for _ in 0..2 {
            assert_eq!(status_on(conn, &game, &key).await.status, 200);
        }
        // Another key on the same connection is its own, and the first one is still good.
        assert_eq!(status_on(conn, &game, &other).await.status, 200);
        assert_eq!(status_on(conn, &game, &key).await.status, 200);
    }
    a.revoke_sdk_key(&game, &key_id).await;
    status_on(&mut here, &game, &key)
        .await
        .assert_error(401, "unauthorized");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let answer = status_on(&mut there, &game, &key).await;
        if answer.status == 401 {
            answer.assert_error(401, "unauthorized");
            break;
        }
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(
            Instant::now() < deadline,
            "the other node's connection still takes the revoked key"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The other key is still served on both connections.
    for conn in [&mut here, &mut there] {
        assert_eq!(status_on(conn, &game, &other).await.status, 200);
    }
}
