//! Offer configuration persistence: L2 templates, L3 bundles, experiments and the kill
//! switch. Each write goes to the store, then to the game's actor, then to the bus.

use chrono::Utc;
use offer_actors::{GameChange, GameHandle};
use offer_domain::catalogue::{Category, MAX_PRICE_CENTS, usd_to_cents};
use offer_domain::game::Game;
use offer_domain::offer::{Bundle, Experiment, KillSwitch, Template};
use offer_domain::validation::{Errors, FieldError};
use uuid::Uuid;

use super::games::{actor_err, notify};
use crate::auth::{decode, encode};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::{BusMessage, Collection};

/// Most templates, bundles or experiments per game: far above real use, bounded so one
/// game cannot make every decision slow.
pub const MAX_CONFIG_ENTRIES: usize = 100;

fn config(game_id: Uuid) -> Collection {
    Collection::game(game_id, "config")
}

/// The genre's default templates from the calibration table.
pub fn genre_templates(state: &AppState, genre: &str) -> Vec<Template> {
    state
        .genres
        .get(genre)
        .map(|g| g.templates.clone())
        .unwrap_or_default()
}

/// The game's templates: the stored ones, or its genre's defaults until the studio sets
/// its own.
pub async fn templates(state: &AppState, game: &Game) -> ApiResult<Vec<Template>> {
    match state.store.get(config(game.game_id), "templates").await? {
        Some(bytes) => decode(&bytes),
        None => Ok(genre_templates(state, &game.genre)),
    }
}

/// Validates and stores the templates (a full replacement).
pub async fn put_templates(
    state: &AppState,
    handle: &GameHandle,
    templates: Vec<Template>,
) -> ApiResult<Vec<Template>> {
    let mut e = Errors::default();
    if templates.len() > MAX_CONFIG_ENTRIES {
        e.push(
            "templates",
            format!("at most {MAX_CONFIG_ENTRIES} templates"),
        );
    }
    let mut seen = std::collections::HashSet::new();
    for (i, t) in templates.iter().enumerate() {
        if !offer_domain::validation::is_snake_case(&t.event_type, 64) {
            e.0.push(FieldError::new("event_type", "must be a snake_case event name").at(i));
        }
        if !seen.insert(t.event_type.as_str()) {
            e.0.push(FieldError::new("event_type", "one template per event type").at(i));
        }
        if t.categories.is_empty() || t.categories.len() > 5 {
            e.0.push(FieldError::new("categories", "between 1 and 5 categories").at(i));
        }
        if t.categories.contains(&Category::Bundle) {
            e.0.push(
                FieldError::new("categories", "bundles are served by L3 studio bundles only").at(i),
            );
        }
        if t.discount_pct
            .is_some_and(|d| d > offer_domain::pipeline::MAX_DISCOUNT_PCT)
        {
            e.0.push(FieldError::new("discount_pct", "at most 90").at(i));
        }
        if t.max_items.is_some_and(|m| m == 0 || m > 10) {
            e.0.push(FieldError::new("max_items", "between 1 and 10").at(i));
        }
    }
    e.finish(()).map_err(ApiError::Validation)?;
    let game_id = handle.view().game.game_id;
    state
        .store
        .put_all(
            config(game_id),
            vec![("templates".into(), encode(&templates)?)],
        )
        .await?;
    handle
        .change(GameChange::Templates(templates.clone()))
        .await
        .map_err(actor_err)?;
    notify(state, game_id).await?;
    Ok(templates)
}

