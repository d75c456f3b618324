//! Games: creation, the studio's list, and updates (mode, guardrails, launch). Loading a game,
//! with the studio check every access needs, is [`crate::service::access`]'s.

use std::collections::HashSet;

use offer_actors::{GameChange, GameConfig, GameHandle};
use offer_domain::audit::{ChangedBy, ObjectRef};
use offer_domain::catalogue::{Item, ItemInput, recompute_values};
use offer_domain::currency::Currency;
use offer_domain::game::{Game, Guardrails, GuardrailsPatch, Mode, validate_currencies};
use offer_domain::learning::{LearnerConfig, LearnerConfigPatch};
use offer_domain::offer::KillSwitch;
use offer_domain::product_grant::product_index;
use offer_domain::product_ids::field as product_field;
use offer_domain::validation::{Errors, FieldError};
use uuid::Uuid;

use crate::service::audit::{Audit, Watched, audited};
use crate::service::write::Committed;
use crate::service::{ServiceError, ServiceResult, Services, game::items, game::offer_config};
use crate::store::Collection;
use crate::store::codec::{decode, encode};
use offer_domain::environment::Environment;

/// Most items a game may be created with inline; larger catalogues use the bulk endpoint.
pub const MAX_INLINE_ITEMS: usize = 20;

/// Collection of game records (deployment-wide, by id).
pub(in crate::service) fn games_collection() -> Collection {
    Collection::global("games")
}

/// A page of a studio's games ordered by id: at most `limit` games after `cursor`, and the
/// cursor of the next page (`None` on the last). Reads the deployment's game records, so
/// its cost grows with the number of games, not with their catalogues.
pub async fn list(
    state: &Services,
    studio_id: &str,
    cursor: Option<Uuid>,
    limit: usize,
) -> ServiceResult<(Vec<Game>, Option<Uuid>)> {
    let mut games = Vec::new();
    for (_, bytes) in state.store.list(games_collection()).await? {
        let game: Game = decode(&bytes)?;
        if game.studio_id == studio_id && cursor.is_none_or(|c| game.game_id > c) {
            games.push(game);
        }
    }
    games.sort_by_key(|g| g.game_id);
    let next = if games.len() > limit {
        games.truncate(limit);
        games.last().map(|g| g.game_id)
    } else {
        None
    };
    Ok((games, next))
}

/// Validated input of a new game.
pub struct NewGame {
    /// Display name.
    pub name: String,
    /// Genre of the calibration table.
    pub genre: String,
    /// Currencies.
    pub currencies: Vec<Currency>,
    /// Inline items (at most [`MAX_INLINE_ITEMS`]).
    pub items: Vec<ItemInput>,
    /// Guardrails (defaults when absent).
    pub guardrails: Guardrails,
}

/// A change to a game's record; absent fields stay as they are.
pub struct GamePatch {
    /// New display name.
    pub name: Option<String>,
    /// New genre of the calibration table.
    pub genre: Option<String>,
    /// Replaces the currencies; every item's value is recomputed.
    pub currencies: Option<Vec<Currency>>,
    /// Merged field by field into the stored guardrails.
    pub guardrails: Option<GuardrailsPatch>,
    /// Merged field by field into the stored learner settings.
    pub learner: Option<LearnerConfigPatch>,
}

/// Checks a genre against the calibration table.
fn check_genre(state: &Services, genre: &str, errors: &mut Errors) {
    if !state.genres.contains_key(genre) {
        let known: Vec<&str> = state.genres.keys().map(String::as_str).collect();
        errors.push(
            "genre",
            format!("unknown genre; one of {}", known.join(", ")),
        );
    }
}

