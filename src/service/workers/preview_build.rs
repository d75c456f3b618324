//! The preview workers of this node: each takes a queued build, marks its record
//! `building`, renders the version at both phone sizes on a thread of its own (with the
//! stack a render needs, `offer_preview::RENDER_STACK_BYTES`), stores the PNGs
//! and marks the record `ready` or `failed` (see [`previews`](crate::service::authoring::previews)).
//!
//! Each render runs under the renderer's [`Budget`], its time and memory from
//! `authoring.preview_render_ms` and `authoring.preview_memory_mb`: a page over any limit
//! fails its preview with the limit named, having used no more than the budget. There are
//! `authoring.preview_workers` workers, by default half the cores, so renders never hold
//! every core the offer path needs.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use offer_domain::template::bindings::Bindings;
use offer_domain::template::catalogue::{Catalogue, ItemLookup};
use offer_preview::{BoundItem, Budget, PHONE_SIZES};
use serde_json::Value;
use uuid::Uuid;

use crate::config::AuthoringSettings;
use crate::service::authoring::page_validation::GameCatalogue;
use crate::service::authoring::previews::{
    Job, Preview, Shot, Status, after, read, records, screenshot_key, screenshot_ttl, screenshots,
};
use crate::service::game::assets::{self, ImageKind};
use crate::service::{ServiceError, ServiceResult, Services, stopped};
use crate::store::codec::encode;

/// Compare-and-swap attempts on a preview's record before giving up.
const UPDATE_ATTEMPTS: usize = 8;

/// The workers of this node: `authoring.preview_workers`, or half the cores (at least one)
/// when it is 0.
fn worker_count(settings: &AuthoringSettings) -> usize {
    match settings.preview_workers {
        0 => std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1)),
        n => n,
    }
}

/// The budget of one render: the renderer's defaults, with the time and memory of
/// `[authoring]`.
fn budget(settings: &AuthoringSettings) -> Budget {
    Budget {
        time: Duration::from_millis(settings.preview_render_ms.get()),
        max_memory_bytes: settings.preview_memory_mb.get().saturating_mul(1024 * 1024),
        ..Budget::default()
    }
}

