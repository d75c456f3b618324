//! What only sockets need on a node: the shutdown signal every socket task watches and the
//! count of open socket tasks the shutdown waits for, the sockets open by client address and
//! by key (for the limits of [`super::limits`]), the configuration its clients were
//! last told about, the broadcast to every session of a game, encoded once for all of them,
//! and the push of a player's inventory to its sessions.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use dashmap::DashMap;
use offer_actors::{GameView, PushResult, SessionHandle};
use tokio::sync::Notify;
use uuid::Uuid;

use super::WsContext;
use super::limits::SocketCounts;
use super::protocol::ToOutbound as _;
use crate::service::play::inventory;
use crate::signal::Signal;
use offer_domain::environment::Environment;
use offer_wire::socket::InventoryItem;
use offer_wire::socket::ServerMessage;

/// The node's socket-wide state.
#[derive(Default)]
pub struct Hub {
    /// Fires when the node shuts down: every socket writes what is queued and closes with
    /// 1001. Shutdown waits (bounded) until every socket task has ended ([`Hub::all_closed`]).
    pub closing: Signal,
    /// Socket tasks running, each counted by its [`OpenSocket`].
    open: AtomicUsize,
    /// Woken when the last socket task ends.
    none_open: Notify,
    /// Sockets open by client address and by SDK key, each counted from before its upgrade
    /// until it closes.
    pub sockets: Arc<SocketCounts>,
    /// Per game, a checksum of the configuration this node's sockets were last told about,
    /// so `config` is pushed only for changes a client can see.
    announced_config: DashMap<Uuid, u32>,
}

impl Hub {
    /// Counts a socket task until the returned guard is dropped.
    pub fn open_socket(self: &Arc<Self>) -> OpenSocket {
        self.open.fetch_add(1, Ordering::AcqRel);
        OpenSocket(self.clone())
    }

    /// Resolves once no socket task runs.
    pub async fn all_closed(&self) {
        loop {
            let mut notified = std::pin::pin!(self.none_open.notified());
            // Registered before the count is read, so a last task ending in between wakes it.
            notified.as_mut().enable();
            if self.open.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// One running socket task, counted by the hub while it lives.
pub struct OpenSocket(Arc<Hub>);

impl Drop for OpenSocket {
    fn drop(&mut self) {
        if self.0.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.none_open.notify_waiters();
        }
    }
}

/// Pushes one message to every session of `game_id` on this node, encoded once for all of
/// them. Returns how many sessions had a socket that took it.
pub fn broadcast(state: &WsContext, game_id: Uuid, msg: ServerMessage) -> usize {
    let outbound = msg.outbound();
    let mut delivered = 0;
    let mut cut = 0;
    state
        .services
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

/// The player's sessions of `env` on this node but `answered` (whose socket already has the
/// news).
fn sessions_of_player(
    state: &WsContext,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
    answered: Option<Uuid>,
) -> Vec<SessionHandle> {
    let mut sessions = state
        .services
        .actors
        .sessions_of_player(game_id, env, player_id);
    sessions.retain(|session| Some(session.info().session_id) != answered);
    sessions
}

/// Pushes the stored inventory of `player_id` to each of the player's sessions of `env` on
/// this node but `answered` (whose socket already has it). The inventory is read when the
/// push is made, so a late message still pushes what the player holds now; a node without
/// such a session reads nothing.
pub async fn push_inventory(
    state: &WsContext,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
    answered: Option<Uuid>,
) {
    let sessions = sessions_of_player(state, game_id, env, player_id, answered);
    if sessions.is_empty() {
        return;
    }
    let held = match inventory::read(state.services.store.as_ref(), game_id, env, player_id).await {
        Ok(held) => held,
        Err(e) => {
            tracing::warn!(%game_id, error = %e, "inventory push: the inventory could not be read");
            return;
        }
    };
    let outbound = ServerMessage::Inventory {
        items: InventoryItem::list(held),
    }
    .outbound();
    for session in sessions {
        session.push(outbound.clone());
    }
}

/// Pushes the stored balance of one currency of `player_id` to each of the player's sessions
/// of `env` on this node. Read when the push is made, like the inventory: a late message
/// pushes the balance as it is now.
pub async fn push_balance(
    state: &WsContext,
    game_id: Uuid,
    env: Environment,
    player_id: &str,
    currency_id: &str,
) {
    let sessions = sessions_of_player(state, game_id, env, player_id, None);
    if sessions.is_empty() {
        return;
    }
    let balance = match state
        .services
        .store
        .balance(game_id, env, player_id, currency_id)
        .await
    {
        Ok(balance) => balance,
        Err(e) => {
            tracing::warn!(%game_id, error = %e, "balance push: the balance could not be read");
            return;
        }
    };
    let outbound = ServerMessage::Balance {
        currency_id: currency_id.to_owned(),
        balance,
    }
    .outbound();
    for session in sessions {
        session.push(outbound.clone());
    }
}

/// A checksum of what a client sees of a game's configuration (mode, catalogue, templates,
/// bundles, experiments, the published custom page's version). `config_version` also moves for changes no client sees (a launch
/// date, the approval queue, the model's learning), so `config` is pushed only when this
/// changes.
fn client_config(view: &GameView) -> u32 {
    let parts = (
        view.game.mode,
        &view.items,
        &view.templates,
        &view.bundles,
        &view.experiments,
        view.custom_page.as_ref().map(|p| (p.page_id, p.version)),
    );
    serde_json::to_vec(&parts).map_or(0, |bytes| crc32fast::hash(&bytes))
}

/// Remembers what this node's clients of `view`'s game were told, the first time one
/// connects.
pub fn note_config(state: &WsContext, view: &GameView) {
    let game_id = view.game.game_id;
    if !state.hub.announced_config.contains_key(&game_id) {
        state
            .hub
            .announced_config
            .entry(game_id)
            .or_insert_with(|| client_config(view));
    }
}

/// After a configuration change: pushes `config` to the game's sessions on this node when
/// something they see changed.
pub fn announce_config(state: &WsContext, view: &GameView) {
    let game_id = view.game.game_id;
    let now = client_config(view);
    let changed = match state.hub.announced_config.get_mut(&game_id) {
        Some(mut seen) => std::mem::replace(&mut *seen, now) != now,
        // No client connected here since start: nobody to tell.
        None => false,
    };
    if changed {
        broadcast(
            state,
            game_id,
            ServerMessage::Config {
                config_version: view.version,
                custom_page: view.custom_page.clone(),
            },
        );
    }
}
