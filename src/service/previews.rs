//! Custom-page previews: a saved version rendered to PNG screenshots at two phone sizes.
//!
//! A request ([`submit`]) checks the version exists, writes the preview's record as
//! `queued` and hands the build to this node's bounded pool: `authoring.preview_workers`
//! workers and a queue of `authoring.preview_queue` builds. A full queue refuses the request
//! ([`ServiceError::PreviewQueueFull`], a 503 with `Retry-After`) rather than growing.
//!
//! A worker ([`run_workers`]) marks the record `building`, parses the template once, reads
//! the bound items from the game's live catalogue and their art from the asset library,
//! renders both phone sizes on a blocking thread, stores the PNGs and marks the record
//! `ready` (or `failed`, with why). Record and PNGs are expiring store documents, so any node
//! answers for them: the record is written once and then changed only by compare-and-swap,
//! and both are gone `authoring.screenshot_ttl_s` after the build (the store purges them).
//! A record whose build never finished (its node stopped) expires [`BUILD_WINDOW`] later.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use offer_actors::GameHandle;
use offer_domain::template::bindings::Bindings;
use offer_domain::template::catalogue::{Catalogue, ItemLookup};
use offer_preview::{BoundItem, PHONE_SIZES};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;
use uuid::Uuid;

use super::assets::{self, ImageKind};
use super::custom_pages::{self, Version};
use super::page_validation::GameCatalogue;
use super::{ServiceError, ServiceResult, Services, stopped};
use crate::config::AuthoringSettings;
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// How long a preview may wait and build before its record expires unbuilt.
pub const BUILD_WINDOW: Duration = Duration::from_secs(3600);

fn records(game_id: Uuid) -> Collection {
    Collection::game(game_id, "previews")
}

fn screenshots(game_id: Uuid) -> Collection {
    Collection::game(game_id, "preview_screenshots")
}

fn screenshot_key(preview_id: Uuid, width: u32, height: u32) -> String {
    format!("{preview_id}:{width}x{height}")
}

/// Where a preview's state is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Waiting for a worker.
    Queued,
    /// A worker is rendering it.
    Building,
    /// Its screenshots are served.
    Ready,
    /// The template could not be rendered; `error` says why.
    Failed,
}

/// One screenshot's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shot {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// A preview as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preview {
    /// The preview.
    pub preview_id: Uuid,
    /// The page previewed.
    pub page_id: Uuid,
    /// Its version.
    pub version: u32,
    /// Where the build is.
    pub status: Status,
    /// The screenshots, once `ready`.
    pub screenshots: Vec<Shot>,
    /// When the preview and its screenshots are gone: the build's end plus
    /// `authoring.screenshot_ttl_s`, or, before that, the latest the record is kept.
    pub expires_at: DateTime<Utc>,
    /// Why the build failed.
    pub error: Option<String>,
}

/// A build waiting for a worker.
pub struct Job {
    game: GameHandle,
    preview_id: Uuid,
    version: Version,
}

/// This node's queue of builds: the sending half lives with the services, the receiving
/// half goes to the workers when the node starts serving.
pub struct PreviewQueue {
    sender: mpsc::Sender<Job>,
    receiver: Mutex<Option<mpsc::Receiver<Job>>>,
}

impl PreviewQueue {
    /// A queue holding at most `authoring.preview_queue` builds.
    pub fn new(settings: &AuthoringSettings) -> Self {
        let (sender, receiver) = mpsc::channel(settings.preview_queue.get());
        Self {
            sender,
            receiver: Mutex::new(Some(receiver)),
        }
    }
}

fn screenshot_ttl(services: &Services) -> Duration {
    Duration::from_secs(services.settings.authoring.screenshot_ttl_s.get())
}

fn after(now: DateTime<Utc>, ttl: Duration) -> DateTime<Utc> {
    now + chrono::Duration::from_std(ttl).unwrap_or(chrono::Duration::MAX)
}

/// Queues a preview of version `number` of page `page_id` of `game` (which the caller
/// checked is the caller's). 404 when the game has no such page or version; 503 when this
/// node's queue is full, with nothing written.
pub async fn submit(
    services: &Services,
    game: GameHandle,
    page_id: Uuid,
    number: u32,
) -> ServiceResult<Uuid> {
    let game_id = game.view().game.game_id;
    let version = custom_pages::version(services, game_id, page_id, number).await?;
    // The slot first: a full queue refuses before anything is stored.
    let permit = services
        .previews
        .sender
        .try_reserve()
        .map_err(|_| ServiceError::PreviewQueueFull)?;
    let preview_id = Uuid::new_v4();
    let kept = BUILD_WINDOW + screenshot_ttl(services);
    let record = Preview {
        preview_id,
        page_id,
        version: number,
        status: Status::Queued,
        screenshots: Vec::new(),
        expires_at: after(Utc::now(), kept),
        error: None,
    };
    let inserted = services
        .store
        .insert_expiring(
            records(game_id),
            &preview_id.to_string(),
            encode(&record)?,
            kept,
        )
        .await?;
    if !inserted {
        return Err(ServiceError::Internal(
            "a fresh preview id was taken".into(),
        ));
    }
    permit.send(Job {
        game,
        preview_id,
        version,
    });
    Ok(preview_id)
}

