//! Games: creation, loading (with the studio check every access needs) and updates.

use offer_actors::{GameChange, GameConfig, GameHandle};
use offer_domain::catalogue::{Item, ItemInput, recompute_values};
use offer_domain::game::{Currency, Game, Guardrails, validate_currencies};
use offer_domain::validation::{Errors, FieldError};
use uuid::Uuid;

use crate::auth::{decode, encode};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::{BusMessage, Collection};

/// Most items the creation wizard may carry inline (spec 8).
pub const MAX_INLINE_ITEMS: usize = 20;

/// Collection of game records (deployment-wide, by id).
pub fn games_collection() -> Collection {
    Collection::global("games")
}

/// The game's actor, started from the store on first use. Does not check the studio: use
/// [`for_studio`] for every request that names a game.
pub async fn load(state: &AppState, game_id: Uuid) -> ApiResult<GameHandle> {
    if let Some(handle) = state.actors.game(&game_id) {
        return Ok(handle);
    }
    let Some(bytes) = state
        .store
        .get(games_collection(), &game_id.to_string())
        .await?
    else {
        return Err(ApiError::NotFound("game"));
    };
    let game: Game = decode(&bytes)?;
    let config = load_config(state, &game).await?;
    Ok(state.actors.start_game(game, config))
}

/// Everything a game actor holds, read from the store.
pub async fn load_config(state: &AppState, game: &Game) -> ApiResult<GameConfig> {
    let game_id = game.game_id;
    let (items, templates, bundles, experiments, kill_switch, approvals) = tokio::try_join!(
        super::items::load_all(state, game_id),
        super::offer_config::templates(state, game),
        super::offer_config::bundles(state, game_id),
        super::offer_config::experiments(state, game_id),
        super::offer_config::kill_switch(state, game_id),
        super::approvals::definitions(state, game_id),
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
        bandit: offer_domain::bandit::BanditState::default(),
    })
}

/// The game, if it belongs to `studio_id`; another studio's game is a 404, exactly as an
/// absent one.
pub async fn for_studio(state: &AppState, studio_id: &str, game_id: Uuid) -> ApiResult<GameHandle> {
    let handle = load(state, game_id).await?;
    if handle.view().game.studio_id == studio_id {
        Ok(handle)
    } else {
        Err(ApiError::NotFound("game"))
    }
}

/// Reloads a game this node serves after another node changed it (bus message).
pub async fn reload(state: &AppState, game_id: Uuid) -> ApiResult<()> {
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
    handle
        .change(GameChange::Reload(Box::new(config)))
        .await
        .map_err(actor_err)
}

/// Maps an actor failure (a stopped actor: only during shutdown) to a 503.
pub fn actor_err(e: offer_actors::ActorError) -> ApiError {
    tracing::warn!(error = %e, "actor call failed");
    ApiError::Unavailable
}

/// Validated input of a new game.
pub struct NewGame {
    /// Display name.
    pub name: String,
    /// Genre of the calibration table.
    pub genre: String,
    /// Currencies.
    pub currencies: Vec<Currency>,
    /// Inline items (at most 20).
    pub items: Vec<ItemInput>,
    /// Guardrails (defaults when absent).
    pub guardrails: Guardrails,
}

/// Checks a genre against the calibration table.
pub fn check_genre(state: &AppState, genre: &str, errors: &mut Errors) {
    if !state.genres.contains_key(genre) {
        let known: Vec<&str> = state.genres.keys().map(String::as_str).collect();
        errors.push(
            "genre",
            format!("unknown genre; one of {}", known.join(", ")),
        );
    }
}

/// Creates a game with its inline items; all or nothing.
pub async fn create(state: &AppState, studio_id: &str, new: NewGame) -> ApiResult<GameHandle> {
    let mut errors = Errors::default();
    errors.text("name", &new.name, offer_domain::game::MAX_NAME_LEN);
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
    let mut seen = std::collections::HashSet::new();
    for (i, input) in new.items.into_iter().enumerate() {
        if !seen.insert(input.item_id.clone()) {
            errors
                .0
                .push(FieldError::new("item_id", "duplicate item_id in this request").at(i));
        }
        match input.into_item(&new.currencies, None, now) {
            Ok(item) => items.push(item),
            Err(errs) => errors.0.extend(errs.into_iter().map(|e| e.at(i))),
        }
    }
    errors.finish(()).map_err(ApiError::Validation)?;
    recompute_values(&mut items, &new.currencies);
    let game = Game {
        game_id: Uuid::new_v4(),
        studio_id: studio_id.to_owned(),
        name: new.name,
        genre: new.genre,
        currencies: new.currencies,
        guardrails,
        mode: offer_domain::game::Mode::Shadow,
        launched_at: None,
        sandbox_launched_at: None,
        created_at: now,
        updated_at: now,
    };
    // Items first: a game record without its items never becomes visible.
    if !items.is_empty() {
        let entries = items
            .iter()
            .map(|i| Ok((i.item_id.clone(), encode(i)?)))
            .collect::<ApiResult<Vec<_>>>()?;
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
    let config = GameConfig {
        game: Some(game.clone()),
        items,
        templates: super::offer_config::genre_templates(state, &game.genre),
        ..GameConfig::default()
    };
    Ok(state.actors.start_game(game, config))
}

/// Changes the game record: under the game's write lock, starting from the store's current
/// copy, written back with compare-and-swap so that a concurrent writer on another node is
/// never overwritten (its change is re-read and `change` runs again). `change` validates and
/// returns whether it changed anything; nothing is written when it did not.
pub async fn update<F>(state: &AppState, handle: &GameHandle, mut change: F) -> ApiResult<Game>
where
    F: FnMut(&mut Game) -> ApiResult<bool>,
{
    let game_id = handle.view().game.game_id;
    let lock = state.write_lock(game_id);
    let _guard = lock.lock().await;
    let id = game_id.to_string();
    for _ in 0..5 {
        let stored = state
            .store
            .get(games_collection(), &id)
            .await?
            .ok_or(ApiError::NotFound("game"))?;
        let mut game: Game = decode(&stored)?;
        if !change(&mut game)? {
            return Ok(game);
        }
        game.updated_at = chrono::Utc::now();
        if state
            .store
            .compare_and_swap(games_collection(), &id, Some(&stored), encode(&game)?)
            .await?
        {
            handle
                .change(GameChange::Game(game.clone()))
                .await
                .map_err(actor_err)?;
            notify(state, game_id).await?;
            return Ok(game);
        }
    }
    Err(ApiError::Conflict(
        "the game kept changing concurrently; retry".into(),
    ))
}

/// Tells the other nodes that a game changed.
pub async fn notify(state: &AppState, game_id: Uuid) -> ApiResult<()> {
    state
        .store
        .publish(&BusMessage::GameChanged {
            game_id,
            origin: state.node_id,
        })
        .await
        .map_err(ApiError::from)
}
