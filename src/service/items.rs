//! Catalogue writes: create, bulk upsert, patch and soft delete. Every write recomputes the
//! value of every affected item (a pack's price changes the face rate of its currency, hence
//! the value of every pack and every item priced in it) and writes all of them in one atomic
//! store step.

use std::collections::{HashMap, HashSet};

use chrono::Utc;
use offer_actors::{GameChange, GameHandle};
use offer_domain::catalogue::{
    Item, ItemInput, ItemPatch, MAX_BULK_ITEMS, apply_patch, recompute_values,
};
use offer_domain::game::Game;
use offer_domain::validation::FieldError;
use uuid::Uuid;

use super::write::Committed;
use super::{ServiceError, ServiceResult, Services, assets};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "items")
}

/// Every stored item of a game, soft-deleted ones included.
pub async fn load_all(state: &Services, game_id: Uuid) -> ServiceResult<Vec<Item>> {
    state
        .store
        .list(collection(game_id))
        .await?
        .iter()
        .map(|(_, bytes)| Ok(decode(bytes)?))
        .collect()
}

/// Outcome of an upsert.
pub struct Upserted {
    /// Items that did not exist.
    pub created: usize,
    /// Items that existed (restored if they were soft-deleted).
    pub updated: usize,
    /// The written items, in request order.
    pub items: Vec<Item>,
}

/// Whether an existing id is an error (single add) or an update (bulk).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// `409 conflict`.
    Refuse,
    /// Update the stored item.
    Update,
}

/// An item of a request: read, or the field errors that kept it from being read (an
/// unknown category, a string where a number belongs), so that one answer reports every
/// problem of every item.
pub type ItemEntry = Result<ItemInput, Vec<FieldError>>;

/// Validates every input (all errors, each with its index, unreadable entries included)
/// and writes them all or none.
pub async fn upsert(
    state: &Services,
    handle: &GameHandle,
    inputs: Vec<ItemEntry>,
    on_conflict: OnConflict,
) -> ServiceResult<Upserted> {
    if inputs.len() > MAX_BULK_ITEMS {
        return Err(ServiceError::PayloadTooLarge(format!(
            "at most {MAX_BULK_ITEMS} items per call, got {}",
            inputs.len()
        )));
    }
    let game = handle.view().game.clone();
    state
        .commit(handle, async || {
            let mut all: HashMap<String, Item> = load_all(state, game.game_id)
                .await?
                .into_iter()
                .map(|i| (i.item_id.clone(), i))
                .collect();
            let now = Utc::now();
            let mut errors = Vec::new();
            let mut deleted = Vec::new();
            let mut seen = HashSet::new();
            let (mut created, mut updated) = (0, 0);
            let mut order = Vec::with_capacity(inputs.len());
            for (i, input) in inputs.into_iter().enumerate() {
                let input = match input {
                    Ok(input) => input,
                    Err(unreadable) => {
                        errors.extend(unreadable.into_iter().map(|e| e.at(i)));
                        continue;
                    }
                };
                if !seen.insert(input.item_id.clone()) {
                    errors.push(
                        FieldError::new("item_id", "duplicate item_id in this request").at(i),
                    );
                    continue;
                }
                let existing = all.get(&input.item_id);
                if existing.is_some_and(|e| !e.is_live()) && !input.restore {
                    deleted.push(FieldError::new("item_id", "deleted").at(i));
                }
                if existing.is_some() && on_conflict == OnConflict::Refuse {
                    return Err(ServiceError::Conflict(format!(
                        "item `{}` already exists; PATCH it or use the bulk upsert",
                        input.item_id
                    )));
                }
                match input.into_item(&game.currencies, existing, now) {
                    Ok(item) => {
                        if existing.is_some() {
                            updated += 1;
                        } else {
                            created += 1;
                        }
                        order.push((i, item.item_id.clone()));
                        all.insert(item.item_id.clone(), item);
                    }
                    Err(errs) => errors.extend(errs.into_iter().map(|e| e.at(i))),
                }
            }
            for (i, id) in &order {
                if let Some(asset) = all.get(id).and_then(|item| item.image.as_deref())
                    && !assets::exists(state, game.game_id, asset).await?
                {
                    errors.push(
                        FieldError::new("image", "no such asset in this game's library").at(*i),
                    );
                }
            }
            if !errors.is_empty() {
                return Err(ServiceError::Validation(errors));
            }
            if !deleted.is_empty() {
                return Err(ServiceError::Conflicts(deleted));
            }
            let mut changed: HashSet<String> = order.iter().map(|(_, id)| id.clone()).collect();
            let must_be_new = match (on_conflict, order.as_slice()) {
                (OnConflict::Refuse, [(_, id)]) => Some(id.as_str()),
                _ => None,
            };
            let items = write_recomputed(state, &game, all, &mut changed, must_be_new).await?;
            let by_id: HashMap<&str, &Item> =
                items.iter().map(|i| (i.item_id.as_str(), i)).collect();
            let written = order
                .iter()
                .filter_map(|(_, id)| by_id.get(id.as_str()).map(|i| (*i).clone()))
                .collect();
            Ok(Committed::changed(
                Upserted {
                    created,
                    updated,
                    items: written,
                },
                GameChange::Items(items),
            ))
        })
        .await
}

