//! A real engine for the SDK's tests: the `offer-engine` binary of this workspace, started on
//! a chosen port with its embedded store in a temporary folder, restartable on the same port
//! and data; an admin client for the REST calls a studio would make meanwhile; and a gate
//! between the SDK and the engine that a test closes to keep the SDK away for a while.

use std::io::{BufRead, BufReader};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use offer_sdk::{InitOptions, Sdk, SdkCallback};

pub mod bad_inputs;
pub mod game;
pub mod signing;
use serde_json::{Value, json};

/// How long a test waits for anything the engine or the SDK does.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// The engine binary: `OFFER_ENGINE_BIN`, or `target/debug/offer-engine` of the workspace.
fn engine_bin() -> PathBuf {
    let bin = std::env::var_os("OFFER_ENGINE_BIN").map_or_else(
        || workspace_root().join("target/debug/offer-engine"),
        PathBuf::from,
    );
    assert!(
        bin.is_file(),
        "no engine binary at {}: run `cargo build --bin offer-engine` first, or set OFFER_ENGINE_BIN",
        bin.display()
    );
    bin
}

/// The workspace's root (the engine reads `config/` from there).
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the SDK is a workspace member")
        .to_path_buf()
}

/// A new empty temporary folder.
pub fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("offer-sdk-{tag}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// An engine process on a fixed port and data folder; killed when dropped.
pub struct Engine {
    child: Option<Child>,
    pub port: u16,
    data: PathBuf,
    /// A development admin token of this engine's studio.
    pub token: String,
}

impl Engine {
    /// Starts an engine on `port` with its data in `data` (a restart when `data` has some).
    pub fn start(port: u16, data: &Path) -> Self {
        Self::start_with(port, data, &[])
    }

    /// [`Engine::start`] with settings of the engine's own, as `OFFER__...` variables (for
    /// example a lower `server.max_body_bytes`).
    pub fn start_with(port: u16, data: &Path, settings: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(engine_bin());
        for (k, _) in std::env::vars() {
            if k.starts_with("OFFER__") {
                cmd.env_remove(k);
            }
        }
        let mut child = cmd
            .current_dir(workspace_root())
            .env("OFFER__AUTH__DEV_SECRET_FILE", data.join("dev-jwt-secret"))
            .env("OFFER__STORE__PATH", data.join("offer-engine.db"))
            .envs(settings.iter().copied())
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the engine");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut token = None;
        while let Some(Ok(line)) = lines.next() {
            if line.contains("Development admin token") {
                token = lines.next().and_then(Result::ok);
                break;
            }
        }
        // Keep reading, so the engine never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Self {
            child: Some(child),
            port,
            data: data.to_path_buf(),
            token: token.expect("the engine printed a development token"),
        }
    }

    /// The engine's base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Kills the engine and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// The same engine again: same port, same data.
    pub fn restart(&mut self) {
        self.stop();
        *self = Self::start(self.port, &self.data.clone());
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop();
    }
}

/// REST calls with an admin token, on a runtime of their own.
pub struct Admin {
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Admin {
    /// An admin client of `engine`.
    pub fn new(engine: &Engine) -> Self {
        Self {
            rt: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            http: reqwest::Client::new(),
            base: engine.url(),
            token: engine.token.clone(),
        }
    }

    /// Sends a request and returns its status and JSON body (`null` when empty).
    pub fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        self.call_as(&self.token, method, path, body)
    }

    /// [`Admin::call`] with another credential (an SDK key, for the game's own calls).
    pub fn call_as(
        &self,
        token: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.rt.block_on(async {
            let mut req = self
                .http
                .request(method, format!("{}{path}", self.base))
                .bearer_auth(token);
            if let Some(body) = body {
                req = req.json(&body);
            }
            let res = req.send().await.expect("request");
            let status = res.status().as_u16();
            let text = res.text().await.expect("body");
            (status, serde_json::from_str(&text).unwrap_or(Value::Null))
        })
    }

    /// A new game with the hard currency `gems`, a pack of it and a sword on the store shelf
    /// (so an offer is always possible), and a production SDK key of the game.
    pub fn game_and_key(&self) -> (String, String) {
        let (status, game) = self.call(
            reqwest::Method::POST,
            "/v1/games",
            Some(json!({"name": "G", "genre": "rpg",
                        "currencies": [{"currency_id": "gems", "kind": "hard"}],
                        "items": [{"item_id": "gems_500", "item_name": "gems_500",
                                   "category": "currency_pack", "currency_id": "gems",
                                   "price_usd": 3.99, "quantity": 500, "is_consumable": true,
                                   "fallback_eligible": true},
                                  {"item_id": "sword", "item_name": "sword",
                                   "category": "equipment", "price_usd": 4.99,
                                   "is_consumable": false, "fallback_eligible": true}]})),
        );
        assert_eq!(status, 201, "{game}");
        let game_id = game["game_id"].as_str().expect("game_id").to_owned();
        let (status, key) = self.call(
            reqwest::Method::POST,
            &format!("/v1/games/{game_id}/sdk-keys"),
            Some(json!({"environment": "production"})),
        );
        assert_eq!(status, 201, "{key}");
        (
            game_id,
            key["api_key"].as_str().expect("api_key").to_owned(),
        )
    }
}

/// A player id starting with `prefix` outside `game_id`'s holdout, so that the offer pipeline
/// never answers it `no_offer` for being in the holdout group.
pub fn outside_holdout(game_id: &str, prefix: &str) -> String {
    let game_id: uuid::Uuid = game_id.parse().expect("a game id");
    (0..)
        .map(|n| format!("{prefix}_{n}"))
        .find(|p| !offer_domain::holdout::is_holdout(p, game_id))
        .expect("a player outside the holdout")
}

