//! Custom-page previews: a saved version rendered to PNG screenshots at two phone sizes.
//!
//! A request ([`submit`]) checks the version exists, writes the preview's record as
//! `queued` and hands the build to this node's bounded pool: `authoring.preview_workers`
//! workers and a queue of `authoring.preview_queue` builds. A full queue refuses the request
//! ([`ServiceError::PreviewQueueFull`], a 503 with `Retry-After`) rather than growing.
//! Before that, the request takes a share ([`Shares`]): one game may have at most
//! `authoring.preview_per_game` previews queued or building on this node, one authoring key
//! or dashboard user `authoring.preview_per_key`; past either, the request is refused
//! ([`ServiceError::PreviewShareFull`], a 429 with `Retry-After`), so one tenant cannot
//! hold the queue while other games' previews still get in. The share is held until the
//! build has ended.
//!
//! A worker ([`preview_build`](crate::service::workers::preview_build)) marks the record `building`, parses
//! the template once, reads the bound items from the game's live catalogue and their art
//! from the asset library, renders both phone sizes on a thread of its own, stores the PNGs
//! and marks the record `ready` (or `failed`, with why). Record and PNGs are expiring store documents, so any node
//! answers for them: the record is written once and then changed only by compare-and-swap,
//! and both are gone `authoring.screenshot_ttl_s` after the build (the store purges them).
//! A record whose build never finished (its node stopped) expires [`BUILD_WINDOW`] later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use offer_actors::GameHandle;
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use uuid::Uuid;

use crate::config::AuthoringSettings;
use crate::service::authoring::custom_pages::{self, Version};
pub use crate::service::refusals::ShareScope;
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// How long a preview may wait and build before its record expires unbuilt.
pub const BUILD_WINDOW: Duration = Duration::from_secs(3600);

/// The collection of a game's preview records.
pub(in crate::service) fn records(game_id: Uuid) -> Collection {
    Collection::game(game_id, "previews")
}

/// The collection of a game's preview PNGs.
pub(in crate::service) fn screenshots(game_id: Uuid) -> Collection {
    Collection::game(game_id, "preview_screenshots")
}

/// The collection naming each page version's newest preview: `<page_id>:<version>` holds
/// its id, so the dashboard finds a version's screenshots without the tool's answer. It
/// outlives the preview, which then reads as absent.
fn newest(game_id: Uuid) -> Collection {
    Collection::game(game_id, "preview_newest")
}

/// The id of one PNG of a preview.
pub(in crate::service) fn screenshot_key(preview_id: Uuid, width: u32, height: u32) -> String {
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

impl Shot {
    /// The file a screenshot is served as: `<width>x<height>.png`.
    pub fn file_name(self) -> String {
        format!("{}x{}.png", self.width, self.height)
    }

    /// The size a file name `<width>x<height>.png` names, or nothing.
    pub fn from_file_name(file: &str) -> Option<Self> {
        let (width, height) = file.strip_suffix(".png")?.split_once('x')?;
        Some(Self {
            width: width.parse().ok()?,
            height: height.parse().ok()?,
        })
    }
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
    pub(in crate::service) game: GameHandle,
    pub(in crate::service) preview_id: Uuid,
    pub(in crate::service) version: Version,
    /// Its place in the shares of its game and requester, given back when the job is
    /// dropped: once built, or unbuilt when the node stops.
    pub(in crate::service) _share: Share,
}

/// Who asked for a preview: the share of the queue it is counted against, beside its game's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Requester {
    /// An authoring key, by its id.
    Key(Uuid),
    /// A dashboard user, by its subject.
    User(String),
}

/// What a share is held by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Holder {
    Game(Uuid),
    Requester(Requester),
}

/// The previews each game and each requester has queued or building on this node.
#[derive(Debug)]
pub struct Shares {
    held: Mutex<HashMap<Holder, usize>>,
    per_game: usize,
    per_key: usize,
}

