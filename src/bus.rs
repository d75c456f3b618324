//! The inter-node bus follower: applies what every node (this one included) publishes to
//! this node's actors and sockets. Reloads a game another node changed, applies a kill switch
//! (never letting an older one undo a newer one), pushes a changed inventory to the player's
//! sessions, closes an erased player's sessions and sockets (and forgets having counted it
//! today), forgets revoked keys, and after a gap in the bus reloads every game it serves.

use axum::extract::FromRef;
use offer_actors::GameChange;
use offer_domain::kill_level::KillLevel;
use offer_domain::offer::KillSwitch;
use offer_wire::bus::BusMessage;
use offer_wire::socket::ServerMessage;

use crate::service::access;
use crate::state::AppState;
use crate::ws::{WsContext, hub};

/// Applies bus messages from every node (this one included) to this node's state.
pub async fn follow(state: AppState) {
    let mut rx = state.services.store.subscribe();
    loop {
        match rx.recv().await {
            Ok(msg) => apply(&state, msg).await,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(
                    missed = n,
                    "bus lagged; reloading every game from the store"
                );
                apply(&state, BusMessage::Resync).await;
            }
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}

async fn apply(state: &AppState, msg: BusMessage) {
    match msg {
        BusMessage::KeyRevoked { key_hash } => state.auth.revoked(&key_hash),
        BusMessage::PlayerErased { game_id, player_id } => {
            state.services.sightings.forget(game_id, &player_id);
            let closed = state
                .services
                .actors
                .close_player_sessions(game_id, &player_id);
            if closed > 0 {
                tracing::info!(%game_id, closed, "sessions of an erased player closed");
            }
        }
        BusMessage::GameChanged { game_id, origin } => {
            // The origin already applied the change (reloading could race with its next
            // local change); its sockets still hear of it below.
            if origin != state.services.node_id
                && let Err(e) = access::reload(&state.services, game_id).await
            {
                tracing::warn!(%game_id, error = %e, "reload after bus change failed");
            }
            if let Some(game) = state.services.actors.game(&game_id) {
                hub::announce_config(&WsContext::from_ref(state), &game.view());
            }
        }
        BusMessage::KillSwitch {
            game_id,
            level,
            reason,
            updated_at,
        } => {
            // A node has sessions of a game only while it serves the game.
            let Some(game) = state.services.actors.game(&game_id) else {
                return;
            };
            let Ok(level) = KillLevel::try_from(level) else {
                tracing::warn!(
                    %game_id,
                    kill_level = level,
                    "ignoring a kill switch with an unknown level"
                );
                return;
            };
            let ks = KillSwitch {
                level,
                reason,
                updated_at,
            };
            // The sending node already applied it; others learn it here. An older message
            // arriving late never undoes a newer switch, nor reaches the sockets.
            let current = game.view().kill_switch.clone();
            if ks.updated_at < current.updated_at {
                return;
            }
            if current != ks
                && let Err(e) = game.change(GameChange::KillSwitch(ks.clone())).await
            {
                tracing::warn!(%game_id, error = %e, "applying a kill switch failed");
            }
            broadcast_kill_switch(state, game_id, ks);
        }
        BusMessage::BalanceChanged {
            game_id,
            env,
            player_id,
            currency_id,
        } => {
            hub::push_balance(
                &WsContext::from_ref(state),
                game_id,
                env,
                &player_id,
                &currency_id,
            )
            .await;
        }
        BusMessage::InventoryChanged {
            game_id,
            env,
            player_id,
            answered,
        } => {
            hub::push_inventory(
                &WsContext::from_ref(state),
                game_id,
                env,
                &player_id,
                answered,
            )
            .await;
        }
        BusMessage::Resync => {
            for game in state.services.actors.games() {
                let view = game.view();
                let game_id = view.game.game_id;
                let before = view.kill_switch.clone();
                if let Err(e) = access::reload(&state.services, game_id).await {
                    tracing::warn!(%game_id, error = %e, "reload after a bus gap failed");
                    continue;
                }
                let after = game.view();
                if after.kill_switch != before {
                    broadcast_kill_switch(state, game_id, after.kill_switch.clone());
                }
                hub::announce_config(&WsContext::from_ref(state), &after);
            }
        }
    }
}

fn broadcast_kill_switch(state: &AppState, game_id: uuid::Uuid, ks: KillSwitch) {
    let msg = ServerMessage::KillSwitch {
        level: ks.level,
        reason: ks.reason,
        updated_at: ks.updated_at,
    };
    hub::broadcast(&WsContext::from_ref(state), game_id, msg);
}
