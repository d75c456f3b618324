//! `spawn_app()`: a private engine on port 0, with the production bootstrap, and a client.

use std::net::SocketAddr;

use offer_engine::auth::{JwtCodec, Role};
use offer_engine::config::Settings;
use offer_engine::startup::{self, Running};
use reqwest::{Client, Response, StatusCode};
use serde_json::{Value, json};

/// The JWT secret of test servers.
pub const SECRET: &str = "test-secret-test-secret-test-secret-0123456789";

/// Which store a test server uses.
#[derive(Debug, Clone, Copy)]
pub enum Backend {
    /// The embedded store.
    Embedded,
    /// Real Redis (a private key prefix per server).
    Redis,
}

/// A running test server.
pub struct TestApp {
    pub addr: SocketAddr,
    pub client: Client,
    pub running: Running,
    pub codec: JwtCodec,
    /// Admin token of studio `studio-a`.
    pub admin: String,
}

impl Drop for TestApp {
    fn drop(&mut self) {
        let _ = self.running.shutdown.send(true);
    }
}

pub fn settings(backend: Backend, prefix: Option<String>) -> Settings {
    let mut s = Settings::load(None).expect("default settings load");
    s.server.bind = "127.0.0.1:0".parse().expect("addr");
    s.server.shards = 2;
    s.auth.jwt_secret = SECRET.into();
    if let Backend::Redis = backend {
        s.store.redis_url = super::redis_harness::redis_url();
        s.store.key_prefix = prefix.unwrap_or_else(super::redis_harness::unique_prefix);
    }
    s
}

/// The backend of `spawn_app()`: the embedded store, or real Redis when
/// `OFFER_TEST_STORE=redis` (CI runs the HTTP suite both ways).
pub fn default_backend() -> Backend {
    match std::env::var("OFFER_TEST_STORE").as_deref() {
        Ok("redis") => Backend::Redis,
        _ => Backend::Embedded,
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_with(settings(default_backend(), None)).await
}

pub async fn spawn_app_on(backend: Backend) -> TestApp {
    spawn_with(settings(backend, None)).await
}

pub async fn spawn_with(settings: Settings) -> TestApp {
    let codec = JwtCodec::new(
        SECRET.as_bytes(),
        &settings.auth.jwt_issuer,
        &settings.auth.jwt_audience,
    );
    let running = tokio::task::spawn_blocking(move || startup::spawn(settings))
        .await
        .expect("join")
        .expect("server starts");
    let admin = codec
        .mint("alice", "studio-a", Role::Admin, chrono::Duration::hours(1))
        .expect("mint");
    TestApp {
        addr: running.addr,
        client: Client::new(),
        running,
        codec,
        admin,
    }
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn token(&self, studio: &str, role: Role) -> String {
        self.codec
            .mint("user", studio, role, chrono::Duration::hours(1))
            .expect("mint")
    }

    pub async fn get(&self, path: &str, token: &str) -> Response {
        self.client
            .get(self.url(path))
            .bearer_auth(token)
            .send()
            .await
            .expect("request")
    }

    /// A GET as the admin whose answer is JSON.
    pub async fn get_json(&self, path: &str) -> Value {
        self.get(path, &self.admin)
            .await
            .json()
            .await
            .expect("json")
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Value,
    ) -> Response {
        self.client
            .request(method, self.url(path))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .expect("request")
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> Response {
        self.send(reqwest::Method::POST, path, token, body).await
    }

    pub async fn patch(&self, path: &str, token: &str, body: Value) -> Response {
        self.send(reqwest::Method::PATCH, path, token, body).await
    }

    /// Creates an RPG game with gems for studio A and returns its id.
    pub async fn create_game(&self) -> String {
        self.create_game_as(&self.admin.clone(), "rpg").await
    }

    pub async fn create_game_as(&self, token: &str, genre: &str) -> String {
        let r = self
            .post(
                "/v1/games",
                token,
                json!({"name": "Dragon Quest", "genre": genre,
                       "currencies": [{"currency_id": "gems", "kind": "hard"},
                                      {"currency_id": "gold", "kind": "earned"}]}),
            )
            .await;
        assert_eq!(r.status(), StatusCode::CREATED);
        let body: Value = r.json().await.expect("json");
        body["game_id"].as_str().expect("id").to_owned()
    }

    pub async fn bulk(&self, game: &str, items: Value) -> Response {
        self.post(
            &format!("/v1/games/{game}/items/bulk"),
            &self.admin.clone(),
            json!({ "items": items }),
        )
        .await
    }

    pub async fn items(&self, game: &str) -> Vec<Value> {
        let r = self
            .get(&format!("/v1/games/{game}/items"), &self.admin)
            .await;
        assert_eq!(r.status(), StatusCode::OK);
        let body: Value = r.json().await.expect("json");
        body["items"].as_array().expect("items").clone()
    }

    /// Issues an SDK key for `game` in `environment`.
    pub async fn sdk_key(&self, game: &str, environment: &str) -> String {
        let r = self
            .post(
                &format!("/v1/games/{game}/sdk-keys"),
                &self.admin.clone(),
                json!({ "environment": environment }),
            )
            .await;
        assert_eq!(r.status(), StatusCode::CREATED);
        let body: Value = r.json().await.expect("json");
        body["api_key"].as_str().expect("key").to_owned()
    }
}

/// A catalogue item in the bulk shape.
pub fn item(id: &str, category: &str, price_usd: f64) -> Value {
    json!({"item_id": id, "item_name": id, "category": category, "price_usd": price_usd,
           "is_consumable": false, "fallback_eligible": true})
}

/// A gem pack.
pub fn pack(id: &str, quantity: i64, price_usd: f64) -> Value {
    json!({"item_id": id, "item_name": id, "category": "currency_pack", "currency_id": "gems",
           "price_usd": price_usd, "quantity": quantity, "is_consumable": true,
           "fallback_eligible": true})
}

/// Asserts the contract's error shape and code; returns the body.
pub async fn expect_error(r: Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(r.status(), status, "status");
    let body: Value = r.json().await.expect("error body is JSON");
    assert_eq!(body["error"]["code"], code, "code in {body}");
    assert!(body["error"]["message"].is_string());
    assert!(body["error"]["details"].is_object());
    body
}
