//! Catalogue writes: create, bulk upsert, patch and soft delete. Every write recomputes the
//! value of every affected item (a pack's price changes the face rate of its currency, hence
//! the value of every pack and every item priced in it) and writes all of them in one atomic
//! store step.
//!
//! Values depend on the whole catalogue, so a write reads the whole catalogue first. Across
//! nodes this read-modify-write is a compare-and-swap on the game's catalogue version: each
//! attempt reads the version, then the items, computes, and writes the items together with
//! the next version only if the version is still the one it read
//! ([`crate::store::Documents::put_all_versioned`]); a writer that lost the race starts again
//! from a fresh read (at most [`MAX_ATTEMPTS`] times, then 503). Two nodes writing one game at
//! once therefore never compute values from each other's stale catalogue, and two nodes
//! creating one item give one 201 and one 409. (On one node the game's write lock already
//! keeps writers apart.) The audit record of a studio's change is written in that same
//! atomic step, so a write that lost the race records nothing.

use std::collections::{HashMap, HashSet};

use chrono::Utc;
use offer_actors::{GameChange, GameHandle};
use offer_domain::audit::{ChangedBy, ObjectRef};
use offer_domain::catalogue::{
    Item, ItemInput, ItemPatch, MAX_BULK_ITEMS, apply_patch, recompute_values,
};
use offer_domain::game::Game;
use offer_domain::offer::Bundle;
use offer_domain::product_grant::{ProductOwner, product_index};
use offer_domain::product_ids::field as product_field;
use offer_domain::validation::FieldError;
use uuid::Uuid;

use crate::service::audit::{Audit, Recorded, Watched};
use crate::service::write::Committed;
use crate::service::{ServiceError, ServiceResult, Services, game::assets, game::offer_config};
use crate::store::codec::{decode, encode};
use crate::store::{Collection, VersionedWrite};

fn collection(game_id: Uuid) -> Collection {
    Collection::game(game_id, "items")
}

/// Where a game's catalogue version lives: a counter, raised by every catalogue write.
fn versions(game_id: Uuid) -> Collection {
    Collection::game(game_id, "versions")
}

/// The id of the catalogue's version document.
const CATALOGUE_VERSION: &str = "catalogue";

/// Attempts of one catalogue write racing writers on other nodes before it answers 503.
pub const MAX_ATTEMPTS: usize = 16;

/// The catalogue as read for a change: the version it was read at, and every item.
struct Read {
    version: Option<Vec<u8>>,
    items: HashMap<String, Item>,
}

/// Reads the version first, then the items: a write landing in between raises the version,
/// so the compare-and-swap of this change fails rather than overwrite it.
async fn read(state: &Services, game_id: Uuid) -> ServiceResult<Read> {
    let version = state
        .store
        .get(versions(game_id), CATALOGUE_VERSION)
        .await?;
    let items = by_id(load_all(state, game_id).await?);
    Ok(Read { version, items })
}

/// Counts an attempt that lost the race to another node's write: the caller reads again,
/// unless it already tried [`MAX_ATTEMPTS`] times (then 503: retry later).
fn lost_race(attempts: &mut usize) -> ServiceResult<()> {
    *attempts += 1;
    if *attempts < MAX_ATTEMPTS {
        return Ok(());
    }
    tracing::warn!("a catalogue write lost the race {MAX_ATTEMPTS} times in a row");
    Err(ServiceError::Unavailable)
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
    by: &ChangedBy,
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
    let ids: Vec<&str> = inputs
        .iter()
        .filter_map(|input| input.as_ref().ok().map(|i| i.item_id.as_str()))
        .collect();
    let audit = match ids.as_slice() {
        [one] => audit_of(&game, "item.upsert", one, &[one]),
        many => audit_of(&game, "item.bulk_upsert", "*", many),
    };
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            let game = &game;
            let inputs = &inputs;
            let (order, items) = retry(state, game, Some(&recorded), |mut items| async move {
                let now = Utc::now();
                let mut errors = Vec::new();
                let mut deleted = Vec::new();
                let mut seen = HashSet::new();
                let (mut created, mut updated) = (0, 0);
                let mut order = Vec::with_capacity(inputs.len());
                for (i, input) in inputs.iter().cloned().enumerate() {
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
                    let existing = items.get(&input.item_id);
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
                            items.insert(item.item_id.clone(), item);
                        }
                        Err(errs) => errors.extend(errs.into_iter().map(|e| e.at(i))),
                    }
                }
                let bundles = offer_config::bundles(state, game.game_id).await?;
                let written: Vec<(Option<usize>, &str)> = order
                    .iter()
                    .map(|(i, id)| (Some(*i), id.as_str()))
                    .collect();
                check_products(&items, &written, &bundles, &mut errors, &mut deleted);
                for (i, id) in &order {
                    if let Some(asset) = items.get(id).and_then(|item| item.image.as_deref())
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
                let changed = order.iter().map(|(_, id)| id.clone()).collect();
                Ok(Change {
                    items,
                    changed,
                    output: (created, updated, order),
                })
            })
            .await?;
            let (created, updated, order) = order;
            let by_id: HashMap<&str, &Item> =
                items.iter().map(|i| (i.item_id.as_str(), i)).collect();
            let written = order
                .iter()
                .filter_map(|(_, id)| by_id.get(id.as_str()).map(|i| (*i).clone()))
                .collect();
            let upserted = Upserted {
                created,
                updated,
                items: written,
            };
            Ok(Committed::changed(upserted, GameChange::Items(items)))
        })
        .await
}

