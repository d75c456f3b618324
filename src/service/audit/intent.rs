//! An audited change: the intent written before it, the record appended after it, and the
//! sweep that settles the intents a stopped node left. This is the path of every change that
//! touches a deployment-wide collection (the game record, keys, members, sessions, device
//! sign-ins, the operator's settings, the approval index, a player's erasure): the change and
//! its record cannot be one atomic step there, since on a Redis Cluster they sit in different
//! slots. A change of a game's own objects is one step instead ([`super::atomic`]).
//!
//! [`audited`] reads the documents the change will touch, writes an intent (the
//! record to be, with those documents as they were), runs the change, reads the documents
//! again and settles the intent: when they differ, the record is appended with the fields
//! that changed; when they do not (the change was refused or failed before writing), the
//! intent is dropped and nothing is recorded. The answer of the change is returned as it
//! was; a failure to settle is logged and left to the sweep, since the change stands.
//!
//! The sweep ([`settle_pending`]) settles every intent older than [`IN_FLIGHT`] the same
//! way: a change still running on another node is younger than that. The record of a change
//! interrupted by a crash therefore appears at the next sweep (a node's start, then hourly),
//! and a change that never reached the store leaves no record.
//!
//! Two people changing one object within the same instant each get a record; each record's
//! before and after are read around its own change, so one may show the other's fields too.

use std::time::Duration;

use chrono::Utc;
use offer_domain::audit::{
    AuditEntry, ChangedBy, ObjectRef, changed_fields, entry_id, is_unchanged, sealed,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::trail;
use crate::service::{ServiceError, ServiceResult};
use crate::store::codec::{decode, encode};
use crate::store::{Collection, Scope, Store, StoreResult};

/// Age past which an intent is settled by the sweep: no change runs this long.
pub const IN_FLIGHT: Duration = Duration::from_secs(60);

/// The collections a change may be audited on. A watched collection is stored by name in
/// an intent, so the sweep must find it again here; an unlisted one is refused before
/// anything is written. The game's own collections whose changes are now recorded
/// atomically stay listed, so that an intent a node of an earlier version left is still
/// settled.
const AUDITED: &[&str] = &[
    "games",
    "config",
    "items",
    "bundles",
    "keys",
    "members",
    "web_sessions",
    "approvals",
    "custom_pages",
    "device_sign_ins",
    "operator_settings",
    "erasures",
];

/// A stored document a change may touch.
#[derive(Debug, Clone)]
pub struct Watched {
    /// Its collection: one of the audited ones.
    pub coll: Collection,
    /// Its id.
    pub id: String,
    /// Whether it is a short-lived document ([`Expiring`](crate::store::Expiring)).
    pub expiring: bool,
}

impl Watched {
    /// The document `id` of `coll`.
    pub fn new(coll: Collection, id: impl ToString) -> Self {
        Self {
            coll,
            id: id.to_string(),
            expiring: false,
        }
    }

    /// The short-lived document `id` of `coll` (a device sign-in).
    pub fn expiring(coll: Collection, id: impl ToString) -> Self {
        Self {
            expiring: true,
            ..Self::new(coll, id)
        }
    }
}

/// What an audited change is: its action, its object, whose it is, and the documents that
/// hold the object (several for a change of many objects at once, such as a catalogue
/// import; their records then give each changed document's fields under its id).
#[derive(Debug, Clone)]
pub struct Audit {
    /// The studio whose object it is (`None`: the operator's deployment-wide settings).
    pub studio_id: Option<String>,
    /// The game, when the object belongs to one.
    pub game_id: Option<Uuid>,
    /// What is done: `object.verb`, for example `kill_switch.set`.
    pub action: &'static str,
    /// The object.
    pub object: ObjectRef,
    /// The documents that hold it.
    pub watch: Vec<Watched>,
}

impl Audit {
    /// A change of `object` of a game of `studio_id`, held in the documents `watch`.
    pub fn of_game(
        studio_id: &str,
        game_id: Uuid,
        action: &'static str,
        object: ObjectRef,
        watch: Vec<Watched>,
    ) -> Self {
        Self {
            studio_id: Some(studio_id.to_owned()),
            game_id: Some(game_id),
            action,
            object,
            watch,
        }
    }
}

/// The intents of changes in flight: a game's with the game's objects (on a Redis Cluster,
/// in the game's slot, so a change of a game needs only the node that holds the game), the
/// others deployment-wide.
fn intents(game_id: Option<Uuid>) -> Collection {
    match game_id {
        Some(game_id) => Collection::game(game_id, "audit_intents"),
        None => Collection::global("audit_intents"),
    }
}

/// A watched document as an intent keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredWatch {
    game_id: Option<Uuid>,
    collection: String,
    id: String,
    #[serde(default)]
    expiring: bool,
}

/// The record to be, with the watched documents as they were, and where they are.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Intent {
    entry: AuditEntry,
    watch: Vec<StoredWatch>,
}

