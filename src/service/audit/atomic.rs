//! A change of a game's own objects, recorded in the same atomic store step as its write.
//!
//! A game's objects (its configuration, catalogue, bundles, approvals) live in the game's
//! own collections, and so do its audit records ([`trail::game_log`]): on SQLite one
//! database, on a Redis Cluster one slot. Such a change needs no intent. A [`Recorded`]
//! change makes its store write through [`Recorded::write`], which composes the record
//! from the watched documents as they are just before the write and the values the write
//! is about to store (`null` for a document it deletes), and hands both to
//! [`Documents::write_recorded`](crate::store::Documents::write_recorded): the write and
//! its record land together, or (a compare-and-swap lost, a document already there or
//! already gone) neither does. A change refused before its write (a validation error, a
//! conflict, a missing object) reaches no write and so leaves no record, and a write that
//! stores what was already there is made without a record, since nothing changed.
//!
//! A retried write (a compare-and-swap loop) composes its record again on each attempt, so
//! the record that lands describes the attempt that landed. Two people changing one object
//! in the same instant each get a record; a write without a compare-and-swap (a plain put)
//! takes its before from a read just ahead of it, so the record of one may show the other's
//! fields too, as on the intent path.

use chrono::Utc;
use offer_domain::audit::{AuditEntry, ChangedBy, entry_id, is_unchanged, sealed};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::intent::{difference, snapshot};
use super::{Audit, Watched, trail};
use crate::service::{ServiceError, ServiceResult};
use crate::store::codec::decode;
use crate::store::{
    Collection, Record, RecordedWrite, Scope, Store, StoreResult, VersionedWrite, Write,
};

/// An audited change of a game's own objects whose writes carry their record (see the
/// module's documentation).
pub struct Recorded<'s> {
    store: &'s dyn Store,
    by: ChangedBy,
    game_id: Uuid,
    audit: Audit,
}

impl<'s> Recorded<'s> {
    /// The change `audit` by `by`. Every watched document must be a game's own (of the
    /// audit's game, not short-lived): anything else is a bug of the caller, refused before
    /// anything is written (such a change goes through [`audited`](super::audited)).
    pub fn new(store: &'s dyn Store, by: &ChangedBy, audit: Audit) -> ServiceResult<Self> {
        let Some(game_id) = audit.game_id else {
            return Err(ServiceError::Internal(format!(
                "`{}` is not a change of a game's objects",
                audit.action
            )));
        };
        if let Some(w) = audit
            .watch
            .iter()
            .find(|w| w.expiring || w.coll.scope != Scope::Game(game_id))
        {
            return Err(ServiceError::Internal(format!(
                "`{}` watches `{}`, which is not one of its game's own collections",
                audit.action, w.coll.name
            )));
        }
        Ok(Self {
            store,
            by: by.clone(),
            game_id,
            audit,
        })
    }

    /// Makes `write` as its plain call would, with the change's record in the same atomic
    /// step when the write changes a watched document; whether the write landed.
    pub async fn write(&self, write: Write<'_>) -> ServiceResult<bool> {
        let watch = &self.audit.watch;
        let before = snapshot(self.store, watch).await?;
        let after = overlay(watch, &before, &write)?;
        let (before, after) = difference(watch.len(), &before, &after);
        if is_unchanged(&before, &after) {
            return Ok(plain(self.store, write).await?);
        }
        let at = Utc::now();
        let entry = AuditEntry {
            id: entry_id(at, Uuid::new_v4()),
            at,
            actor: self.by.actor.clone(),
            via: self.by.via,
            studio_id: self.audit.studio_id.clone(),
            game_id: Some(self.game_id),
            action: self.audit.action.to_owned(),
            object: self.audit.object.clone(),
            before,
            after,
        };
        let record = Record {
            coll: trail::game_log(self.game_id),
            value: trail::encoded(&entry)?,
            id: entry.id,
        };
        Ok(self
            .store
            .write_recorded(RecordedWrite { write, record })
            .await?)
    }

    /// [`Documents::put_all`](crate::store::Documents::put_all), recorded.
    pub async fn put_all(
        &self,
        coll: Collection,
        entries: Vec<(String, Vec<u8>)>,
    ) -> ServiceResult<()> {
        self.write(Write::PutAll { coll, entries }).await?;
        Ok(())
    }

