//! The SDK's background thread: its own single-threaded tokio runtime, which fetches the
//! kill-switch state, opens the session and keeps the WebSocket ([`crate::socket`]),
//! reconnecting with backoff, beside the telemetry sender ([`crate::flush`]). Nothing here
//! runs on the game's thread; the game only sees the callbacks it drains.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use offer_domain::game::Mode;
use offer_domain::offer::KillSwitch;
use serde::Deserialize;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::oneshot;

use crate::backoff::Backoff;
use crate::callback::SdkCallback;
use crate::player_token;
use crate::shared::{BACKOFF_BASE, ConnectionError, Shared};
use crate::{flush, sigpipe, socket};

/// How long one HTTP request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Starts the background thread, which takes the offer requests `requests` receives;
/// dropping the returned sender (or sending on it) stops it.
pub fn spawn(
    shared: Arc<Shared>,
    requests: UnboundedReceiver<String>,
) -> std::io::Result<(oneshot::Sender<()>, std::thread::JoinHandle<()>)> {
    let (stop, stopped) = oneshot::channel();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let thread = std::thread::Builder::new()
        .name("offer-sdk".into())
        .spawn(move || {
            // Before any socket exists, so no write of this thread (or of the threads its
            // runtime starts, which inherit the mask) can raise SIGPIPE in the game.
            if let Err(e) = sigpipe::block_on_this_thread() {
                shared.emit(SdkCallback::Error {
                    code: "sdk_signal_mask".into(),
                    message: format!("cannot block SIGPIPE on the SDK's thread: {e}"),
                });
            }
            runtime.block_on(async move {
                tokio::select! {
                    _ = stopped => {}
                    () = run(shared, requests) => {}
                }
            });
        })?;
    Ok((stop, thread))
}

/// The background work: the session loop and the telemetry sender, side by side.
async fn run(shared: Arc<Shared>, mut requests: UnboundedReceiver<String>) {
    let http = match reqwest::Client::builder().timeout(REQUEST_TIMEOUT).build() {
        Ok(http) => http,
        Err(e) => {
            shared.emit(SdkCallback::Error {
                code: "sdk_http_client".into(),
                message: format!("cannot build the HTTP client: {e}"),
            });
            return;
        }
    };
    tokio::join!(
        session_loop(&shared, &http, &mut requests),
        flush::run(&shared, &http)
    );
}

/// Waits for the player id, then connects and reconnects for the life of the SDK.
async fn session_loop(
    shared: &Shared,
    http: &reqwest::Client,
    requests: &mut UnboundedReceiver<String>,
) {
    let mut player = shared.player.subscribe();
    let player_id = loop {
        if let Some(id) = player.borrow_and_update().clone() {
            break id;
        }
        if player.changed().await.is_err() {
            return;
        }
    };
    let mut backoff = Backoff::new(BACKOFF_BASE, shared.timing.backoff_cap);
    let mut position = socket::Position::default();
    let mut last_reported = String::new();
    loop {
        if let Err(e) = connect_once(
            shared,
            http,
            &player_id,
            &mut position,
            &mut backoff,
            requests,
        )
        .await
        {
            // An outage repeats the same failure at every attempt: the game hears it once.
            let message = e.to_string();
            if message != last_reported {
                shared.emit(SdkCallback::Error {
                    code: e.code().into(),
                    message: message.clone(),
                });
                last_reported = message;
            }
        }
        // A write to the lost connection may have left a (blocked) SIGPIPE on this thread.
        sigpipe::discard_pending();
        tokio::time::sleep(backoff.next_delay()).await;
    }
}

/// `GET /v1/sdk/status/{game_id}`, the parts the SDK keeps.
#[derive(Debug, Deserialize)]
struct Status {
    kill_switch: KillSwitch,
    mode: Mode,
    config_version: u64,
    #[serde(default)]
    custom_page: Option<serde_json::Value>,
}

/// `POST /v1/sdk/sessions`, the parts the SDK keeps.
#[derive(Debug, Deserialize)]
struct Session {
    kill_switch: KillSwitch,
    mode: Mode,
    config_version: u64,
}

/// One connection: status, session, then the socket until it closes.
async fn connect_once(
    shared: &Shared,
    http: &reqwest::Client,
    player_id: &str,
    position: &mut socket::Position,
    backoff: &mut Backoff,
    requests: &mut UnboundedReceiver<String>,
) -> Result<(), ConnectionError> {
    let config = &shared.config;
    let status = http
        .get(config.url(&format!("/v1/sdk/status/{}", config.game_id)))
        .bearer_auth(&config.api_key)
        .send()
        .await?;
    if !status.status().is_success() {
        return Err(ConnectionError::Refused(
            status.status(),
            "the status request",
        ));
    }
    let status: Status = status.json().await?;
    shared.apply(
        |s| {
            s.kill_switch = status.kill_switch;
            s.mode = status.mode;
            s.config_version = status.config_version;
            s.custom_page = status.custom_page;
        },
        true,
    );
    if !shared.state.kill_level().allows_sdk() {
        return Err(ConnectionError::SdkOff);
    }
    let token = shared.token().await;
    let mut body = serde_json::json!({"session_id": shared.session_id, "player_id": player_id});
    if let Some(text) = &token.text {
        body["player_token"] = text.as_str().into();
    }
    let opened = http
        .post(config.url("/v1/sdk/sessions"))
        .bearer_auth(&config.api_key)
        .json(&body)
        .send()
        .await?;
    if !opened.status().is_success() {
        let status = opened.status();
        if let Some(refusal) = player_token::token_refusal(opened).await {
            shared.token_refused(&token, refusal.clone());
            return Err(ConnectionError::PlayerToken(refusal));
        }
        return Err(ConnectionError::Refused(status, "the session request"));
    }
    let session: Session = opened.json().await?;
    shared.apply(
        |s| {
            s.kill_switch = session.kill_switch;
            s.mode = session.mode;
            s.config_version = session.config_version;
        },
        true,
    );
    shared.session_open.store(true, Ordering::SeqCst);
    shared.flush.notify_one();
    socket::serve(shared, player_id, &token, position, backoff, requests).await
}