/// Runs `change` and records it in the audit trail when it changed the documents of
/// `audit` (see the module's documentation). An intent that cannot be written refuses the
/// change before it runs (the store is unavailable: nothing is changed unrecorded).
pub async fn audited<T>(
    store: &dyn Store,
    by: &ChangedBy,
    audit: Audit,
    change: impl AsyncFnOnce() -> ServiceResult<T>,
) -> ServiceResult<T> {
    let watch = stored_watch(&audit.watch)?;
    let before = snapshot(store, &audit.watch).await?;
    let at = Utc::now();
    let intent = Intent {
        entry: AuditEntry {
            id: entry_id(at, Uuid::new_v4()),
            at,
            actor: by.actor.clone(),
            via: by.via,
            studio_id: audit.studio_id,
            game_id: audit.game_id,
            action: audit.action.to_owned(),
            object: audit.object,
            before,
            after: Value::Null,
        },
        watch,
    };
    store
        .put_all(
            intents(intent.entry.game_id),
            vec![(intent.entry.id.clone(), encode(&intent)?)],
        )
        .await?;
    let result = change().await;
    if let Err(e) = settle(store, &intent).await {
        tracing::warn!(error = %e, action = %intent.entry.action,
            "recording a change in the audit trail failed; the sweep records it");
    }
    result
}

/// The watched documents as an intent keeps them; a collection outside [`AUDITED`] is a
/// bug of the caller, refused before anything is written.
fn stored_watch(watch: &[Watched]) -> ServiceResult<Vec<StoredWatch>> {
    watch
        .iter()
        .map(|w| {
            if !AUDITED.contains(&w.coll.name) {
                return Err(ServiceError::Internal(format!(
                    "the audit trail does not know the collection `{}`",
                    w.coll.name
                )));
            }
            Ok(StoredWatch {
                game_id: match w.coll.scope {
                    Scope::Game(game_id) => Some(game_id),
                    Scope::Global => None,
                },
                collection: w.coll.name.to_owned(),
                id: w.id.clone(),
                expiring: w.expiring,
            })
        })
        .collect()
}

/// The watched documents of a stored intent, found again among [`AUDITED`].
fn watched(stored: &[StoredWatch]) -> Vec<Watched> {
    stored
        .iter()
        .filter_map(|w| {
            let name = AUDITED.iter().find(|name| **name == w.collection)?;
            let coll = match w.game_id {
                Some(game_id) => Collection::game(game_id, name),
                None => Collection::global(name),
            };
            Some(Watched {
                expiring: w.expiring,
                ..Watched::new(coll, &w.id)
            })
        })
        .collect()
}

/// The watched documents now, their secrets sealed ([`sealed`]): the one document's JSON
/// (`null`: absent), or for several an object of each one's JSON by id.
pub(super) async fn snapshot(store: &dyn Store, watch: &[Watched]) -> StoreResult<Value> {
    let mut docs = Map::new();
    for w in watch {
        let bytes = if w.expiring {
            store.get_expiring(w.coll, &w.id).await?
        } else {
            store.get(w.coll, &w.id).await?
        };
        let doc = match bytes {
            Some(bytes) => sealed(&decode::<Value>(&bytes)?),
            None => Value::Null,
        };
        if watch.len() == 1 {
            return Ok(doc);
        }
        docs.insert(w.id.clone(), doc);
    }
    Ok(Value::Object(docs))
}

/// The changed fields between two snapshots of `count` documents: for one document its
/// changed fields; for several, each changed document's fields under its id.
pub(super) fn difference(count: usize, before: &Value, after: &Value) -> (Value, Value) {
    if count == 1 {
        return changed_fields(before, after);
    }
    let (mut old, mut new) = (Map::new(), Map::new());
    let empty = Map::new();
    let before = before.as_object().unwrap_or(&empty);
    let after = after.as_object().unwrap_or(&empty);
    for (id, doc) in after {
        let was = before.get(id).unwrap_or(&Value::Null);
        let (b, a) = changed_fields(was, doc);
        if !is_unchanged(&b, &a) {
            old.insert(id.clone(), b);
            new.insert(id.clone(), a);
        }
    }
    (Value::Object(old), Value::Object(new))
}

/// Settles `intent`: appends its record when its documents changed, then drops it.
async fn settle(store: &dyn Store, intent: &Intent) -> StoreResult<()> {
    let watch = watched(&intent.watch);
    let now = snapshot(store, &watch).await?;
    let (before, after) = difference(watch.len(), &intent.entry.before, &now);
    if !is_unchanged(&before, &after) {
        let entry = AuditEntry {
            before,
            after,
            ..intent.entry.clone()
        };
        trail::append(store, &entry).await?;
    }
    store
        .delete(intents(intent.entry.game_id), &intent.entry.id)
        .await?;
    Ok(())
}

/// Settles every intent older than [`IN_FLIGHT`] of the game `game_id` (`None`: the
/// deployment-wide ones); how many it settled.
pub async fn settle_pending(store: &dyn Store, game_id: Option<Uuid>) -> StoreResult<usize> {
    let cutoff = Utc::now() - IN_FLIGHT;
    let mut settled = 0;
    for (_, bytes) in store.list(intents(game_id)).await? {
        let intent: Intent = decode(&bytes)?;
        if intent.entry.at < cutoff {
            settle(store, &intent).await?;
            settled += 1;
        }
    }
    Ok(settled)
}

