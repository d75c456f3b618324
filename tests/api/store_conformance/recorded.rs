//! A write with its record ([`Documents::write_recorded`]): each kind of write lands with its
//! record or, refused, writes neither; a record of another game (or a deployment-wide
//! collection) is refused before anything is written; and of writers racing from one read,
//! only the one that lands leaves a record.
//!
//! [`Documents::write_recorded`]: offer_engine::store::Documents::write_recorded

use offer_engine::store::{
    Collection, Record, RecordedWrite, SharedStore, StoreError, VersionedWrite, Write,
};
use uuid::Uuid;

use super::{Ctx, bytes};

/// The record `id` of `log`.
fn record(log: Collection, id: &str) -> Record {
    Record {
        coll: log,
        id: id.to_owned(),
        value: bytes(&format!("record {id}")),
    }
}

/// Makes `write` with the record `id` of `log`.
async fn recorded(s: &SharedStore, write: Write<'_>, log: Collection, id: &str) -> bool {
    s.write_recorded(RecordedWrite {
        write,
        record: record(log, id),
    })
    .await
    .expect("recorded write")
}

/// The ids of `log`'s records, sorted.
async fn records(s: &SharedStore, log: Collection) -> Vec<String> {
    let mut ids: Vec<String> = s
        .list(log)
        .await
        .expect("list")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    ids.sort();
    ids
}

pub(super) async fn case_a_write_lands_with_its_record_or_neither_does(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let (config, log) = (Collection::game(g, "config"), Collection::game(g, "audit"));

    // A put always lands, with its record.
    let put = Write::PutAll {
        coll: config,
        entries: vec![("a".into(), bytes("A1")), ("b".into(), bytes("B1"))],
    };
    assert!(recorded(s, put, log, "r1").await);
    assert_eq!(s.get(config, "a").await.expect("get"), Some(bytes("A1")));
    assert_eq!(s.get(config, "b").await.expect("get"), Some(bytes("B1")));
    assert_eq!(
        s.get(log, "r1").await.expect("get"),
        Some(bytes("record r1"))
    );

    // An insert of a document already there is refused: neither is written.
    let taken = Write::InsertNew {
        coll: config,
        id: "a",
        value: bytes("A2"),
    };
    assert!(!recorded(s, taken, log, "r2").await);
    assert_eq!(s.get(config, "a").await.expect("get"), Some(bytes("A1")));
    let fresh = Write::InsertNew {
        coll: config,
        id: "c",
        value: bytes("C1"),
    };
    assert!(recorded(s, fresh, log, "r3").await);
    assert_eq!(s.get(config, "c").await.expect("get"), Some(bytes("C1")));

    // A compare-and-swap lost writes neither; one won writes both.
    let stale = Write::CompareAndSwap {
        coll: config,
        id: "a",
        expected: Some(b"A0"),
        new: bytes("A2"),
    };
    assert!(!recorded(s, stale, log, "r4").await);
    let absent = Write::CompareAndSwap {
        coll: config,
        id: "a",
        expected: None,
        new: bytes("A2"),
    };
    assert!(!recorded(s, absent, log, "r5").await);
    assert_eq!(s.get(config, "a").await.expect("get"), Some(bytes("A1")));
    let current = Write::CompareAndSwap {
        coll: config,
        id: "a",
        expected: Some(b"A1"),
        new: bytes("A2"),
    };
    assert!(recorded(s, current, log, "r6").await);
    assert_eq!(s.get(config, "a").await.expect("get"), Some(bytes("A2")));
    let created = Write::CompareAndSwap {
        coll: config,
        id: "d",
        expected: None,
        new: bytes("D1"),
    };
    assert!(recorded(s, created, log, "r7").await);

    // A delete of a document already gone writes neither; of one present, both.
    let gone = Write::Delete {
        coll: config,
        id: "nothing",
    };
    assert!(!recorded(s, gone, log, "r8").await);
    let present = Write::Delete {
        coll: config,
        id: "b",
    };
    assert!(recorded(s, present, log, "r9").await);
    assert_eq!(s.get(config, "b").await.expect("get"), None);

    assert_eq!(records(s, log).await, ["r1", "r3", "r6", "r7", "r9"]);
}