/// The audit of a change of the items `ids` of `game`, the object being `object` (an item's
/// id, or `*` for several).
fn audit_of(game: &Game, action: &'static str, object: &str, ids: &[&str]) -> Audit {
    Audit::of_game(
        &game.studio_id,
        game.game_id,
        action,
        ObjectRef::new("item", object),
        ids.iter()
            .map(|id| Watched::new(collection(game.game_id), id))
            .collect(),
    )
}

/// The rule that a store product pays for one thing only, on the items of a change
/// (`written`: their index in the request, if a list, and id) against the catalogue as
/// changed and the game's bundles. A product another item of the same request names too is
/// a field error of the request (422); one an item or bundle already stored holds is a
/// conflict with the state (409).
fn check_products(
    items: &HashMap<String, Item>,
    written: &[(Option<usize>, &str)],
    bundles: &[Bundle],
    errors: &mut Vec<FieldError>,
    taken: &mut Vec<FieldError>,
) {
    let index = product_index(items.values(), bundles);
    let in_request: HashSet<&str> = written.iter().map(|(_, id)| *id).collect();
    for (at, id) in written {
        let Some(item) = items.get(*id) else {
            continue;
        };
        for (store, product) in item.store_products.iter() {
            let others = index
                .get(&(store, product))
                .into_iter()
                .flatten()
                .filter(|owner| **owner != ProductOwner::Item(id));
            for other in others {
                let (list, reason) = match other {
                    ProductOwner::Item(other) if in_request.contains(other) => (
                        &mut *errors,
                        format!("`{product}` is named by item `{other}` of this request too"),
                    ),
                    owner => (&mut *taken, format!("`{product}` already pays for {owner}")),
                };
                let error = FieldError::new(product_field(store), reason);
                list.push(match at {
                    Some(i) => error.at(*i),
                    None => error,
                });
            }
        }
    }
}

/// Applies a patch to one live item.
pub async fn patch(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    item_id: &str,
    patch: ItemPatch,
) -> ServiceResult<Item> {
    let game = handle.view().game.clone();
    let audit = audit_of(&game, "item.patch", item_id, &[item_id]);
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            let game = &game;
            let patch = &patch;
            let ((), items) = retry(state, game, Some(&recorded), |mut items| async move {
                let current = items
                    .get(item_id)
                    .filter(|i| i.is_live())
                    .cloned()
                    .ok_or(ServiceError::NotFound("item"))?;
                let item = apply_patch(current, patch.clone(), &game.currencies, Utc::now())
                    .map_err(ServiceError::Validation)?;
                if let Some(asset) = item.image.as_deref()
                    && !assets::exists(state, game.game_id, asset).await?
                {
                    return Err(ServiceError::invalid(
                        "image",
                        "no such asset in this game's library",
                    ));
                }
                items.insert(item.item_id.clone(), item);
                if patch.store_products.is_some() {
                    let bundles = offer_config::bundles(state, game.game_id).await?;
                    let (mut errors, mut taken) = (Vec::new(), Vec::new());
                    check_products(
                        &items,
                        &[(None, item_id)],
                        &bundles,
                        &mut errors,
                        &mut taken,
                    );
                    // One item cannot clash with itself: `errors` stays empty.
                    if !taken.is_empty() {
                        return Err(ServiceError::Conflicts(taken));
                    }
                }
                Ok(Change::of_one(items, item_id))
            })
            .await?;
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
    by: &ChangedBy,
    handle: &GameHandle,
    item_id: &str,
) -> ServiceResult<()> {
    let game = handle.view().game.clone();
    let audit = audit_of(&game, "item.delete", item_id, &[item_id]);
    let recorded = Recorded::new(&*state.store, by, audit)?;
    state
        .commit(handle, async || {
            let ((), items) = retry(state, &game, Some(&recorded), |mut items| async move {
                let item = items
                    .get_mut(item_id)
                    .filter(|i| i.is_live())
                    .ok_or(ServiceError::NotFound("item"))?;
                let now = Utc::now();
                item.deleted_at = Some(now);
                item.updated_at = now;
                Ok(Change::of_one(items, item_id))
            })
            .await?;
            Ok(Committed::changed((), GameChange::Items(items)))
        })
        .await
}