impl Shares {
    /// Shares of at most `authoring.preview_per_game` and `authoring.preview_per_key`.
    pub fn new(settings: &AuthoringSettings) -> Arc<Self> {
        Arc::new(Self {
            held: Mutex::new(HashMap::new()),
            per_game: settings.preview_per_game.get(),
            per_key: settings.preview_per_key.get(),
        })
    }

    /// A place for one more preview of `game` asked by `requester`, or the share that is
    /// used up. Both counts are checked and taken under one lock.
    pub fn take(self: &Arc<Self>, game: Uuid, requester: Requester) -> ServiceResult<Share> {
        let game_holder = Holder::Game(game);
        let requester_holder = Holder::Requester(requester);
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let count = |h: &Holder| held.get(h).copied().unwrap_or(0);
        if count(&game_holder) >= self.per_game {
            return Err(ServiceError::PreviewShareFull(
                ShareScope::Game,
                self.per_game,
            ));
        }
        if count(&requester_holder) >= self.per_key {
            let scope = match &requester_holder {
                Holder::Requester(Requester::User(_)) => ShareScope::User,
                _ => ShareScope::Key,
            };
            return Err(ServiceError::PreviewShareFull(scope, self.per_key));
        }
        for h in [&game_holder, &requester_holder] {
            *held.entry(h.clone()).or_insert(0) += 1;
        }
        Ok(Share {
            shares: self.clone(),
            holders: [game_holder, requester_holder],
        })
    }
}

/// One preview's place in the shares of its game and requester, given back when dropped.
#[derive(Debug)]
pub struct Share {
    shares: Arc<Shares>,
    holders: [Holder; 2],
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut held = self
            .shares
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for h in &self.holders {
            if let Some(n) = held.get_mut(h) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    held.remove(h);
                }
            }
        }
    }
}

/// This node's queue of builds: the sending half lives with the services, the receiving
/// half goes to the workers when the node starts serving.
pub struct PreviewQueue {
    sender: mpsc::Sender<Job>,
    pub(in crate::service) receiver: Mutex<Option<mpsc::Receiver<Job>>>,
    shares: Arc<Shares>,
}

impl PreviewQueue {
    /// A queue holding at most `authoring.preview_queue` builds, shared out by game and by
    /// requester.
    pub fn new(settings: &AuthoringSettings) -> Self {
        let (sender, receiver) = mpsc::channel(settings.preview_queue.get());
        Self {
            sender,
            receiver: Mutex::new(Some(receiver)),
            shares: Shares::new(settings),
        }
    }
}

/// How long screenshots are served after their build (`authoring.screenshot_ttl_s`).
pub(in crate::service) fn screenshot_ttl(services: &Services) -> Duration {
    Duration::from_secs(services.settings.authoring.screenshot_ttl_s.get())
}

/// `ttl` after `now`, or the far future for an absurd `ttl`.
pub(in crate::service) fn after(now: DateTime<Utc>, ttl: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(ttl)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// Queues a preview of version `number` of page `page_id` of `game` (which the caller
/// checked is the caller's), asked by `requester`. 404 when the game has no such page or
/// version; 429 when the game or the requester has its share of this node's queue queued
/// or building already; 503 when this node's queue is full; with nothing written.
pub async fn submit(
    services: &Services,
    game: GameHandle,
    requester: Requester,
    page_id: Uuid,
    number: u32,
) -> ServiceResult<Uuid> {
    let game_id = game.view().game.game_id;
    let version = custom_pages::version(services, game_id, page_id, number).await?;
    // The share and the slot first: a refusal comes before anything is stored.
    let share = services.previews.shares.take(game_id, requester)?;
    let permit = services
        .previews
        .sender
        .try_reserve()
        .map_err(|_| ServiceError::PreviewQueueFull)?;
    let preview_id = Uuid::new_v4();
    // The pointer first: one left behind by a failed insert names a preview that reads as
    // absent, never a wrong one.
    services
        .store
        .put_all(
            newest(game_id),
            vec![(
                custom_pages::version_key(page_id, number),
                encode(&preview_id)?,
            )],
        )
        .await?;
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
        _share: share,
    });
    Ok(preview_id)
}