pub(super) async fn case_a_versioned_write_lands_with_its_record_or_neither_does(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let (versions, items, log) = (
        Collection::game(g, "versions"),
        Collection::game(g, "items"),
        Collection::game(g, "audit"),
    );
    let versioned = |expected: Option<&'static [u8]>, new: &str, item: &str| {
        Write::Versioned(VersionedWrite {
            version: versions,
            version_id: "catalogue",
            expected,
            new_version: bytes(new),
            coll: items,
            entries: vec![("sword".to_owned(), bytes(item))],
        })
    };
    assert!(recorded(s, versioned(None, "1", "S1"), log, "r1").await);
    // A writer that read before the first one lost: no item, no version, no record.
    let peer = ctx.peer().await;
    assert!(!recorded(&peer, versioned(None, "1", "S2"), log, "r2").await);
    assert!(!recorded(&peer, versioned(Some(b"0"), "1", "S2"), log, "r3").await);
    assert_eq!(s.get(items, "sword").await.expect("get"), Some(bytes("S1")));
    assert_eq!(
        s.get(versions, "catalogue").await.expect("get"),
        Some(bytes("1"))
    );
    // One that read the current version lands whole.
    assert!(recorded(&peer, versioned(Some(b"1"), "2", "S2"), log, "r4").await);
    assert_eq!(s.get(items, "sword").await.expect("get"), Some(bytes("S2")));
    assert_eq!(
        s.get(versions, "catalogue").await.expect("get"),
        Some(bytes("2"))
    );
    assert_eq!(records(s, log).await, ["r1", "r4"]);
}

pub(super) async fn case_a_record_outside_the_writes_game_is_refused(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let config = Collection::game(g, "config");
    let put = |coll: Collection| Write::PutAll {
        coll,
        entries: vec![("a".into(), bytes("A"))],
    };
    // Into another game's log, into a deployment-wide log, of a deployment-wide collection.
    for (write, log) in [
        (put(config), Collection::game(Uuid::new_v4(), "audit")),
        (put(config), Collection::global("audit")),
        (
            put(Collection::global("members")),
            Collection::game(g, "audit"),
        ),
    ] {
        let refused = s
            .write_recorded(RecordedWrite {
                write,
                record: record(log, "r"),
            })
            .await;
        assert!(
            matches!(refused, Err(StoreError::Corrupt(_))),
            "{refused:?}"
        );
        assert!(s.list(log).await.expect("list").is_empty());
    }
    // A versioned write whose collections are of two games, with a record of either.
    let other = Collection::game(Uuid::new_v4(), "items");
    let refused = s
        .write_recorded(RecordedWrite {
            write: Write::Versioned(VersionedWrite {
                version: Collection::game(g, "versions"),
                version_id: "catalogue",
                expected: None,
                new_version: bytes("1"),
                coll: other,
                entries: vec![("a".into(), bytes("A"))],
            }),
            record: record(Collection::game(g, "audit"), "r"),
        })
        .await;
    assert!(
        matches!(refused, Err(StoreError::Corrupt(_))),
        "{refused:?}"
    );
    assert_eq!(s.get(config, "a").await.expect("get"), None);
    assert_eq!(s.get(other, "a").await.expect("get"), None);
    assert!(
        s.list(Collection::game(g, "audit"))
            .await
            .expect("list")
            .is_empty()
    );
}

/// Writers on several nodes each compare-and-swap one document from the same read, each
/// with its own record: one lands, and its record is the only one.
pub(super) async fn case_of_racing_writers_only_the_one_that_lands_is_recorded(ctx: Ctx) {
    let g = Uuid::new_v4();
    let (approvals, log) = (
        Collection::game(g, "approvals"),
        Collection::game(g, "audit"),
    );
    ctx.store
        .put_all(approvals, vec![("x".into(), bytes("pending"))])
        .await
        .expect("put");
    let mut nodes = Vec::new();
    for _ in 0..4 {
        nodes.push(ctx.peer().await);
    }
    let writers = nodes.iter().enumerate().map(|(i, node)| async move {
        let id = format!("r{i}");
        let write = Write::CompareAndSwap {
            coll: approvals,
            id: "x",
            expected: Some(b"pending"),
            new: bytes(&format!("decided by {i}")),
        };
        (i, recorded(node, write, log, &id).await)
    });
    let landed: Vec<usize> = futures::future::join_all(writers)
        .await
        .into_iter()
        .filter_map(|(i, landed)| landed.then_some(i))
        .collect();
    assert_eq!(landed.len(), 1, "{landed:?}");
    let winner = landed[0];
    assert_eq!(
        ctx.store.get(approvals, "x").await.expect("get"),
        Some(bytes(&format!("decided by {winner}")))
    );
    assert_eq!(records(&ctx.store, log).await, [format!("r{winner}")]);
}