    /// [`Documents::compare_and_swap`](crate::store::Documents::compare_and_swap),
    /// recorded.
    pub async fn compare_and_swap(
        &self,
        coll: Collection,
        id: &str,
        expected: Option<&[u8]>,
        new: Vec<u8>,
    ) -> ServiceResult<bool> {
        self.write(Write::CompareAndSwap {
            coll,
            id,
            expected,
            new,
        })
        .await
    }

    /// [`Documents::put_all_versioned`](crate::store::Documents::put_all_versioned),
    /// recorded.
    pub async fn put_all_versioned(&self, write: VersionedWrite<'_>) -> ServiceResult<bool> {
        self.write(Write::Versioned(write)).await
    }

    /// [`Documents::delete`](crate::store::Documents::delete), recorded.
    pub async fn delete(&self, coll: Collection, id: &str) -> ServiceResult<bool> {
        self.write(Write::Delete { coll, id }).await
    }
}

/// The watched documents as they will be once `write` lands: `before` (a [`snapshot`]) with
/// each document the write stores replaced by its sealed value, and each it deletes `null`.
fn overlay(watch: &[Watched], before: &Value, write: &Write<'_>) -> StoreResult<Value> {
    let mut docs = Map::new();
    for w in watch {
        let was = if watch.len() == 1 {
            before
        } else {
            before.get(&w.id).unwrap_or(&Value::Null)
        };
        let doc = match written(write, w.coll, &w.id) {
            Some(Some(bytes)) => sealed(&decode::<Value>(bytes)?),
            Some(None) => Value::Null,
            None => was.clone(),
        };
        if watch.len() == 1 {
            return Ok(doc);
        }
        docs.insert(w.id.clone(), doc);
    }
    Ok(Value::Object(docs))
}

/// What `write` does to the document `id` of `coll`: `Some(Some(value))` stores `value`,
/// `Some(None)` deletes it, `None` leaves it alone.
fn written<'w>(write: &'w Write<'_>, coll: Collection, id: &str) -> Option<Option<&'w [u8]>> {
    let among = |c: Collection, entries: &'w [(String, Vec<u8>)]| {
        (c == coll)
            .then(|| entries.iter().rev().find(|(e, _)| e == id))
            .flatten()
            .map(|(_, value)| Some(value.as_slice()))
    };
    let one =
        |c: Collection, i: &str, value: &'w [u8]| (c == coll && i == id).then_some(Some(value));
    match write {
        Write::PutAll { coll: c, entries } => among(*c, entries),
        Write::InsertNew {
            coll: c,
            id: i,
            value,
        } => one(*c, i, value),
        Write::CompareAndSwap {
            coll: c,
            id: i,
            new,
            ..
        } => one(*c, i, new),
        Write::Versioned(w) => {
            one(w.version, w.version_id, &w.new_version).or_else(|| among(w.coll, &w.entries))
        }
        Write::Delete { coll: c, id: i } => (*c == coll && *i == id).then_some(None),
    }
}

/// `write` without a record: what nothing changed needs.
async fn plain(store: &dyn Store, write: Write<'_>) -> StoreResult<bool> {
    match write {
        Write::PutAll { coll, entries } => store.put_all(coll, entries).await.map(|()| true),
        Write::InsertNew { coll, id, value } => store.insert_new(coll, id, value).await,
        Write::CompareAndSwap {
            coll,
            id,
            expected,
            new,
        } => store.compare_and_swap(coll, id, expected, new).await,
        Write::Versioned(w) => store.put_all_versioned(w).await,
        Write::Delete { coll, id } => store.delete(coll, id).await,
    }
}

#[cfg(test)]
mod tests {
    use offer_domain::audit::{ObjectRef, Via};
    use serde_json::json;

    use super::*;
    use crate::service::test_support::with_services;

    fn by() -> ChangedBy {
        ChangedBy::member("tester@example.com", Via::Rest)
    }

    fn audit(game_id: Uuid, watch: Vec<Watched>) -> Audit {
        Audit::of_game(
            "studio",
            game_id,
            "kill_switch.set",
            ObjectRef::new("kill_switch", game_id),
            watch,
        )
    }

