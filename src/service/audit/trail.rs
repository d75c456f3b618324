//! The records of the audit trail: where they are kept, appending one, reading a studio's
//! newest first with a cursor, and forgetting those past their retention.
//!
//! A game's records are kept with the game's objects (its own collection, in the game's
//! Redis Cluster slot); records of deployment-wide objects (members, their dashboard
//! sessions, device sign-ins) and the operator's settings are kept in one deployment-wide
//! collection, each naming its studio. A read scans the collections it needs: changes are
//! made by people, so a year of them is thousands of records, not millions.

use chrono::{DateTime, Utc};
use offer_domain::audit::AuditEntry;
use uuid::Uuid;

use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::codec::{decode, encode};
use crate::store::{Collection, Store, StoreError, StoreResult};

/// Most records a page holds.
pub const PAGE: usize = 100;

/// The records of one game.
pub fn game_log(game_id: Uuid) -> Collection {
    Collection::game(game_id, "audit")
}

/// The records of deployment-wide objects and of the operator's settings.
pub fn studio_log() -> Collection {
    Collection::global("audit")
}

/// The collection `entry` is kept in.
fn log_of(entry: &AuditEntry) -> Collection {
    entry.game_id.map_or_else(studio_log, game_log)
}

/// Appends `entry`. Appending the same entry twice (a sweep settling an intent its node had
/// recorded just before it stopped) keeps one: the id is the entry's.
pub async fn append(store: &dyn Store, entry: &AuditEntry) -> StoreResult<()> {
    store
        .insert_new(log_of(entry), &entry.id, encoded(entry)?)
        .await?;
    Ok(())
}

/// `entry` as stored.
pub(super) fn encoded(entry: &AuditEntry) -> StoreResult<Vec<u8>> {
    match encode(entry) {
        Ok(bytes) => Ok(bytes),
        // A change of thousands of objects at once (a catalogue import) is recorded by the
        // ids it changed when its fields would not fit one document.
        Err(StoreError::Unstorable(_)) => encode(&shortened(entry)),
        Err(e) => Err(e),
    }
}

/// `entry` with its before and after reduced to the ids of the objects that changed.
fn shortened(entry: &AuditEntry) -> AuditEntry {
    let ids = |v: &serde_json::Value| {
        v.as_object()
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    AuditEntry {
        before: serde_json::json!({ "changed_ids": ids(&entry.before) }),
        after: serde_json::json!({ "changed_ids": ids(&entry.after) }),
        ..entry.clone()
    }
}

/// What a read asks for.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only this game's records (one of the studio's games).
    pub game_id: Option<Uuid>,
    /// Only records made at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only records older than the one with this id (the previous page's `next_cursor`).
    pub cursor: Option<String>,
}

/// One page of records, newest first, and the cursor of the next (`None`: the last page).
#[derive(Debug, Clone)]
pub struct Page {
    /// The records.
    pub entries: Vec<AuditEntry>,
    /// Where the next page starts.
    pub next_cursor: Option<String>,
}

/// The records of `studio_id` that `filter` asks for, newest first: those of the studio's
/// `games` (a game not among them is a 404) and, without a game, the studio's
/// deployment-wide records and the operator's deployment-wide settings (a studio never reads
/// another studio's records).
pub async fn read(
    state: &Services,
    studio_id: &str,
    games: &[Uuid],
    filter: &Filter,
) -> ServiceResult<Page> {
    let mut logs: Vec<Collection> = match filter.game_id {
        Some(game_id) if games.contains(&game_id) => vec![game_log(game_id)],
        Some(_) => return Err(ServiceError::NotFound("game")),
        None => games.iter().copied().map(game_log).collect(),
    };
    if filter.game_id.is_none() {
        logs.push(studio_log());
    }
    let mut entries = Vec::new();
    for log in logs {
        for (_, bytes) in state.store.list(log).await? {
            let entry: AuditEntry = decode(&bytes)?;
            let visible = entry
                .studio_id
                .as_deref()
                .is_none_or(|owner| owner == studio_id);
            let recent = filter.since.is_none_or(|since| entry.at >= since);
            let after_cursor = filter
                .cursor
                .as_deref()
                .is_none_or(|cursor| entry.id.as_str() < cursor);
            if visible && recent && after_cursor {
                entries.push(entry);
            }
        }
    }
    entries.sort_by(|a, b| b.id.cmp(&a.id));
    let next_cursor = (entries.len() > PAGE).then(|| entries[PAGE - 1].id.clone());
    entries.truncate(PAGE);
    Ok(Page {
        entries,
        next_cursor,
    })
}

/// Forgets `log`'s records made before `before`; how many.
pub async fn forget(
    store: &dyn Store,
    log: Collection,
    before: DateTime<Utc>,
) -> StoreResult<usize> {
    let mut forgotten = 0;
    for (id, bytes) in store.list(log).await? {
        let entry: AuditEntry = decode(&bytes)?;
        if entry.at < before && store.delete(log, &id).await? {
            forgotten += 1;
        }
    }
    Ok(forgotten)
}
