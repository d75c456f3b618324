//! The entry point of every access to a game: the game's actor, started from the store on
//! first use with everything it holds (catalogue, offer configuration, approval definition
//! sets, the published page, the store settings), the studio check each request makes, and
//! the reload another node's change triggers.

use std::collections::HashSet;

use offer_actors::{GameChange, GameConfig, GameHandle};
use offer_domain::approval::{Approval, ApprovalStatus};
use offer_domain::game::Game;
use uuid::Uuid;

use crate::service::authoring::published_page;
use crate::service::economy::health;
use crate::service::game::games::games_collection;
use crate::service::game::{items, offer_config, player_auth, stores};
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::decode;

/// Collection of a game's approval records (written by `approvals.rs`): a loading game's
/// actor takes its definition sets from them ([`definitions`]).
pub(in crate::service) fn approvals_collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "approvals")
}

/// The game's actor, started from the store on first use. Does not check the studio: use
/// [`for_studio`] for every request that names a game.
pub async fn load(state: &Services, game_id: Uuid) -> ServiceResult<GameHandle> {
    if let Some(handle) = state.actors.game(&game_id) {
        return Ok(handle);
    }
    let Some(bytes) = state
        .store
        .get(games_collection(), &game_id.to_string())
        .await?
    else {
        return Err(ServiceError::NotFound("game"));
    };
    let game: Game = decode(&bytes)?;
    let config = load_config(state, &game).await?;
    let handle = state.actors.start_game(game, config);
    // The quadrant lives in the actors only: a node that starts serving a game computes it
    // now rather than serve a hyper-inflated economy's AI offers until the next round. The
    // game itself loaded, so a failure here leaves the round to retry rather than refusing it.
    if let Err(e) = health::refresh_quadrant(state, &handle).await {
        tracing::warn!(%game_id, error = %e, "computing the FSR quadrant of a loaded game failed");
    }
    Ok(handle)
}

/// Everything a game actor holds, read from the store.
async fn load_config(state: &Services, game: &Game) -> ServiceResult<GameConfig> {
    let game_id = game.game_id;
    let (
        items,
        templates,
        bundles,
        experiments,
        kill_switch,
        approvals,
        custom_page,
        stores,
        player_auth,
    ) = tokio::try_join!(
        items::load_all(state, game_id),
        offer_config::templates(state, game),
        offer_config::bundles(state, game_id),
        offer_config::experiments(state, game_id),
        offer_config::kill_switch(state, game),
        definitions(state, game_id),
        published_page::load(state, game_id),
        stores::load(state, game_id),
        player_auth::load(state, game_id),
    )?;
    Ok(GameConfig {
        game: Some(game.clone()),
        items,
        templates,
        bundles,
        experiments,
        kill_switch,
        approved: approvals.approved,
        queued: approvals.queued,
        quadrant: offer_domain::economy::Quadrant::Healthy,
        custom_page,
        stores,
        player_auth,
    })
}

/// The approved and the already queued definition keys of a game.
pub struct Definitions {
    /// Approved keys.
    pub approved: HashSet<String>,
    /// Keys with any approval record.
    pub queued: HashSet<String>,
}

/// Reads the definition sets the game actor needs from the game's approval records.
pub async fn definitions(state: &Services, game_id: Uuid) -> ServiceResult<Definitions> {
    let mut out = Definitions {
        approved: HashSet::new(),
        queued: HashSet::new(),
    };
    for (_, bytes) in state.store.list(approvals_collection(game_id)).await? {
        let a: Approval = decode(&bytes)?;
        if let Some(offer) = a.offer {
            if a.status == ApprovalStatus::Approved {
                out.approved.insert(offer.definition_key.clone());
            }
            out.queued.insert(offer.definition_key);
        }
    }
    Ok(out)
}

/// The game, if it belongs to `studio_id`; another studio's game is a 404, exactly as an
/// absent one.
pub async fn for_studio(
    state: &Services,
    studio_id: &str,
    game_id: Uuid,
) -> ServiceResult<GameHandle> {
    let handle = load(state, game_id).await?;
    if handle.view().game.studio_id == studio_id {
        Ok(handle)
    } else {
        Err(ServiceError::NotFound("game"))
    }
}

/// Reloads a game this node serves after another node changed it (bus message).
pub async fn reload(state: &Services, game_id: Uuid) -> ServiceResult<()> {
    let Some(handle) = state.actors.game(&game_id) else {
        return Ok(());
    };
    // Serialised with this node's writes of the game, so a reload never lands between a
    // local store write and its actor update.
    let lock = state.write_lock(game_id);
    let _guard = lock.lock().await;
    let Some(bytes) = state
        .store
        .get(games_collection(), &game_id.to_string())
        .await?
    else {
        return Ok(());
    };
    let game: Game = decode(&bytes)?;
    let mut config = load_config(state, &game).await?;
    config.quadrant = handle.view().snapshot.quadrant();
    handle.change(GameChange::Reload(Box::new(config))).await?;
    Ok(())
}