/// A preview of `game_id`, with its stored bytes; `None` when absent or expired.
async fn read(
    services: &Services,
    game_id: Uuid,
    preview_id: Uuid,
) -> ServiceResult<Option<(Vec<u8>, Preview)>> {
    let Some(bytes) = services
        .store
        .get_expiring(records(game_id), &preview_id.to_string())
        .await?
    else {
        return Ok(None);
    };
    let preview: Preview = decode(&bytes)?;
    if preview.expires_at <= Utc::now() {
        return Ok(None);
    }
    Ok(Some((bytes, preview)))
}

/// A preview of `game_id`; 404 when the game has no such preview, or it expired.
pub async fn get(services: &Services, game_id: Uuid, preview_id: Uuid) -> ServiceResult<Preview> {
    read(services, game_id, preview_id)
        .await?
        .map(|(_, preview)| preview)
        .ok_or(ServiceError::NotFound("preview"))
}

/// The PNG of a ready preview of `game_id` at `width` x `height`; 404 when the game has no
/// such preview or screenshot, or it expired.
pub async fn screenshot(
    services: &Services,
    game_id: Uuid,
    preview_id: Uuid,
    width: u32,
    height: u32,
) -> ServiceResult<Vec<u8>> {
    let preview = get(services, game_id, preview_id).await?;
    if !preview.screenshots.contains(&Shot { width, height }) {
        return Err(ServiceError::NotFound("screenshot"));
    }
    services
        .store
        .get_expiring(
            screenshots(game_id),
            &screenshot_key(preview_id, width, height),
        )
        .await?
        .ok_or(ServiceError::NotFound("screenshot"))
}

/// Starts `authoring.preview_workers` workers on this node's queue; they stop at
/// `shutdown`. Called once, when the node starts serving.
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
    for _ in 0..services.settings.authoring.preview_workers.get() {
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
/// record's expiry is kept). `false` when the record is gone.
async fn update(
    services: &Services,
    game_id: Uuid,
    preview_id: Uuid,
    change: impl Fn(&mut Preview),
) -> ServiceResult<bool> {
    loop {
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
        Ok(pngs) => {
            let expires_at = after(Utc::now(), ttl);
            for (shot, png) in &pngs {
                services
                    .store
                    .insert_expiring(
                        screenshots(game_id),
                        &screenshot_key(id, shot.width, shot.height),
                        png.clone(),
                        ttl,
                    )
                    .await?;
            }
            let shots: Vec<Shot> = pngs.iter().map(|(shot, _)| *shot).collect();
            Ok((shots, expires_at))
        }
        Err(reason) => Err((reason, after(Utc::now(), ttl))),
    };
    update(services, game_id, id, |p| match &outcome {
        Ok((shots, expires_at)) => {
            p.status = Status::Ready;
            p.screenshots.clone_from(shots);
            p.expires_at = *expires_at;
        }
        Err((reason, expires_at)) => {
            p.status = Status::Failed;
            p.error = Some(reason.clone());
            p.expires_at = *expires_at;
        }
    })
    .await?;
    Ok(())
}

/// The bound items of `bindings` from the game's live catalogue, with their art.
async fn bound_items(
    services: &Services,
    job: &Job,
    bindings: &Bindings,
) -> Result<Vec<BoundItem>, String> {
    let game_id = job.game.view().game.game_id;
    let catalogue = GameCatalogue(job.game.view());
    let mut items = Vec::with_capacity(bindings.items.len());
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
        items.push(BoundItem { summary, art });
    }
    Ok(items)
}

/// Both phone sizes of the job's version as PNG, or why they cannot be rendered.
async fn render(services: &Services, job: &Job) -> Result<Vec<(Shot, Vec<u8>)>, String> {
    let bindings = Bindings::from_json(&Value::Object(job.version.bindings.clone()))
        .map_err(|problems| format!("bindings: {}", problems.join("; ")))?;
    let items = bound_items(services, job, &bindings).await?;
    let template = job.version.template.clone();
    tokio::task::spawn_blocking(move || {
        let tree = offer_domain::template::parse(&template).map_err(|e| e.to_string())?;
        PHONE_SIZES
            .iter()
            .map(|screen| {
                offer_preview::render(&tree, &bindings, &items, *screen)
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
    })
    .await
    .unwrap_or_else(|e| {
        tracing::error!(error = %e, "preview render stopped");
        Err("the render stopped unexpectedly".into())
    })
}