/// Creates a game with its inline items; all or nothing.
pub async fn create(
    state: &Services,
    by: &ChangedBy,
    studio_id: &str,
    new: NewGame,
) -> ServiceResult<GameHandle> {
    let mut errors = Errors::default();
    errors.text("name", &new.name, offer_domain::validation::MAX_NAME_LEN);
    check_genre(state, &new.genre, &mut errors);
    validate_currencies(&new.currencies, &mut errors);
    let mut guardrails = new.guardrails;
    guardrails.validate(&mut errors);
    if new.items.len() > MAX_INLINE_ITEMS {
        errors.push(
            "items",
            format!("at most {MAX_INLINE_ITEMS} inline items; use the bulk endpoint for more"),
        );
    }
    let now = chrono::Utc::now();
    let mut items: Vec<Item> = Vec::with_capacity(new.items.len());
    // The request index of each item of `items`.
    let mut at: Vec<usize> = Vec::with_capacity(new.items.len());
    let mut seen = HashSet::new();
    for (i, input) in new.items.into_iter().enumerate() {
        if !seen.insert(input.item_id.clone()) {
            errors
                .0
                .push(FieldError::new("item_id", "duplicate item_id in this request").at(i));
        }
        match input.into_item(&new.currencies, None, now) {
            Ok(item) => {
                items.push(item);
                at.push(i);
            }
            Err(errs) => errors.0.extend(errs.into_iter().map(|e| e.at(i))),
        }
    }
    check_inline_products(&items, &at, &mut errors);
    errors.finish(()).map_err(ServiceError::Validation)?;
    recompute_values(&mut items, &new.currencies);
    let game = Game {
        game_id: Uuid::new_v4(),
        studio_id: studio_id.to_owned(),
        name: new.name,
        genre: new.genre,
        currencies: new.currencies,
        guardrails,
        mode: Mode::Shadow,
        learner: LearnerConfig::default(),
        launched_at: None,
        sandbox_launched_at: None,
        created_at: now,
        updated_at: now,
    };
    audited(
        &*state.store,
        by,
        audit_of(&game, "game.create"),
        async || {
            // Items first: a game record without its items never becomes visible.
            if !items.is_empty() {
                let entries = items
                    .iter()
                    .map(|i| Ok((i.item_id.clone(), encode(i)?)))
                    .collect::<ServiceResult<Vec<_>>>()?;
                state
                    .store
                    .put_all(Collection::game(game.game_id, "items"), entries)
                    .await?;
            }
            state
                .store
                .put_all(
                    games_collection(),
                    vec![(game.game_id.to_string(), encode(&game)?)],
                )
                .await?;
            Ok(())
        },
    )
    .await?;
    let config = GameConfig {
        game: Some(game.clone()),
        items,
        templates: offer_config::genre_templates(state, &game.genre),
        kill_switch: KillSwitch {
            updated_at: game.created_at,
            ..KillSwitch::default()
        },
        ..GameConfig::default()
    };
    Ok(state.actors.start_game(game, config))
}

/// A store product pays for one item only: inline items naming the same product of a store
/// are each refused (422 at their index).
fn check_inline_products(items: &[Item], at: &[usize], errors: &mut Errors) {
    let index = product_index(items, []);
    for (i, item) in items.iter().enumerate() {
        for (store, product) in item.store_products.iter() {
            let shared = index
                .get(&(store, product))
                .is_some_and(|owners| owners.len() > 1);
            if shared {
                errors.0.push(
                    FieldError::new(
                        product_field(store),
                        format!("`{product}` is named by another item of this request too"),
                    )
                    .at(at[i]),
                );
            }
        }
    }
}

/// Applies a patch to the game's record. Replacing the currencies recomputes every item's
/// value, and is refused while a live item still uses a currency it removes (that item could
/// never be saved again).
pub async fn patch(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    patch: GamePatch,
) -> ServiceResult<Game> {
    let audit = audit_of(&handle.view().game, "game.update");
    let game = audited(&*state.store, by, audit, async || {
        update(state, handle, |game| {
            let mut errors = Errors::default();
            if let Some(name) = &patch.name {
                errors.text("name", name, offer_domain::validation::MAX_NAME_LEN);
                game.name.clone_from(name);
            }
            if let Some(genre) = &patch.genre {
                check_genre(state, genre, &mut errors);
                game.genre.clone_from(genre);
            }
            if let Some(currencies) = &patch.currencies {
                validate_currencies(currencies, &mut errors);
                offer_domain::catalogue::check_currency_removal(
                    &handle.view().items,
                    currencies,
                    &mut errors,
                );
                game.currencies.clone_from(currencies);
            }
            if let Some(guardrails) = patch.guardrails.clone() {
                game.guardrails.merge(guardrails);
                game.guardrails.validate(&mut errors);
            }
            if let Some(learner) = patch.learner.clone() {
                game.learner.merge(learner);
                game.learner.validate(&mut errors);
            }
            game.check_mode_guardrails(&mut errors);
            errors.finish(true).map_err(ServiceError::Validation)
        })
        .await
    })
    .await?;
    if patch.currencies.is_some() {
        items::revalue(state, handle).await?;
    }
    Ok(game)
}