    async fn records(store: &dyn Store, game_id: Uuid) -> Vec<AuditEntry> {
        let mut out: Vec<AuditEntry> = Vec::new();
        for (_, bytes) in store.list(trail::game_log(game_id)).await.expect("list") {
            out.push(decode(&bytes).expect("entry"));
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }

    #[test]
    fn a_write_that_lands_is_recorded_with_its_changed_fields_and_a_refused_one_is_not() {
        with_services(async |services| {
            let store = &*services.store;
            let game_id = Uuid::new_v4();
            let config = Collection::game(game_id, "config");
            let watch = vec![Watched::new(config, "kill_switch")];
            let recorded = Recorded::new(store, &by(), audit(game_id, watch)).expect("recorded");
            let one = br#"{"level":1,"reason":"a"}"#.to_vec();
            recorded
                .put_all(config, vec![("kill_switch".into(), one.clone())])
                .await
                .expect("put");
            // A compare-and-swap from a value the document no longer holds writes nothing.
            let lost = recorded
                .compare_and_swap(config, "kill_switch", None, b"{}".to_vec())
                .await
                .expect("swap");
            assert!(!lost);
            // Writing what is already there changes nothing: no record.
            let same = recorded
                .compare_and_swap(config, "kill_switch", Some(&one), one.clone())
                .await
                .expect("swap");
            assert!(same);
            let two = br#"{"level":2,"reason":"a"}"#.to_vec();
            assert!(
                recorded
                    .compare_and_swap(config, "kill_switch", Some(&one), two)
                    .await
                    .expect("swap")
            );
            assert!(
                recorded
                    .delete(config, "kill_switch")
                    .await
                    .expect("delete")
            );
            assert!(
                !recorded
                    .delete(config, "kill_switch")
                    .await
                    .expect("delete")
            );

            let written = records(store, game_id).await;
            let fields: Vec<(Value, Value)> = written
                .iter()
                .map(|e| (e.before.clone(), e.after.clone()))
                .collect();
            assert_eq!(
                fields,
                [
                    (Value::Null, json!({"level": 1, "reason": "a"})),
                    (json!({"level": 1}), json!({"level": 2})),
                    (json!({"level": 2, "reason": "a"}), Value::Null),
                ]
            );
            assert!(written.iter().all(|e| e.action == "kill_switch.set"));
            assert!(written.iter().all(|e| e.game_id == Some(game_id)));
        });
    }

    #[test]
    fn a_change_of_several_documents_records_each_changed_one_under_its_id() {
        with_services(async |services| {
            let store = &*services.store;
            let game_id = Uuid::new_v4();
            let items = Collection::game(game_id, "items");
            store
                .put_all(items, vec![("a".into(), br#"{"p":1}"#.to_vec())])
                .await
                .expect("put");
            let watch = vec![Watched::new(items, "a"), Watched::new(items, "b")];
            let recorded = Recorded::new(store, &by(), audit(game_id, watch)).expect("recorded");
            let entries = vec![
                ("a".into(), br#"{"p":1}"#.to_vec()),
                ("b".into(), br#"{"p":2}"#.to_vec()),
                ("unwatched".into(), br#"{"p":3}"#.to_vec()),
            ];
            recorded.put_all(items, entries).await.expect("put");
            let written = records(store, game_id).await;
            assert_eq!(written.len(), 1);
            assert_eq!(written[0].before, json!({"b": null}));
            assert_eq!(written[0].after, json!({"b": {"p": 2}}));
        });
    }

    #[test]
    fn a_change_outside_its_games_own_collections_is_refused() {
        with_services(async |services| {
            let store = &*services.store;
            let game_id = Uuid::new_v4();
            for watched in [
                Watched::new(Collection::global("games"), game_id),
                Watched::new(Collection::game(Uuid::new_v4(), "config"), "x"),
                Watched::expiring(Collection::game(game_id, "config"), "x"),
            ] {
                let refused = Recorded::new(store, &by(), audit(game_id, vec![watched]));
                assert!(matches!(refused, Err(ServiceError::Internal(_))));
            }
            let mut global = audit(game_id, Vec::new());
            global.game_id = None;
            assert!(matches!(
                Recorded::new(store, &by(), global),
                Err(ServiceError::Internal(_))
            ));
        });
    }
}
