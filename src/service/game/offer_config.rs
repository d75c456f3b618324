//! Offer configuration: L2 templates, L3 bundles, price experiments and the kill switch.
//! The rules each must follow are the domain's; every write goes through
//! [`Services::commit`] and lands with its audit record in one atomic store step
//! ([`Recorded`]).

use chrono::Utc;
use offer_actors::{GameChange, GameHandle};
use offer_domain::audit::{ChangedBy, ObjectRef};
use offer_domain::catalogue::Item;
use offer_domain::game::Game;
use offer_domain::kill_level::KillLevel;
use offer_domain::offer::{Bundle, Experiment, KillSwitch, Template};
use offer_domain::offer_validation::{
    MAX_CONFIG_ENTRIES, validate_bundle, validate_experiment, validate_templates,
};
use offer_domain::product_grant::product_index;
use offer_domain::product_ids::field as product_field;
use offer_domain::validation::{Errors, FieldError};
use uuid::Uuid;

use crate::service::audit::{Audit, Recorded, Watched};
use crate::service::write::Committed;
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

fn config(game_id: Uuid) -> Collection {
    Collection::game(game_id, "config")
}

/// The audit of a change of `object` of `handle`'s game, held in the document `watched`.
fn audit_of(
    handle: &GameHandle,
    action: &'static str,
    object: ObjectRef,
    watched: Watched,
) -> Audit {
    let game = &handle.view().game;
    Audit::of_game(&game.studio_id, game.game_id, action, object, vec![watched])
}

/// The document `id` of `handle`'s game's configuration, as an audit watches it.
fn config_doc(handle: &GameHandle, id: &'static str) -> Watched {
    Watched::new(config(handle.view().game.game_id), id)
}

fn bundles_collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "bundles")
}

/// The genre's default templates from the calibration table.
pub fn genre_templates(state: &Services, genre: &str) -> Vec<Template> {
    state
        .genres
        .get(genre)
        .map(|g| g.templates.clone())
        .unwrap_or_default()
}

/// The game's templates: the stored ones, or its genre's defaults until the studio sets
/// its own.
pub async fn templates(state: &Services, game: &Game) -> ServiceResult<Vec<Template>> {
    match state.store.get(config(game.game_id), "templates").await? {
        Some(bytes) => Ok(decode(&bytes)?),
        None => Ok(genre_templates(state, &game.genre)),
    }
}

/// Validates and stores the templates (a full replacement).
pub async fn put_templates(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    templates: Vec<Template>,
) -> ServiceResult<Vec<Template>> {
    let mut e = Errors::default();
    validate_templates(&templates, &mut e);
    e.finish(()).map_err(ServiceError::Validation)?;
    let game_id = handle.view().game.game_id;
    let audit = audit_of(
        handle,
        "templates.put",
        ObjectRef::new("templates", "templates"),
        config_doc(handle, "templates"),
    );
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            recorded
                .put_all(
                    config(game_id),
                    vec![("templates".into(), encode(&templates)?)],
                )
                .await?;
            Ok(Committed::changed(
                templates.clone(),
                GameChange::Templates(templates),
            ))
        })
        .await
}

/// The game's bundles, oldest first.
pub async fn bundles(state: &Services, game_id: Uuid) -> ServiceResult<Vec<Bundle>> {
    let mut out: Vec<(chrono::DateTime<Utc>, Bundle)> = Vec::new();
    for (_, bytes) in state.store.list(bundles_collection(game_id)).await? {
        let stored: StoredBundle = decode(&bytes)?;
        out.push((stored.created_at, stored.bundle));
    }
    out.sort_by_key(|(t, b)| (*t, b.bundle_id));
    Ok(out.into_iter().map(|(_, b)| b).collect())
}

/// A bundle with its creation time (bundles serve in creation order).
#[derive(serde::Serialize, serde::Deserialize)]
struct StoredBundle {
    created_at: chrono::DateTime<Utc>,
    #[serde(flatten)]
    bundle: Bundle,
}

/// Creates or replaces a bundle, checked against the game's live catalogue.
pub async fn put_bundle(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    bundle: Bundle,
) -> ServiceResult<Bundle> {
    let mut e = Errors::default();
    validate_bundle(&bundle, &handle.view().items, &mut e);
    e.finish(()).map_err(ServiceError::Validation)?;
    let game_id = handle.view().game.game_id;
    let audit = audit_of(
        handle,
        "bundle.put",
        ObjectRef::new("bundle", bundle.bundle_id),
        Watched::new(
            bundles_collection(handle.view().game.game_id),
            bundle.bundle_id,
        ),
    );
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            let coll = bundles_collection(game_id);
            let id = bundle.bundle_id.to_string();
            let created_at = match state.store.get(coll, &id).await? {
                Some(bytes) => decode::<StoredBundle>(&bytes)?.created_at,
                None => {
                    if bundles(state, game_id).await?.len() >= MAX_CONFIG_ENTRIES {
                        return Err(ServiceError::invalid(
                            "bundles",
                            format!("at most {MAX_CONFIG_ENTRIES} bundles"),
                        ));
                    }
                    Utc::now()
                }
            };
            let others = bundles(state, game_id).await?;
            let taken = products_taken(&bundle, &handle.view().items, &others);
            if !taken.is_empty() {
                return Err(ServiceError::Conflicts(taken));
            }
            let stored = StoredBundle {
                created_at,
                bundle: bundle.clone(),
            };
            recorded.put_all(coll, vec![(id, encode(&stored)?)]).await?;
            Ok(Committed::changed(
                bundle,
                GameChange::Bundles(bundles(state, game_id).await?),
            ))
        })
        .await
}