/// Applies a patch to one live item.
pub async fn patch(
    state: &Services,
    handle: &GameHandle,
    item_id: &str,
    patch: ItemPatch,
) -> ServiceResult<Item> {
    let game = handle.view().game.clone();
    state
        .commit(handle, async || {
            let mut all = by_id(load_all(state, game.game_id).await?);
            let current = all
                .get(item_id)
                .filter(|i| i.is_live())
                .cloned()
                .ok_or(ServiceError::NotFound("item"))?;
            let item = apply_patch(current, patch, &game.currencies, Utc::now())
                .map_err(ServiceError::Validation)?;
            if let Some(asset) = item.image.as_deref()
                && !assets::exists(state, game.game_id, asset).await?
            {
                return Err(ServiceError::invalid(
                    "image",
                    "no such asset in this game's library",
                ));
            }
            all.insert(item.item_id.clone(), item);
            let mut changed = std::iter::once(item_id.to_owned()).collect();
            let items = write_recomputed(state, &game, all, &mut changed, None).await?;
            let patched = items
                .iter()
                .find(|i| i.item_id == item_id)
                .cloned()
                .ok_or_else(|| ServiceError::Internal("patched item vanished".into()))?;
            Ok(Committed::changed(patched, GameChange::Items(items)))
        })
        .await
}

/// Soft-deletes one live item; it never appears in offers again.
pub async fn soft_delete(
    state: &Services,
    handle: &GameHandle,
    item_id: &str,
) -> ServiceResult<()> {
    let game = handle.view().game.clone();
    state
        .commit(handle, async || {
            let mut all = by_id(load_all(state, game.game_id).await?);
            let item = all
                .get_mut(item_id)
                .filter(|i| i.is_live())
                .ok_or(ServiceError::NotFound("item"))?;
            let now = Utc::now();
            item.deleted_at = Some(now);
            item.updated_at = now;
            let mut changed = std::iter::once(item_id.to_owned()).collect();
            let items = write_recomputed(state, &game, all, &mut changed, None).await?;
            Ok(Committed::changed((), GameChange::Items(items)))
        })
        .await
}

/// Recomputes values after a game's currencies changed.
pub async fn revalue(state: &Services, handle: &GameHandle) -> ServiceResult<()> {
    let game = handle.view().game.clone();
    state
        .commit(handle, async || {
            let all = by_id(load_all(state, game.game_id).await?);
            let items = write_recomputed(state, &game, all, &mut HashSet::new(), None).await?;
            Ok(Committed::changed((), GameChange::Items(items)))
        })
        .await
}

fn by_id(items: Vec<Item>) -> HashMap<String, Item> {
    items.into_iter().map(|i| (i.item_id.clone(), i)).collect()
}

/// Recomputes every value and writes the changed items (the given ones plus those whose
/// value moved) in one atomic step. Returns the whole catalogue for the game's actor.
///
/// `created` names an item that must not exist yet (single add): it is written first with
/// `insert_new`, so two nodes creating the same id at once give one 201 and one 409.
async fn write_recomputed(
    state: &Services,
    game: &Game,
    all: HashMap<String, Item>,
    changed: &mut HashSet<String>,
    created: Option<&str>,
) -> ServiceResult<Vec<Item>> {
    let mut items: Vec<Item> = all.into_values().collect();
    changed.extend(recompute_values(&mut items, &game.currencies));
    for item in &mut items {
        item.image_url = item.image.as_ref().map(|a| assets::url(game.game_id, a));
    }
    if let Some(new) = created.and_then(|id| items.iter().find(|i| i.item_id == id)) {
        if !state
            .store
            .insert_new(collection(game.game_id), &new.item_id, encode(new)?)
            .await?
        {
            return Err(ServiceError::Conflict(format!(
                "item `{}` already exists; PATCH it or use the bulk upsert",
                new.item_id
            )));
        }
        changed.remove(&new.item_id);
    }
    let entries = items
        .iter()
        .filter(|i| changed.contains(&i.item_id))
        .map(|i| Ok((i.item_id.clone(), encode(i)?)))
        .collect::<ServiceResult<Vec<_>>>()?;
    if !entries.is_empty() {
        state
            .store
            .put_all(collection(game.game_id), entries)
            .await?;
    }
    Ok(items)
}