/// The SDK configuration JSON for a game, key and engine.
pub fn config(game_id: &str, api_key: &str, base_url: &str) -> String {
    json!({"api_key": api_key, "game_id": game_id, "environment": "production",
           "base_url": base_url})
    .to_string()
}

/// Options with `svc_config.json` (auto login, custom id) written to a folder of their own,
/// data in `data`, and a short backoff cap so reconnections come quickly in tests.
pub fn options(data: &Path) -> InitOptions {
    options_with(
        data,
        r#"{"auto_login": true, "player_id_source": "custom"}"#,
    )
}

/// [`options`] with `svc_config.json` as given.
pub fn options_with(data: &Path, svc_config: &str) -> InitOptions {
    let svc = temp_dir("svc");
    std::fs::write(svc.join("svc_config.json"), svc_config).expect("svc_config.json");
    let mut options = InitOptions::new(data, svc);
    options.backoff_cap = Duration::from_secs(1);
    options.flush_interval = Duration::from_millis(200);
    options
}

/// Waits for the first callback `want` accepts, failing with everything seen after
/// [`PATIENCE`].
pub fn wait_for(sdk: &Sdk, what: &str, want: impl Fn(&SdkCallback) -> bool) -> SdkCallback {
    let deadline = Instant::now() + PATIENCE;
    let mut seen = Vec::new();
    while Instant::now() < deadline {
        if let Some(cb) = sdk.wait(Duration::from_millis(200)) {
            if want(&cb) {
                return cb;
            }
            seen.push(cb);
        }
    }
    panic!("no {what} within {PATIENCE:?}; saw {seen:#?}");
}

/// Waits until `check` holds, failing after [`PATIENCE`].
pub fn eventually(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while Instant::now() < deadline {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{what} did not happen within {PATIENCE:?}");
}

/// What most tests start from: an engine with a game and its production key, an admin
/// client, and the folders of the engine and of one game install, removed when dropped.
pub struct Live {
    /// The running engine.
    pub engine: Engine,
    /// Its admin client.
    pub admin: Admin,
    /// The game.
    pub game_id: String,
    /// The game's production SDK key.
    pub key: String,
    engine_data: PathBuf,
    /// The game install's SDK folder.
    pub sdk_data: PathBuf,
}

impl Live {
    /// Starts an engine on a free port and creates the game.
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// [`Live::start`] with settings of the engine's own (see [`Engine::start_with`]).
    pub fn start_with(settings: &[(&str, &str)]) -> Self {
        let engine_data = temp_dir("engine");
        let engine = Engine::start_with(free_port(), &engine_data, settings);
        let admin = Admin::new(&engine);
        let (game_id, key) = admin.game_and_key();
        Self {
            engine,
            admin,
            game_id,
            key,
            engine_data,
            sdk_data: temp_dir("sdk"),
        }
    }

    /// The SDK configuration of the game against this engine.
    pub fn config(&self) -> String {
        config(&self.game_id, &self.key, &self.engine.url())
    }

    /// The SDK of the game install, initialised for `player`.
    pub fn sdk(&self, player: &str) -> Sdk {
        Sdk::init(
            &self.config(),
            Some(player.into()),
            None,
            options(&self.sdk_data),
        )
        .expect("init")
    }

    /// [`Live::sdk`], once its session is ready.
    pub fn ready_sdk(&self, player: &str) -> Sdk {
        let sdk = self.sdk(player);
        wait_for(&sdk, "ready", |c| matches!(c, SdkCallback::Ready { .. }));
        sdk
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.engine.stop();
        let _ = std::fs::remove_dir_all(&self.engine_data);
        let _ = std::fs::remove_dir_all(&self.sdk_data);
    }
}

/// A TCP gate in front of an engine's port: while open it forwards every connection; closing
/// it cuts the connections through it and turns new ones away, so a test decides when the
/// SDK reaches the engine again.
pub struct Gate {
    /// The port the SDK is pointed at.
    pub port: u16,
    open: Arc<AtomicBool>,
    through: Arc<Mutex<Vec<TcpStream>>>,
}

impl Gate {
    /// An open gate to `127.0.0.1:upstream`.
    pub fn new(upstream: u16) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the gate");
        let port = listener.local_addr().expect("addr").port();
        let open = Arc::new(AtomicBool::new(true));
        let through = Arc::new(Mutex::new(Vec::new()));
        let (is_open, conns) = (Arc::clone(&open), Arc::clone(&through));
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                if !is_open.load(Ordering::SeqCst) {
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                let mut list = conns.lock().expect("gate list");
                for stream in [&client, &server] {
                    list.extend(stream.try_clone().ok());
                }
                drop(list);
                pipe(&client, &server);
                pipe(&server, &client);
            }
        });
        Self {
            port,
            open,
            through,
        }
    }

    /// The URL to give the SDK as `base_url`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Cuts every connection through the gate and turns new ones away.
    pub fn close(&self) {
        self.open.store(false, Ordering::SeqCst);
        for stream in self.through.lock().expect("gate list").drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    /// Lets connections through again.
    pub fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

/// Copies `from` to `to` on a thread of its own until either side ends.
fn pipe(from: &TcpStream, to: &TcpStream) {
    let (Ok(mut from), Ok(mut to)) = (from.try_clone(), to.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Both);
        let _ = from.shutdown(Shutdown::Both);
    });
}