/// Starts the workers on this node's queue; they stop at `shutdown`. Called once, when the
/// node starts serving.
pub fn run_workers(services: &Services, shutdown: &tokio::sync::watch::Receiver<bool>) {
    let receiver = match services.previews.receiver.lock() {
        Ok(mut slot) => slot.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    let Some(receiver) = receiver else {
        tracing::warn!("the preview workers are running already");
        return;
    };
    let receiver = Arc::new(tokio::sync::Mutex::new(receiver));
    for _ in 0..worker_count(&services.settings.authoring) {
        let services = services.clone();
        let receiver = receiver.clone();
        let mut shutdown = shutdown.clone();
        tokio::spawn(async move {
            loop {
                let job = tokio::select! {
                    job = async { receiver.lock().await.recv().await } => job,
                    () = stopped(&mut shutdown) => None,
                };
                let Some(job) = job else { break };
                let preview_id = job.preview_id;
                if let Err(e) = build(&services, job).await {
                    tracing::warn!(%preview_id, error = %e, "preview build not recorded");
                }
            }
        });
    }
}

/// Moves a preview's record on with `change`, by compare-and-swap on the stored bytes (the
/// record's expiry is kept). `false` when the record is gone. Only the building worker
/// writes a record after its creation, so a lost swap is rare and retried a few times.
async fn update(
    services: &Services,
    game_id: Uuid,
    preview_id: Uuid,
    change: impl Fn(&mut Preview),
) -> ServiceResult<bool> {
    for _ in 0..UPDATE_ATTEMPTS {
        let Some((bytes, mut preview)) = read(services, game_id, preview_id).await? else {
            return Ok(false);
        };
        change(&mut preview);
        if services
            .store
            .swap_expiring(
                records(game_id),
                &preview_id.to_string(),
                &bytes,
                encode(&preview)?,
            )
            .await?
        {
            return Ok(true);
        }
    }
    Err(ServiceError::Internal(format!(
        "preview {preview_id} kept changing while its build was recorded"
    )))
}

/// Builds one preview and records the outcome.
async fn build(services: &Services, job: Job) -> ServiceResult<()> {
    let game_id = job.game.view().game.game_id;
    let id = job.preview_id;
    if !update(services, game_id, id, |p| p.status = Status::Building).await? {
        return Ok(());
    }
    let ttl = screenshot_ttl(services);
    let outcome = match render(services, &job).await {
        Ok(pngs) => store_screenshots(services, game_id, id, pngs, ttl).await,
        Err(reason) => Err(reason),
    };
    let expires_at = after(Utc::now(), ttl);
    update(services, game_id, id, |p| {
        p.expires_at = expires_at;
        match &outcome {
            Ok(shots) => {
                p.status = Status::Ready;
                p.screenshots.clone_from(shots);
            }
            Err(reason) => {
                p.status = Status::Failed;
                p.error = Some(reason.clone());
            }
        }
    })
    .await?;
    Ok(())
}

/// Stores the PNGs of preview `id` for `ttl`; returns their sizes, or why they could not be
/// stored.
async fn store_screenshots(
    services: &Services,
    game_id: Uuid,
    id: Uuid,
    pngs: Vec<(Shot, Vec<u8>)>,
    ttl: Duration,
) -> Result<Vec<Shot>, String> {
    let mut shots = Vec::with_capacity(pngs.len());
    for (shot, png) in pngs {
        let key = screenshot_key(id, shot.width, shot.height);
        if let Err(e) = services
            .store
            .insert_expiring(screenshots(game_id), &key, png, ttl)
            .await
        {
            tracing::warn!(preview_id = %id, error = %e, "preview screenshot not stored");
            return Err("the screenshots could not be stored: request a new preview".into());
        }
        shots.push(shot);
    }
    Ok(shots)
}

/// The bound items of `bindings` from the game's live catalogue, with their art: at most
/// `budget`'s memory of it, the rest refused as the render would refuse it.
async fn bound_items(
    services: &Services,
    job: &Job,
    bindings: &Bindings,
    budget: &Budget,
) -> Result<Vec<BoundItem>, String> {
    let game_id = job.game.view().game.game_id;
    let catalogue = GameCatalogue(job.game.view());
    let mut items = Vec::with_capacity(bindings.items.len());
    let mut art_bytes = 0u64;
    for item_id in &bindings.items {
        let summary = match catalogue.lookup(item_id) {
            ItemLookup::Live(summary) => summary,
            ItemLookup::Deleted => return Err(format!("bound item `{item_id}` is deleted")),
            ItemLookup::Unknown => {
                return Err(format!("bound item `{item_id}` is not in the catalogue"));
            }
        };
        let art = match &summary.art {
            Some(asset_id) => match assets::get(services, game_id, asset_id).await {
                Ok((ImageKind::Png | ImageKind::Jpeg, bytes)) => Some(bytes),
                // WebP art and art gone from the library show as the placeholder.
                Ok((ImageKind::Webp, _)) | Err(ServiceError::NotFound(_)) => None,
                Err(e) => return Err(format!("the item art could not be read: {e}")),
            },
            None => None,
        };
        art_bytes = art_bytes.saturating_add(art.as_ref().map_or(0, |a| a.len() as u64));
        if art_bytes > budget.max_memory_bytes {
            return Err(
                offer_preview::RenderError::OverBudget(offer_preview::Exceeded::Memory {
                    what: "the bound items' art",
                    max: budget.max_memory_bytes,
                })
                .to_string(),
            );
        }
        items.push(BoundItem { summary, art });
    }
    Ok(items)
}

/// Both phone sizes of the job's version as PNG, or why they cannot be rendered.
async fn render(services: &Services, job: &Job) -> Result<Vec<(Shot, Vec<u8>)>, String> {
    let bindings = Bindings::from_json(&Value::Object(job.version.bindings.clone()))
        .map_err(|problems| format!("bindings: {}", problems.join("; ")))?;
    let budget = budget(&services.settings.authoring);
    let items = bound_items(services, job, &bindings, &budget).await?;
    let template = job.version.template.clone();
    // A thread of its own rather than the blocking pool's: a render recurses as deep as
    // its budget lets the page nest, which needs a larger stack than the pool's threads.
    let (done, outcome) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("preview-render".into())
        .stack_size(offer_preview::RENDER_STACK_BYTES)
        .spawn(move || {
            let rendered = render_sizes(&template, &bindings, &items, &budget);
            // The worker is gone only when the node stops; nothing is left to tell.
            let _ = done.send(rendered);
        });
    if let Err(e) = spawned {
        tracing::error!(error = %e, "no thread for a preview render");
        return Err("the render could not start: request a new preview".into());
    }
    outcome.await.unwrap_or_else(|_| {
        tracing::error!("preview render stopped");
        Err("the render stopped unexpectedly".into())
    })
}

/// Parses `template` and renders it at both phone sizes under `budget`; blocks.
fn render_sizes(
    template: &str,
    bindings: &Bindings,
    items: &[BoundItem],
    budget: &Budget,
) -> Result<Vec<(Shot, Vec<u8>)>, String> {
    let tree = offer_domain::template::parse(template).map_err(|e| e.to_string())?;
    PHONE_SIZES
        .iter()
        .map(|screen| {
            offer_preview::render(&tree, bindings, items, *screen, budget)
                .map(|png| {
                    let shot = Shot {
                        width: screen.width,
                        height: screen.height,
                    };
                    (shot, png)
                })
                .map_err(|e| e.to_string())
        })
        .collect()
}