/// A preview of `game_id`, with its stored bytes; `None` when absent or expired.
pub(in crate::service) async fn read(
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

/// The newest preview of version `number` of page `page_id` of `game_id`, while it is kept;
/// `None` when none was requested or it expired.
pub async fn newest_of(
    services: &Services,
    game_id: Uuid,
    page_id: Uuid,
    number: u32,
) -> ServiceResult<Option<Preview>> {
    let Some(bytes) = services
        .store
        .get(newest(game_id), &custom_pages::version_key(page_id, number))
        .await?
    else {
        return Ok(None);
    };
    let preview_id: Uuid = decode(&bytes)?;
    Ok(read(services, game_id, preview_id)
        .await?
        .map(|(_, preview)| preview))
}

/// The PNG of a ready preview of `game_id` at the size `shot`; 404 when the game has no
/// such preview or screenshot, or it expired.
pub async fn screenshot(
    services: &Services,
    game_id: Uuid,
    preview_id: Uuid,
    shot: Shot,
) -> ServiceResult<Vec<u8>> {
    let preview = get(services, game_id, preview_id).await?;
    if !preview.screenshots.contains(&shot) {
        return Err(ServiceError::NotFound("screenshot"));
    }
    services
        .store
        .get_expiring(
            screenshots(game_id),
            &screenshot_key(preview_id, shot.width, shot.height),
        )
        .await?
        .ok_or(ServiceError::NotFound("screenshot"))
}

#[cfg(test)]
mod tests {
    use std::num::{NonZeroU64, NonZeroUsize};

    use super::*;

    fn shares(per_game: usize, per_key: usize) -> Arc<Shares> {
        let n = |v: usize| NonZeroUsize::new(v).expect("positive");
        let m = |v: u64| NonZeroU64::new(v).expect("positive");
        Shares::new(&AuthoringSettings {
            preview_workers: 1,
            preview_queue: n(16),
            preview_per_game: n(per_game),
            preview_per_key: n(per_key),
            preview_render_ms: m(2000),
            preview_memory_mb: m(256),
            screenshot_ttl_s: m(60),
        })
    }

    #[test]
    fn a_key_or_a_game_past_its_share_is_refused_and_others_still_get_in() {
        let shares = shares(3, 2);
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let (key1, key2) = (
            Requester::Key(Uuid::new_v4()),
            Requester::Key(Uuid::new_v4()),
        );
        let held: Vec<Share> = (0..2)
            .map(|_| {
                shares
                    .take(a, key1.clone())
                    .expect("within the key's share")
            })
            .collect();
        let refused = shares
            .take(a, key1.clone())
            .expect_err("the key's share is used");
        assert!(matches!(
            refused,
            ServiceError::PreviewShareFull(ShareScope::Key, 2)
        ));
        // Another key of the same game takes the game's last place, then the game is full.
        let third = shares
            .take(a, key2.clone())
            .expect("within the game's share");
        let refused = shares
            .take(a, key2.clone())
            .expect_err("the game's share is used");
        assert!(matches!(
            refused,
            ServiceError::PreviewShareFull(ShareScope::Game, 3)
        ));
        // Another game is not held back by either.
        let other = shares
            .take(b, Requester::User("u1".into()))
            .expect("another game");
        // A build that ends gives its place back.
        drop(held);
        drop(third);
        let again = shares.take(a, key1).expect("the places are back");
        drop((again, other));
        assert!(
            shares.held.lock().expect("lock").is_empty(),
            "nothing left held"
        );
    }

    #[test]
    fn a_user_past_its_share_is_told_so() {
        let shares = shares(4, 1);
        let game = Uuid::new_v4();
        let _held = shares
            .take(game, Requester::User("u1".into()))
            .expect("first");
        let refused = shares
            .take(game, Requester::User("u1".into()))
            .expect_err("the user's share is used");
        assert!(matches!(
            refused,
            ServiceError::PreviewShareFull(ShareScope::User, 1)
        ));
        assert!(
            refused
                .to_string()
                .contains("this user already has 1 previews")
        );
    }
}