/// Changes the operating mode, by the promotion rules of [`Mode::promote_to`].
pub async fn set_mode(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    to: Mode,
) -> ServiceResult<Game> {
    let audit = audit_of(&handle.view().game, "game.mode");
    audited(&*state.store, by, audit, async || {
        update(state, handle, |game| match game.mode.promote_to(to) {
            Err(refusal) => Err(ServiceError::Conflict(refusal.to_string())),
            Ok(None) => Ok(false),
            Ok(Some(mode)) => {
                game.mode = mode;
                let mut errors = Errors::default();
                game.check_mode_guardrails(&mut errors);
                errors.finish(true).map_err(|_| {
                    ServiceError::invalid(
                        "mode",
                        "Autonomous mode needs a max_price_cents guardrail",
                    )
                })
            }
        })
        .await
    })
    .await
}

/// Merges a guardrails patch into the game's record.
pub async fn patch_guardrails(
    state: &Services,
    by: &ChangedBy,
    handle: &GameHandle,
    patch: GuardrailsPatch,
) -> ServiceResult<Game> {
    let audit = audit_of(&handle.view().game, "game.guardrails");
    audited(&*state.store, by, audit, async || {
        update(state, handle, |game| {
            let mut errors = Errors::default();
            game.guardrails.merge(patch.clone());
            game.guardrails.validate(&mut errors);
            game.check_mode_guardrails(&mut errors);
            errors.finish(true).map_err(ServiceError::Validation)
        })
        .await
    })
    .await
}

/// The audit of a change of `game`'s record.
fn audit_of(game: &Game, action: &'static str) -> Audit {
    Audit::of_game(
        &game.studio_id,
        game.game_id,
        action,
        ObjectRef::new("game", game.game_id),
        vec![Watched::new(games_collection(), game.game_id)],
    )
}

/// Records the game's launch at its first `session_start` of the environment, live or
/// imported: `launched_at` is the earliest one ever seen, so history imported after the
/// game went live moves it back. The holdout share is a constant of the engine, so nothing
/// can change it.
pub async fn mark_launched(
    state: &Services,
    game: &GameHandle,
    env: Environment,
    at: chrono::DateTime<chrono::Utc>,
) -> ServiceResult<()> {
    let launched = |g: &Game| match env {
        Environment::Production => g.launched_at,
        Environment::Sandbox => g.sandbox_launched_at,
    };
    let settled = |g: &Game| launched(g).is_some_and(|first| first <= at);
    if settled(&game.view().game) {
        return Ok(());
    }
    update(state, game, |g| {
        if settled(g) {
            return Ok(false);
        }
        match env {
            Environment::Production => g.launched_at = Some(at),
            Environment::Sandbox => g.sandbox_launched_at = Some(at),
        }
        Ok(true)
    })
    .await
    .map(|_| ())
}

/// Changes the game record: under the game's write lock, starting from the store's current
/// copy, written back with compare-and-swap so that a concurrent writer on another node is
/// never overwritten (its change is re-read and `change` runs again). `change` validates and
/// returns whether it changed anything; nothing is written when it did not.
async fn update<F>(state: &Services, handle: &GameHandle, mut change: F) -> ServiceResult<Game>
where
    F: FnMut(&mut Game) -> ServiceResult<bool>,
{
    let id = handle.view().game.game_id.to_string();
    state
        .commit(handle, async || {
            for _ in 0..5 {
                let stored = state
                    .store
                    .get(games_collection(), &id)
                    .await?
                    .ok_or(ServiceError::NotFound("game"))?;
                let mut game: Game = decode(&stored)?;
                if !change(&mut game)? {
                    return Ok(Committed::unchanged(game));
                }
                game.updated_at = chrono::Utc::now();
                if state
                    .store
                    .compare_and_swap(games_collection(), &id, Some(&stored), encode(&game)?)
                    .await?
                {
                    return Ok(Committed::changed(
                        game.clone(),
                        GameChange::Game(Box::new(game)),
                    ));
                }
            }
            Err(ServiceError::Conflict(
                "the game kept changing concurrently; retry".into(),
            ))
        })
        .await
}