/// The game's bundles, oldest first.
pub async fn bundles(state: &AppState, game_id: Uuid) -> ApiResult<Vec<Bundle>> {
    let mut out: Vec<(chrono::DateTime<Utc>, Bundle)> = Vec::new();
    for (_, bytes) in state
        .store
        .list(Collection::game(game_id, "bundles"))
        .await?
    {
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

/// Checks a bundle against the live catalogue.
pub fn validate_bundle(handle: &GameHandle, bundle: &Bundle) -> ApiResult<()> {
    let view = handle.view();
    let mut e = Errors::default();
    e.text("name", &bundle.name, offer_domain::game::MAX_NAME_LEN);
    if bundle.item_ids.is_empty() || bundle.item_ids.len() > 50 {
        e.push("item_ids", "between 1 and 50 items");
    }
    for (i, id) in bundle.item_ids.iter().enumerate() {
        let live = view
            .items
            .binary_search_by(|it| it.item_id.as_str().cmp(id))
            .ok()
            .is_some_and(|pos| view.items[pos].is_live());
        if !live {
            e.0.push(FieldError::new("item_ids", format!("no live item `{id}`")).at(i));
        }
    }
    if !usd_to_cents(bundle.price_usd).is_some_and(|c| (0..=MAX_PRICE_CENTS).contains(&c)) {
        e.push(
            "price_usd",
            "a non-negative price with at most 2 decimal places, up to 100000",
        );
    }
    if bundle.triggers.len() > 20
        || bundle
            .triggers
            .iter()
            .any(|t| !offer_domain::validation::is_snake_case(t, 64))
    {
        e.push("triggers", "at most 20 snake_case event names");
    }
    e.finish(()).map_err(ApiError::Validation)
}

/// Creates or replaces a bundle.
pub async fn put_bundle(
    state: &AppState,
    handle: &GameHandle,
    bundle: Bundle,
) -> ApiResult<Bundle> {
    validate_bundle(handle, &bundle)?;
    let game_id = handle.view().game.game_id;
    let lock = state.write_lock(game_id);
    let _guard = lock.lock().await;
    let coll = Collection::game(game_id, "bundles");
    let id = bundle.bundle_id.to_string();
    let created_at = match state.store.get(coll, &id).await? {
        Some(bytes) => decode::<StoredBundle>(&bytes)?.created_at,
        None => {
            if bundles(state, game_id).await?.len() >= MAX_CONFIG_ENTRIES {
                return Err(ApiError::invalid(
                    "bundles",
                    format!("at most {MAX_CONFIG_ENTRIES} bundles"),
                ));
            }
            Utc::now()
        }
    };
    let stored = StoredBundle {
        created_at,
        bundle: bundle.clone(),
    };
    state
        .store
        .put_all(coll, vec![(id, encode(&stored)?)])
        .await?;
    refresh_bundles(state, handle, game_id).await?;
    Ok(bundle)
}

/// Deletes a bundle.
pub async fn delete_bundle(
    state: &AppState,
    handle: &GameHandle,
    bundle_id: Uuid,
) -> ApiResult<()> {
    let game_id = handle.view().game.game_id;
    let lock = state.write_lock(game_id);
    let _guard = lock.lock().await;
    if !state
        .store
        .delete(Collection::game(game_id, "bundles"), &bundle_id.to_string())
        .await?
    {
        return Err(ApiError::NotFound("bundle"));
    }
    refresh_bundles(state, handle, game_id).await
}

async fn refresh_bundles(state: &AppState, handle: &GameHandle, game_id: Uuid) -> ApiResult<()> {
    let all = bundles(state, game_id).await?;
    handle
        .change(GameChange::Bundles(all))
        .await
        .map_err(actor_err)?;
    notify(state, game_id).await
}

/// The game's experiments, oldest first (the first one prices offers).
pub async fn experiments(state: &AppState, game_id: Uuid) -> ApiResult<Vec<Experiment>> {
    match state.store.get(config(game_id), "experiments").await? {
        Some(bytes) => decode(&bytes),
        None => Ok(Vec::new()),
    }
}

/// Validates an experiment: at least one variant, positive total weight, each variant at
/// most one price change, unique names.
pub fn validate_experiment(exp: &Experiment) -> ApiResult<()> {
    let mut e = Errors::default();
    if exp.variants.is_empty() || exp.variants.len() > 10 {
        e.push("variants", "between 1 and 10 variants");
    }
    if exp
        .variants
        .iter()
        .map(|v| u64::from(v.weight))
        .sum::<u64>()
        == 0
    {
        e.push("variants", "the weights must not all be 0");
    }
    let mut names = std::collections::HashSet::new();
    for (i, v) in exp.variants.iter().enumerate() {
        e.text(&format!("variants[{i}].name"), &v.name, 64);
        if !names.insert(v.name.as_str()) {
            e.0.push(FieldError::new("name", "duplicate variant name").at(i));
        }
        if v.price_usd.is_some() && v.price_multiplier.is_some() {
            e.0.push(
                FieldError::new("price_usd", "set price_usd or price_multiplier, not both").at(i),
            );
        }
        if v.price_usd
            .is_some_and(|p| !(p.is_finite() && (0.0..=100_000.0).contains(&p)))
        {
            e.0.push(FieldError::new("price_usd", "between 0 and 100000").at(i));
        }
        if v.price_multiplier
            .is_some_and(|m| !(m.is_finite() && m > 0.0 && m <= 10.0))
        {
            e.0.push(FieldError::new("price_multiplier", "above 0 and at most 10").at(i));
        }
    }
    e.finish(()).map_err(ApiError::Validation)
}

/// Adds an experiment.
pub async fn add_experiment(
    state: &AppState,
    handle: &GameHandle,
    exp: Experiment,
) -> ApiResult<Experiment> {
    validate_experiment(&exp)?;
    let game_id = handle.view().game.game_id;
    let lock = state.write_lock(game_id);
    let _guard = lock.lock().await;
    let mut all = experiments(state, game_id).await?;
    if all.len() >= MAX_CONFIG_ENTRIES {
        return Err(ApiError::invalid("experiments", "too many experiments"));
    }
    all.push(exp.clone());
    state
        .store
        .put_all(config(game_id), vec![("experiments".into(), encode(&all)?)])
        .await?;
    handle
        .change(GameChange::Experiments(all))
        .await
        .map_err(actor_err)?;
    notify(state, game_id).await?;
    Ok(exp)
}

/// The game's kill switch (level 0 when never set).
pub async fn kill_switch(state: &AppState, game_id: Uuid) -> ApiResult<KillSwitch> {
    match state.store.get(config(game_id), "kill_switch").await? {
        Some(bytes) => decode(&bytes),
        None => Ok(KillSwitch::default()),
    }
}

/// Sets the kill switch: stored (where the wallet step reads it too), applied to this
/// node's actor, then broadcast to every node and their sockets.
pub async fn set_kill_switch(
    state: &AppState,
    handle: &GameHandle,
    level: u8,
    reason: String,
) -> ApiResult<KillSwitch> {
    if level > 3 {
        return Err(ApiError::invalid("level", "between 0 and 3"));
    }
    if reason.chars().count() > 500 {
        return Err(ApiError::invalid("reason", "at most 500 characters"));
    }
    let game_id = handle.view().game.game_id;
    // One writer per game on this node; the record first, then the level the wallet step
    // reads, so a failure in between (answered 503, safe to retry) never leaves the wallet
    // enforcing a level the record does not show.
    let lock = state.write_lock(game_id);
    let _guard = lock.lock().await;
    let ks = KillSwitch {
        level,
        reason,
        updated_at: Utc::now(),
    };
    state
        .store
        .put_all(config(game_id), vec![("kill_switch".into(), encode(&ks)?)])
        .await?;
    state.store.set_kill_level(game_id, level).await?;
    handle
        .change(GameChange::KillSwitch(ks.clone()))
        .await
        .map_err(actor_err)?;
    state
        .store
        .publish(&BusMessage::KillSwitch {
            game_id,
            level,
            reason: ks.reason.clone(),
            updated_at: ks.updated_at,
        })
        .await?;
    Ok(ks)
}