/// Recomputes values after a game's currencies changed.
pub async fn revalue(state: &Services, handle: &GameHandle) -> ServiceResult<()> {
    let game = handle.view().game.clone();
    state
        .commit(handle, async || {
            let ((), items) = retry(state, &game, None, |items| async move {
                Ok(Change {
                    items,
                    changed: HashSet::new(),
                    output: (),
                })
            })
            .await?;
            Ok(Committed::changed((), GameChange::Items(items)))
        })
        .await
}

/// What one attempt of a catalogue change made of the catalogue it read.
struct Change<T> {
    /// The whole catalogue, changed.
    items: HashMap<String, Item>,
    /// The ids of the items the change wrote (those whose value moves are added later).
    changed: HashSet<String>,
    /// What the change answers once written.
    output: T,
}

impl Change<()> {
    /// A change of the one item `item_id`.
    fn of_one(items: HashMap<String, Item>, item_id: &str) -> Self {
        Change {
            items,
            changed: std::iter::once(item_id.to_owned()).collect(),
            output: (),
        }
    }
}

/// The compare-and-swap loop of every catalogue write: reads the catalogue, lets `change`
/// work on it, and writes the recomputed result (with the audit record of `recorded`, in the
/// same atomic step) if no other node wrote in between; else reads again (see
/// [`lost_race`]). Returns the change's output and the whole catalogue as written.
async fn retry<T, F, Fut>(
    state: &Services,
    game: &Game,
    recorded: Option<&Recorded<'_>>,
    mut change: F,
) -> ServiceResult<(T, Vec<Item>)>
where
    F: FnMut(HashMap<String, Item>) -> Fut,
    Fut: Future<Output = ServiceResult<Change<T>>>,
{
    let mut attempts = 0;
    loop {
        let Read { version, items } = read(state, game.game_id).await?;
        let Change {
            items,
            mut changed,
            output,
        } = change(items).await?;
        match write_recomputed(state, (game, recorded), version, items, &mut changed).await? {
            Some(items) => return Ok((output, items)),
            None => lost_race(&mut attempts)?,
        }
    }
}

fn by_id(items: Vec<Item>) -> HashMap<String, Item> {
    items.into_iter().map(|i| (i.item_id.clone(), i)).collect()
}

/// Recomputes every value and writes the changed items (the given ones plus those whose
/// value moved) with the next catalogue version, and the change's audit record when it is
/// `recorded`, in one atomic step, if the catalogue is still at `version`. Returns the whole
/// catalogue for the game's actor, or `None` when another node's write came first (nothing
/// was written: read again).
async fn write_recomputed(
    state: &Services,
    (game, recorded): (&Game, Option<&Recorded<'_>>),
    version: Option<Vec<u8>>,
    all: HashMap<String, Item>,
    changed: &mut HashSet<String>,
) -> ServiceResult<Option<Vec<Item>>> {
    let mut items: Vec<Item> = all.into_values().collect();
    changed.extend(recompute_values(&mut items, &game.currencies));
    for item in &mut items {
        item.image_url = item.image.as_ref().map(|a| assets::url(game.game_id, a));
    }
    let entries = items
        .iter()
        .filter(|i| changed.contains(&i.item_id))
        .map(|i| Ok((i.item_id.clone(), encode(i)?)))
        .collect::<ServiceResult<Vec<_>>>()?;
    if entries.is_empty() {
        return Ok(Some(items));
    }
    let next: u64 = match &version {
        Some(bytes) => decode::<u64>(bytes)?.saturating_add(1),
        None => 1,
    };
    let write = VersionedWrite {
        version: versions(game.game_id),
        version_id: CATALOGUE_VERSION,
        expected: version.as_deref(),
        new_version: encode(&next)?,
        coll: collection(game.game_id),
        entries,
    };
    let written = match recorded {
        Some(recorded) => recorded.put_all_versioned(write).await?,
        None => state.store.put_all_versioned(write).await?,
    };
    Ok(written.then_some(items))
}
