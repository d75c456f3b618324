//! The WebSocket gateway: `GET /v1/sdk/ws`, the SDK's persistent connection.
//!
//! The SDK key is checked (with the same extractor as every `/v1/sdk` path) before the
//! upgrade, so a bad key is an HTTP 401/403 in the documented error shape, never a socket.
//! The subprotocol picks the wire format ([`protocol::Format`]); an upgrade without one the
//! server speaks is a 400. Each socket is served by one task ([`gateway`]) that selects over
//! the socket, its session's bounded outbound queue, the heartbeat ([`heartbeat`]), its key's
//! revocation and the node's shutdown signal ([`crate::signal`]): after its first poll, a
//! signal or the heartbeat is a flag read, no lock or timer per turn of the loop, and the
//! socket is read only once it woke ([`read_gate`]). [`budget`] bounds the refused messages
//! it takes; [`limits`] the sockets one client address, and one SDK key, hold at once.
//! `docs/protocol.md` is the protocol's reference.
//!
//! Where things live: the session's handle owns the per-session `seq` counter, the
//! replay ring for `resume_from` and the queue's sending end (`offer_actors::SessionHandle`),
//! so messages pushed while the client is away are kept for its return, and a broadcast
//! ([`hub::broadcast`]) reaches every session of a game with one encoding shared by all.

pub mod budget;
pub mod client_json;
pub mod gateway;
pub mod heartbeat;
pub mod hub;
pub mod limits;
pub mod protocol;
pub mod read_gate;

use std::sync::Arc;

use axum::Router;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{ConnectInfo, FromRef, State};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::metrics::Connections;
use crate::server::Peer;
use crate::service::Services;
use crate::service::studio::callers::SdkCaller;
use crate::service::studio::keys::AuthService;
use crate::throttle::new_players::NewPlayers;
use hub::Hub;
use offer_wire::socket::{JSON_PROTOCOL, MSGPACK_PROTOCOL};
use protocol::Format;

/// What a socket task needs of the node: the services, the credential checks (a key
/// revoked while a socket is open closes it) and the hub. Taken from the router's state, so
/// this module does not depend on the application state.
#[derive(Clone)]
pub struct WsContext {
    /// The use cases: sessions, events and offers.
    pub services: Services,
    /// Credential checks.
    pub auth: Arc<AuthService>,
    /// What only sockets need on this node.
    pub hub: Arc<Hub>,
    /// Where refused upgrades are counted for `/metrics`.
    pub connections: Arc<Connections>,
    /// This node's limit on new player ids per SDK key, which `hello` spends.
    pub new_players: Arc<NewPlayers>,
}

/// The socket's route, for the router to mount beside the REST routes.
pub fn routes<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    WsContext: FromRef<S>,
    Arc<AuthService>: FromRef<S>,
{
    Router::new().route("/v1/sdk/ws", axum::routing::get(upgrade))
}

/// `GET /v1/sdk/ws`: authenticates, negotiates the subprotocol and hands the socket to its
/// task. Not in the OpenAPI document: it is not a REST operation.
///
/// In order: a bad key is a 401/403, a request that is not a WebSocket upgrade a 400, an
/// upgrade that offers neither subprotocol a 400, and one from a client address or with a
/// key already at its socket limit ([`limits`]) a 429, all in the documented error shape and
/// before any socket exists. A client that offers both subprotocols gets `svc.v1.json`.
pub async fn upgrade(
    State(state): State<WsContext>,
    ConnectInfo(peer): ConnectInfo<Peer>,
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
    let cfg = &state.services.settings.websocket;
    let ws = ws
        .protocols([JSON_PROTOCOL, MSGPACK_PROTOCOL])
        .read_buffer_size(cfg.read_buffer_bytes)
        .write_buffer_size(cfg.write_buffer_bytes)
        .max_write_buffer_size(cfg.write_buffer_bytes + 2 * cfg.max_frame_bytes)
        .max_frame_size(cfg.max_frame_bytes)
        .max_message_size(cfg.max_frame_bytes);
    let Some(format) = ws
        .selected_protocol()
        .and_then(|p| p.to_str().ok())
        .and_then(Format::from_protocol)
    else {
        return ApiError::BadRequest(format!(
            "a subprotocol is required: offer {JSON_PROTOCOL} or {MSGPACK_PROTOCOL} in Sec-WebSocket-Protocol"
        ))
        .into_response();
    };
    let taken =
        state
            .hub
            .sockets
            .take(peer.remote.ip(), caller.key.key_id, cfg, &state.connections);
    let place = match taken {
        Ok(place) => place,
        Err(refused) => return refused.into_response(),
    };
    ws.on_upgrade(move |socket| async move {
        gateway::run(state, caller, format, socket).await;
        // The socket is closed: its place under the per-client limits is free.
        drop(place);
    })
}