/// The store products of `bundle` that a live item or another bundle already sells under
/// (a product pays for one thing only), each as a field error naming its store.
fn products_taken(bundle: &Bundle, items: &[Item], bundles: &[Bundle]) -> Vec<FieldError> {
    let others = bundles.iter().filter(|b| b.bundle_id != bundle.bundle_id);
    let index = product_index(items, others);
    bundle
        .store_products
        .iter()
        .filter_map(|(store, product)| {
            let owner = index.get(&(store, product))?.first()?;
            Some(FieldError::new(
                product_field(store),
                format!("`{product}` already pays for {owner}"),
            ))
        })
        .collect()
}

/// Deletes a bundle.
pub async fn delete_bundle(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    bundle_id: Uuid,
) -> ServiceResult<()> {
    let game_id = handle.view().game.game_id;
    let audit = audit_of(
        handle,
        "bundle.delete",
        ObjectRef::new("bundle", bundle_id),
        Watched::new(bundles_collection(handle.view().game.game_id), bundle_id),
    );
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            if !recorded
                .delete(bundles_collection(game_id), &bundle_id.to_string())
                .await?
            {
                return Err(ServiceError::NotFound("bundle"));
            }
            Ok(Committed::changed(
                (),
                GameChange::Bundles(bundles(state, game_id).await?),
            ))
        })
        .await
}

/// The game's experiments, oldest first (the first one prices offers).
pub async fn experiments(state: &Services, game_id: Uuid) -> ServiceResult<Vec<Experiment>> {
    match state.store.get(config(game_id), "experiments").await? {
        Some(bytes) => Ok(decode(&bytes)?),
        None => Ok(Vec::new()),
    }
}

/// Adds an experiment.
pub async fn add_experiment(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    exp: Experiment,
) -> ServiceResult<Experiment> {
    let mut e = Errors::default();
    validate_experiment(&exp, &mut e);
    e.finish(()).map_err(ServiceError::Validation)?;
    let game_id = handle.view().game.game_id;
    let audit = audit_of(
        handle,
        "experiment.add",
        ObjectRef::new("experiment", exp.experiment_id),
        config_doc(handle, "experiments"),
    );
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            let mut all = experiments(state, game_id).await?;
            if all.len() >= MAX_CONFIG_ENTRIES {
                return Err(ServiceError::invalid("experiments", "too many experiments"));
            }
            all.push(exp.clone());
            recorded
                .put_all(config(game_id), vec![("experiments".into(), encode(&all)?)])
                .await?;
            Ok(Committed::changed(exp, GameChange::Experiments(all)))
        })
        .await
}

/// Removes an experiment: offers are priced by the next oldest one, or by none.
pub async fn delete_experiment(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    experiment_id: Uuid,
) -> ServiceResult<()> {
    let game_id = handle.view().game.game_id;
    let audit = audit_of(
        handle,
        "experiment.delete",
        ObjectRef::new("experiment", experiment_id),
        config_doc(handle, "experiments"),
    );
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            let mut all = experiments(state, game_id).await?;
            let before = all.len();
            all.retain(|x| x.experiment_id != experiment_id);
            if all.len() == before {
                return Err(ServiceError::NotFound("experiment"));
            }
            recorded
                .put_all(config(game_id), vec![("experiments".into(), encode(&all)?)])
                .await?;
            Ok(Committed::changed((), GameChange::Experiments(all)))
        })
        .await
}

/// The game's kill switch: level 0 since the game's creation when never set.
pub async fn kill_switch(state: &Services, game: &Game) -> ServiceResult<KillSwitch> {
    match state.store.get(config(game.game_id), "kill_switch").await? {
        Some(bytes) => Ok(decode(&bytes)?),
        None => Ok(KillSwitch {
            updated_at: game.created_at,
            ..KillSwitch::default()
        }),
    }
}

/// Sets the kill switch: stored (where the wallet step reads it too), applied to this
/// node's actor, then broadcast to every node and their sockets.
pub async fn set_kill_switch(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    level: u8,
    reason: String,
) -> ServiceResult<KillSwitch> {
    let Ok(level) = KillLevel::try_from(level) else {
        return Err(ServiceError::invalid("level", "between 0 and 3"));
    };
    if reason.chars().count() > 500 {
        return Err(ServiceError::invalid("reason", "at most 500 characters"));
    }
    let game_id = handle.view().game.game_id;
    let audit = audit_of(
        handle,
        "kill_switch.set",
        ObjectRef::new("kill_switch", handle.view().game.game_id),
        config_doc(handle, "kill_switch"),
    );
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            let ks = KillSwitch {
                level,
                reason,
                updated_at: Utc::now(),
            };
            // The record first, then the level the wallet step reads, so a failure in
            // between (answered 503, safe to retry) never leaves the wallet enforcing a
            // level the record does not show.
            recorded
                .put_all(config(game_id), vec![("kill_switch".into(), encode(&ks)?)])
                .await?;
            state.store.set_kill_level(game_id, level.as_u8()).await?;
            Ok(Committed::changed(ks.clone(), GameChange::KillSwitch(ks)))
        })
        .await
}
