//! The credential matrix through the real HTTP surface.

use base64::Engine;
use offer_engine::auth::Role;
use reqwest::StatusCode;
use serde_json::json;

use super::helpers::{SECRET, expect_error, spawn_app};

fn forge(header: &serde_json::Value, claims: &serde_json::Value, secret: &[u8]) -> String {
    use sha2::Digest;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let head = format!(
        "{}.{}",
        b64.encode(header.to_string()),
        b64.encode(claims.to_string())
    );
    // HMAC-SHA256 by hand keeps the test independent of the server's JWT library.
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

    // No credential.
    let r = app.client.get(app.url(&path)).send().await.expect("req");
    expect_error(r, StatusCode::UNAUTHORIZED, "unauthorized").await;
    // A correctly forged token is accepted (the forger is right)...
    let good = forge(
        &hs256,
        &claims("offer-engine-dashboard", 600),
        SECRET.as_bytes(),
    );
    assert_eq!(app.get(&path, &good).await.status(), StatusCode::OK);
    // ...but a bad signature, alg none, a wrong audience and an expired token are not.
    let bad_sig = forge(
        &hs256,
        &claims("offer-engine-dashboard", 600),
        b"another-secret",
    );
    expect_error(
        app.get(&path, &bad_sig).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    )
    .await;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let none = format!(
        "{}.{}.",
        b64.encode(json!({"alg": "none", "typ": "JWT"}).to_string()),
        b64.encode(claims("offer-engine-dashboard", 600).to_string())
    );
    expect_error(
        app.get(&path, &none).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    )
    .await;
    let wrong_aud = forge(&hs256, &claims("someone-else", 600), SECRET.as_bytes());
    expect_error(
        app.get(&path, &wrong_aud).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    )
    .await;
    let expired = forge(
        &hs256,
        &claims("offer-engine-dashboard", -600),
        SECRET.as_bytes(),
    );
    expect_error(
        app.get(&path, &expired).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    )
    .await;
    let mut no_iss = claims("offer-engine-dashboard", 600);
    no_iss.as_object_mut().expect("obj").remove("iss");
    let no_iss = forge(&hs256, &no_iss, SECRET.as_bytes());
    expect_error(
        app.get(&path, &no_iss).await,
        StatusCode::UNAUTHORIZED,
        "unauthorized",
    )
    .await;

    // An SDK key on a dashboard path.
    let sdk = app.sdk_key(&game, "production").await;
    expect_error(
        app.get(&path, &sdk).await,
        StatusCode::FORBIDDEN,
        "wrong_credential",
    )
    .await;
    // A viewer reads but cannot write.
    let viewer = app.token("studio-a", Role::Viewer);
    assert_eq!(app.get(&path, &viewer).await.status(), StatusCode::OK);
    let r = app
        .post(
            &format!("{path}/items"),
            &viewer,
            super::helpers::item("x", "consumable", 1.0),
        )
        .await;
    expect_error(r, StatusCode::FORBIDDEN, "forbidden").await;
    // A developer cannot mint keys.
    let dev = app.token("studio-a", Role::Developer);
    let r = app
        .post(
            &format!("{path}/sdk-keys"),
            &dev,
            json!({"environment": "sandbox"}),
        )
        .await;
    expect_error(r, StatusCode::FORBIDDEN, "forbidden").await;
    // Studio B cannot see studio A's game, nor tell that it exists.
    let b = app.token("studio-b", Role::Admin);
    expect_error(app.get(&path, &b).await, StatusCode::NOT_FOUND, "not_found").await;
    let r = app.get(&format!("{path}/items"), &b).await;
    expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
    let r = app
        .post(&format!("{path}/items/bulk"), &b, json!({"items": []}))
        .await;
    expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
}

#[tokio::test]
async fn keys_are_hashed_checked_and_revocable() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    let r = app
        .post(
            &format!("/v1/games/{game}/sdk-keys"),
            &app.admin,
            json!({"environment": "production"}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let body: serde_json::Value = r.json().await.expect("json");
    let key = body["api_key"].as_str().expect("key").to_owned();
    assert!(key.starts_with("ofr_live_sk_"));
    let key_id = body["key_id"].as_str().expect("id").to_owned();
    let sandbox = app.sdk_key(&game, "sandbox").await;
    assert!(sandbox.starts_with("ofr_test_sk_"));
    // Only hashes are listed; the key never appears again.
    let r = app.get(&format!("/v1/games/{game}/keys"), &app.admin).await;
    let text = r.text().await.expect("text");
    assert!(!text.contains(&key));
    // A typo fails the checksum; a revoked key is refused.
    let mut typo = key.clone();
    typo.replace_range(20..21, if &key[20..21] == "A" { "B" } else { "A" });
    let r = app.get(&format!("/v1/games/{game}/assets/x"), &typo).await;
    expect_error(r, StatusCode::UNAUTHORIZED, "unauthorized").await;
    let r = app.get(&format!("/v1/games/{game}/assets/x"), &key).await;
    expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
    let r = app
        .client
        .delete(app.url(&format!("/v1/games/{game}/sdk-keys/{key_id}")))
        .bearer_auth(&app.admin)
        .send()
        .await
        .expect("req");
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let r = app.get(&format!("/v1/games/{game}/assets/x"), &key).await;
    expect_error(r, StatusCode::UNAUTHORIZED, "unauthorized").await;
}

#[tokio::test]
async fn authoring_key_reads_its_catalogue_only_and_expires() {
    let mut settings = super::helpers::settings(super::helpers::default_backend(), None);
    settings.auth.authoring_key_ttl_days = 1;
    let app = super::helpers::spawn_with(settings).await;
    let game = app.create_game().await;
    let other = app.create_game().await;
    let r = app
        .post(
            &format!("/v1/games/{game}/authoring-keys"),
            &app.admin,
            json!({}),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let body: serde_json::Value = r.json().await.expect("json");
    let key = body["authoring_key"].as_str().expect("key").to_owned();
    assert!(key.starts_with("ofr_auth_"));
    assert_eq!(
        app.get(&format!("/v1/games/{game}/items"), &key)
            .await
            .status(),
        StatusCode::OK
    );
    expect_error(
        app.get(&format!("/v1/games/{other}/items"), &key).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    // It can never write, publish or touch dashboard paths.
    let r = app
        .post(
            &format!("/v1/games/{game}/items"),
            &key,
            super::helpers::item("x", "consumable", 1.0),
        )
        .await;
    expect_error(r, StatusCode::FORBIDDEN, "wrong_credential").await;
    expect_error(
        app.get(&format!("/v1/games/{game}"), &key).await,
        StatusCode::FORBIDDEN,
        "wrong_credential",
    )
    .await;

    // Expiry: rewrite the stored record's expiry into the past, as 90 days would.
    let state = &app.running.state;
    let game_id: uuid::Uuid = game.parse().expect("uuid");
    let key_id = body["key_id"].as_str().expect("id");
    let coll = offer_engine::store::Collection::game(game_id, "keys");
    let bytes = state
        .store
        .get(coll, key_id)
        .await
        .expect("get")
        .expect("record");
    let mut record: offer_engine::auth::KeyRecord = serde_json::from_slice(&bytes).expect("record");
    record.expires_at = Some(chrono::Utc::now() - chrono::Duration::seconds(1));
    state
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
    let r = app.get(&format!("/v1/games/{game}/items"), &key).await;
    expect_error(r, StatusCode::UNAUTHORIZED, "authoring_key_expired").await;
}
