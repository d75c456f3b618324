//! The WebSocket gateway: `GET /v1/sdk/ws`, the SDK's persistent connection.
//!
//! The SDK key is checked (with the same extractor as every `/v1/sdk` path) before the
//! upgrade, so a bad key is an HTTP 401/403 in the contract's error shape, never a socket.
//! The subprotocol picks the wire format ([`protocol::Format`]). Each socket is served by one
//! task ([`gateway`]) that selects over the socket, its session's bounded outbound queue, the
//! heartbeat and the node's shutdown signal.
//!
//! Where things live: the session actor's handle owns the per-session `seq` counter, the
//! replay ring for `resume_from` and the queue's sending end (`offer_actors::SessionHandle`),
//! so messages pushed while the client is away are kept for its return, and a broadcast
//! ([`broadcast`]) reaches every session of a game with one encoding shared by all.

pub mod gateway;
pub mod protocol;

use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::response::{IntoResponse, Response};
use offer_actors::{GameView, PushResult};
use uuid::Uuid;

use crate::auth::SdkCaller;
use crate::error::ApiError;
use crate::state::AppState;
use protocol::{Format, JSON_PROTOCOL, MSGPACK_PROTOCOL, ServerMessage};

/// `GET /v1/sdk/ws`: authenticates, negotiates the subprotocol and hands the socket to its
/// task. Not in the OpenAPI document (it is not a REST operation); the contract documents it.
pub async fn upgrade(
    State(state): State<AppState>,
    caller: SdkCaller,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let ws = match ws {
        Ok(ws) => ws,
        Err(rejection) => {
            return ApiError::BadRequest(format!("a WebSocket upgrade is required: {rejection}"))
                .into_response();
        }
    };
    let offered = ws.requested_protocols().next().is_some();
    let cfg = &state.settings.websocket;
    let ws = ws
        .protocols([JSON_PROTOCOL, MSGPACK_PROTOCOL])
        .read_buffer_size(cfg.read_buffer_bytes)
        .write_buffer_size(cfg.write_buffer_bytes)
        .max_write_buffer_size(cfg.write_buffer_bytes + 2 * cfg.max_frame_bytes)
        .max_frame_size(cfg.max_frame_bytes)
        .max_message_size(cfg.max_frame_bytes);
    let selected = ws.selected_protocol().and_then(|p| p.to_str().ok());
    if offered && selected.is_none() {
        return ApiError::BadRequest(format!(
            "unsupported subprotocol: offer {JSON_PROTOCOL} or {MSGPACK_PROTOCOL}"
        ))
        .into_response();
    }
    let format = Format::from_protocol(selected);
    ws.on_upgrade(move |socket| gateway::run(state, caller, format, socket))
}

/// Pushes one message to every session of `game_id` on this node, encoded once for all of
/// them. Returns how many sessions had a socket that took it.
pub fn broadcast(state: &AppState, game_id: Uuid, msg: &ServerMessage) -> usize {
    let outbound = msg.outbound();
    let mut delivered = 0;
    let mut cut = 0;
    state
        .actors
        .for_each_session_of(game_id, |session| match session.push(outbound.clone()) {
            PushResult::Queued => delivered += 1,
            PushResult::Full => cut += 1,
            PushResult::NoSocket => {}
        });
    if cut > 0 {
        tracing::info!(%game_id, cut, "slow consumers cut off during a broadcast");
    }
    delivered
}

/// A checksum of what a client sees of a game's configuration (mode, catalogue, templates,
/// bundles, experiments). `config_version` also moves for changes no client sees (a launch
/// date, the approval queue, the model's learning), so `config` is pushed only when this
/// changes.
fn client_config(view: &GameView) -> u32 {
    let parts = (
        view.game.mode,
        &view.items,
        &view.templates,
        &view.bundles,
        &view.experiments,
    );
    serde_json::to_vec(&parts).map_or(0, |bytes| crc32fast::hash(&bytes))
}

/// Remembers what this node's clients of `view`'s game were told, the first time one
/// connects.
pub fn note_config(state: &AppState, view: &GameView) {
    let game_id = view.game.game_id;
    if !state.announced_config.contains_key(&game_id) {
        state
            .announced_config
            .entry(game_id)
            .or_insert_with(|| client_config(view));
    }
}

/// After a configuration change: pushes `config` to the game's sessions on this node when
/// something they see changed.
pub fn announce_config(state: &AppState, view: &GameView) {
    let game_id = view.game.game_id;
    let now = client_config(view);
    let changed = match state.announced_config.get_mut(&game_id) {
        Some(mut seen) => std::mem::replace(&mut *seen, now) != now,
        // No client connected here since start: nobody to tell.
        None => false,
    };
    if changed {
        broadcast(
            state,
            game_id,
            &ServerMessage::Config {
                config_version: view.version,
            },
        );
    }
}
