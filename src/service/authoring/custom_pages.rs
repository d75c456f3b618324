//! Custom-page drafts: versioned autosave of a page's template (Dart source) and bindings
//! (a JSON object). Every save is a new immutable version, numbered 1, 2, 3, ... per page.
//!
//! A draft is stored as data only: its template is checked for size here and for
//! everything else by the validate path. Per game, the collection `custom_pages` holds each
//! page's head (the list of its versions, without their content) and
//! `custom_page_versions` each version under `<page_id>:<n>`. A save writes the version and
//! the head in one versioned write against the head read before it
//! ([`Store::put_all_versioned`](crate::store::Documents::put_all_versioned)), so two saves on
//! any nodes never get the same number: the one that loses reads the head again and takes
//! the next.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::codec::{decode, encode};
use crate::store::{Collection, VersionedWrite};

/// Largest template, in bytes of UTF-8.
pub const MAX_TEMPLATE_BYTES: usize = 64 * 1024;

/// Largest bindings object, in bytes of its JSON.
pub const MAX_BINDINGS_BYTES: usize = 16 * 1024;

/// Most versions of one page; past it, a save is refused (start a new page). Bounds the head
/// every save reads and writes.
pub const MAX_VERSIONS: usize = 1000;

/// Saves that lose the race before one is refused as a conflict (retry).
const SAVE_ATTEMPTS: usize = 16;

fn heads(game_id: Uuid) -> Collection {
    Collection::game(game_id, "custom_pages")
}

fn versions(game_id: Uuid) -> Collection {
    Collection::game(game_id, "custom_page_versions")
}

/// The id of one version of a page: `<page_id>:<version>`.
pub(in crate::service) fn version_key(page_id: Uuid, version: u32) -> String {
    format!("{page_id}:{version}")
}

/// One version as listed: everything but its content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionInfo {
    /// 1 for the first save of the page, then one more per save.
    pub version: u32,
    /// When it was saved.
    pub created_at: DateTime<Utc>,
    /// Who saved it: a dashboard user's id, or `authoring_key:<key_id>`.
    pub created_by: String,
    /// Bytes of the template plus bytes of the bindings' JSON.
    pub size: usize,
}

/// A page and its versions, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// The page.
    pub page_id: Uuid,
    /// When its first version was saved.
    pub created_at: DateTime<Utc>,
    /// Every version, oldest first.
    pub versions: Vec<VersionInfo>,
}

/// One saved version with its content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Version {
    /// The page.
    pub page_id: Uuid,
    /// Its number, its time, its author and its size.
    #[serde(flatten)]
    pub info: VersionInfo,
    /// The template (Dart source) as saved.
    pub template: String,
    /// The bindings as saved.
    pub bindings: Map<String, Value>,
}

/// What a save names.
#[derive(Debug)]
pub struct Draft {
    /// The page to add a version to; `None` starts a new page.
    pub page_id: Option<Uuid>,
    /// The template.
    pub template: String,
    /// The bindings.
    pub bindings: Map<String, Value>,
}

/// Saves a new version of a page of `game_id` (which the caller checked is the caller's),
/// or the first version of a new page. Returns the page and the version's number. An
/// unknown `page_id` (or another game's) is a 404; a template or bindings over their size a
/// 413, with nothing written.
pub async fn save(
    services: &Services,
    game_id: Uuid,
    created_by: String,
    draft: Draft,
) -> ServiceResult<(Uuid, u32)> {
    let template_bytes = draft.template.len();
    if template_bytes > MAX_TEMPLATE_BYTES {
        return Err(ServiceError::PayloadTooLarge(format!(
            "the template has {template_bytes} bytes; at most {MAX_TEMPLATE_BYTES}"
        )));
    }
    let bindings_bytes = serde_json::to_vec(&draft.bindings)
        .map_err(|e| ServiceError::Internal(format!("bindings: {e}")))?
        .len();
    if bindings_bytes > MAX_BINDINGS_BYTES {
        return Err(ServiceError::PayloadTooLarge(format!(
            "the bindings have {bindings_bytes} bytes of JSON; at most {MAX_BINDINGS_BYTES}"
        )));
    }
    let page_id = draft.page_id.unwrap_or_else(Uuid::new_v4);
    for _ in 0..SAVE_ATTEMPTS {
        let now = Utc::now();
        let current = match draft.page_id {
            None => None,
            Some(_) => {
                let Some(bytes) = services
                    .store
                    .get(heads(game_id), &page_id.to_string())
                    .await?
                else {
                    return Err(ServiceError::NotFound("page"));
                };
                let page: Page = decode(&bytes)?;
                Some((bytes, page))
            }
        };
        let mut page = match &current {
            Some((_, page)) => page.clone(),
            None => Page {
                page_id,
                created_at: now,
                versions: Vec::new(),
            },
        };
        if page.versions.len() >= MAX_VERSIONS {
            return Err(ServiceError::Conflict(format!(
                "the page has {MAX_VERSIONS} versions, the most one page keeps: save to a new page"
            )));
        }
        let number = page.versions.last().map_or(1, |v| v.version + 1);
        let info = VersionInfo {
            version: number,
            created_at: now,
            created_by: created_by.clone(),
            size: template_bytes + bindings_bytes,
        };
        page.versions.push(info.clone());
        let version = Version {
            page_id,
            info,
            template: draft.template.clone(),
            bindings: draft.bindings.clone(),
        };
        let written = services
            .store
            .put_all_versioned(VersionedWrite {
                version: heads(game_id),
                version_id: &page_id.to_string(),
                expected: current.as_ref().map(|(bytes, _)| bytes.as_slice()),
                new_version: encode(&page)?,
                coll: versions(game_id),
                entries: vec![(version_key(page_id, number), encode(&version)?)],
            })
            .await?;
        if written {
            return Ok((page_id, number));
        }
    }
    Err(ServiceError::Conflict(
        "the page kept changing while saving: retry".into(),
    ))
}

/// A page of `game_id` with its versions; 404 when the game has no such page.
pub async fn page(services: &Services, game_id: Uuid, page_id: Uuid) -> ServiceResult<Page> {
    let bytes = services
        .store
        .get(heads(game_id), &page_id.to_string())
        .await?
        .ok_or(ServiceError::NotFound("page"))?;
    Ok(decode(&bytes)?)
}

/// Every page of `game_id` with its versions, the most recently saved first.
pub async fn list(services: &Services, game_id: Uuid) -> ServiceResult<Vec<Page>> {
    let mut pages = services
        .store
        .list(heads(game_id))
        .await?
        .into_iter()
        .map(|(_, bytes)| decode::<Page>(&bytes))
        .collect::<Result<Vec<_>, _>>()?;
    pages.sort_by_key(|p| {
        std::cmp::Reverse(p.versions.last().map_or(p.created_at, |v| v.created_at))
    });
    Ok(pages)
}

/// One version of a page of `game_id`; 404 when the game has no such page or version.
pub async fn version(
    services: &Services,
    game_id: Uuid,
    page_id: Uuid,
    number: u32,
) -> ServiceResult<Version> {
    let bytes = services
        .store
        .get(versions(game_id), &version_key(page_id, number))
        .await?
        .ok_or(ServiceError::NotFound("page version"))?;
    Ok(decode(&bytes)?)
}