#[cfg(test)]
mod tests {
    use offer_domain::audit::{Actor, Via};

    use super::*;
    use crate::service::audit::trail::studio_log;
    use crate::service::test_support::with_services;

    fn by() -> ChangedBy {
        ChangedBy {
            actor: Actor::Operator("test".into()),
            via: Via::Cli,
        }
    }

    fn audit(id: &str) -> Audit {
        Audit {
            studio_id: Some("studio".into()),
            game_id: None,
            action: "member.add",
            object: ObjectRef::new("member", id),
            watch: vec![Watched::new(Collection::global("members"), id)],
        }
    }

    async fn records(store: &dyn Store) -> Vec<AuditEntry> {
        let mut out = Vec::new();
        for (_, bytes) in store.list(studio_log()).await.expect("list") {
            out.push(decode(&bytes).expect("entry"));
        }
        out
    }

    /// The intent a node writes before a change, made `age` ago.
    async fn leave_intent(store: &dyn Store, id: &str, age: chrono::Duration) {
        let a = audit(id);
        let at = Utc::now() - age;
        let intent = Intent {
            entry: AuditEntry {
                id: entry_id(at, Uuid::new_v4()),
                at,
                actor: by().actor,
                via: by().via,
                studio_id: a.studio_id.clone(),
                game_id: None,
                action: a.action.into(),
                object: a.object.clone(),
                before: Value::Null,
                after: Value::Null,
            },
            watch: stored_watch(&a.watch).expect("audited collection"),
        };
        store
            .put_all(
                intents(None),
                vec![(intent.entry.id.clone(), encode(&intent).expect("intent"))],
            )
            .await
            .expect("intent written");
    }

    #[test]
    fn a_change_that_fails_before_writing_records_nothing_and_leaves_no_intent() {
        with_services(async |services| {
            let store = &*services.store;
            let failed: ServiceResult<()> = audited(store, &by(), audit("a@x.test"), async || {
                Err(ServiceError::Conflict("refused".into()))
            })
            .await;
            assert!(failed.is_err());
            assert!(records(store).await.is_empty());
            assert!(store.list(intents(None)).await.expect("list").is_empty());
        });
    }

    #[test]
    fn a_change_that_wrote_and_then_failed_is_still_recorded() {
        with_services(async |services| {
            let store = &*services.store;
            let members = Collection::global("members");
            let result: ServiceResult<()> = audited(store, &by(), audit("a@x.test"), async || {
                store
                    .put_all(
                        members,
                        vec![("a@x.test".into(), br#"{"role":"admin"}"#.to_vec())],
                    )
                    .await?;
                Err(ServiceError::Unavailable)
            })
            .await;
            assert!(result.is_err());
            let written = records(store).await;
            assert_eq!(written.len(), 1, "the store changed: {written:?}");
            assert_eq!(written[0].after, serde_json::json!({"role": "admin"}));
        });
    }

    #[test]
    fn the_sweep_records_an_interrupted_change_and_drops_one_that_never_happened() {
        with_services(async |services| {
            let store = &*services.store;
            let members = Collection::global("members");
            // A node wrote its intent and the change, then stopped.
            leave_intent(store, "done@x.test", chrono::Duration::minutes(5)).await;
            store
                .put_all(
                    members,
                    vec![("done@x.test".into(), br#"{"role":"viewer"}"#.to_vec())],
                )
                .await
                .expect("change");
            // Another wrote its intent and stopped before its change.
            leave_intent(store, "never@x.test", chrono::Duration::minutes(5)).await;
            // A third is still at work: its intent is younger than a change can take.
            leave_intent(store, "busy@x.test", chrono::Duration::seconds(1)).await;

            assert_eq!(settle_pending(store, None).await.expect("sweep"), 2);
            let written = records(store).await;
            assert_eq!(written.len(), 1, "{written:?}");
            assert_eq!(written[0].object.id, "done@x.test");
            assert_eq!(written[0].before, Value::Null);
            assert_eq!(written[0].after, serde_json::json!({"role": "viewer"}));
            assert_eq!(
                store.list(intents(None)).await.expect("list").len(),
                1,
                "the busy one stays"
            );
            // Settling again changes nothing: the record is appended once.
            assert_eq!(settle_pending(store, None).await.expect("sweep"), 0);
            assert_eq!(records(store).await.len(), 1);
        });
    }

    #[test]
    fn an_unknown_collection_is_refused_before_anything_is_written() {
        with_services(async |services| {
            let store = &*services.store;
            let mut a = audit("x");
            a.watch = vec![Watched::new(Collection::global("elsewhere"), "x")];
            let ran = std::sync::atomic::AtomicBool::new(false);
            let result = audited(store, &by(), a, async || {
                ran.store(true, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            })
            .await;
            assert!(matches!(result, Err(ServiceError::Internal(_))));
            assert!(!ran.load(std::sync::atomic::Ordering::SeqCst));
        });
    }
}
