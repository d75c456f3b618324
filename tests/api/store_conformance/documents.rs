//! Documents: get and put, batches, inserts, compare-and-swap, counters, versioned writes and
//! isolation between games.

use std::collections::HashMap;

use offer_domain::environment::Environment;
use offer_engine::store::{Collection, MoneyKind, StoreError, VersionedWrite};
use uuid::Uuid;

use super::{Ctx, apply, bytes, gold, op};

pub(super) async fn case_a_large_collection_lists_every_document_once(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::game(Uuid::new_v4(), "players_production");
    // More than one page of a paged listing.
    let n = 25_000;
    for chunk in (0..n).collect::<Vec<_>>().chunks(5_000) {
        let entries = chunk
            .iter()
            .map(|i| (format!("player_{i}"), i.to_string().into_bytes()))
            .collect();
        s.put_all(coll, entries).await.expect("put");
    }
    let listed = s.list(coll).await.expect("list");
    assert_eq!(listed.len(), n);
    let ids: std::collections::HashSet<&str> = listed.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids.len(), n);
    assert!(
        listed
            .iter()
            .all(|(id, value)| id.strip_prefix("player_").map(str::as_bytes)
                == Some(value.as_slice()))
    );
}

pub(super) async fn case_get_put(ctx: Ctx) {
    let s = &ctx.store;
    let items = Collection::game(Uuid::new_v4(), "items");
    assert_eq!(s.get(items, "a").await.expect("get"), None);
    assert!(s.list(items).await.expect("list").is_empty());
    s.put_all(items, vec![("a".into(), bytes("{\"v\":1}"))])
        .await
        .expect("put");
    assert_eq!(
        s.get(items, "a").await.expect("get"),
        Some(bytes("{\"v\":1}"))
    );
    assert_eq!(
        s.list(items).await.expect("list"),
        vec![("a".to_string(), bytes("{\"v\":1}"))]
    );
    assert!(s.delete(items, "a").await.expect("delete"));
    assert!(!s.delete(items, "a").await.expect("delete again"));
    assert_eq!(s.get(items, "a").await.expect("get"), None);
    s.ping().await.expect("ping");
}

pub(super) async fn case_put_all(ctx: Ctx) {
    let s = &ctx.store;
    let items = Collection::game(Uuid::new_v4(), "items");
    s.put_all(items, Vec::new()).await.expect("empty put");
    let first: Vec<_> = (0..50)
        .map(|i| (format!("id{i}"), bytes(&format!("old{i}"))))
        .collect();
    s.put_all(items, first).await.expect("put");
    let second: Vec<_> = (25..75)
        .map(|i| (format!("id{i}"), bytes(&format!("new{i}"))))
        .collect();
    s.put_all(items, second).await.expect("overwrite");
    let mut all = s.list(items).await.expect("list");
    all.sort();
    assert_eq!(all.len(), 75);
    let map: HashMap<_, _> = all.into_iter().collect();
    assert_eq!(map["id0"], bytes("old0"));
    assert_eq!(map["id24"], bytes("old24"));
    assert_eq!(map["id25"], bytes("new25"));
    assert_eq!(map["id74"], bytes("new74"));
}

pub(super) async fn case_insert_new(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::global("keys");
    assert!(
        s.insert_new(coll, "k", bytes("first"))
            .await
            .expect("insert")
    );
    assert!(
        !s.insert_new(coll, "k", bytes("second"))
            .await
            .expect("insert")
    );
    assert_eq!(s.get(coll, "k").await.expect("get"), Some(bytes("first")));
}

pub(super) async fn case_counters_add_up_across_writers(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::game(Uuid::new_v4(), "l1_model");
    let sorted = |mut v: Vec<(String, i64)>| {
        v.sort();
        v
    };
    assert!(
        s.add_counters(coll, Vec::new())
            .await
            .expect("read")
            .is_empty()
    );
    let first = s
        .add_counters(coll, vec![("a".into(), 2), ("b".into(), 5)])
        .await
        .expect("add");
    assert_eq!(sorted(first), [("a".to_owned(), 2), ("b".to_owned(), 5)]);
    // Concurrent writers (another instance of the backend too) never lose an addition.
    let peer = ctx.peer().await;
    let mut writers = Vec::new();
    for i in 0..20 {
        let store = if i % 2 == 0 { s.clone() } else { peer.clone() };
        writers.push(tokio::spawn(async move {
            store
                .add_counters(coll, vec![("a".into(), 1), ("c".into(), 3)])
                .await
                .expect("add")
        }));
    }
    for w in writers {
        w.await.expect("join");
    }
    let all = sorted(s.add_counters(coll, Vec::new()).await.expect("read"));
    assert_eq!(
        all,
        [
            ("a".to_owned(), 22),
            ("b".to_owned(), 5),
            ("c".to_owned(), 60)
        ]
    );
    // A counter is a document like any other.
    assert_eq!(s.get(coll, "b").await.expect("get"), Some(bytes("5")));
}

pub(super) async fn case_compare_and_swap(ctx: Ctx) {
    let s = &ctx.store;
    // A game's collection and a deployment-wide one (on Redis, one hash key either way).
    for coll in [
        Collection::game(Uuid::new_v4(), "approvals"),
        Collection::global("device_sign_ins"),
    ] {
        // Absent: only `None` matches.
        assert!(
            !s.compare_and_swap(coll, "a", Some(b"x"), bytes("v1"))
                .await
                .expect("cas")
        );
        assert_eq!(s.get(coll, "a").await.expect("get"), None);
        assert!(
            s.compare_and_swap(coll, "a", None, bytes("v1"))
                .await
                .expect("cas")
        );
        assert!(
            !s.compare_and_swap(coll, "a", None, bytes("v1b"))
                .await
                .expect("cas")
        );
        // Present: succeeds once; the stale expectation then fails.
        assert!(
            s.compare_and_swap(coll, "a", Some(b"v1"), bytes("v2"))
                .await
                .expect("cas")
        );
        assert!(
            !s.compare_and_swap(coll, "a", Some(b"v1"), bytes("v3"))
                .await
                .expect("cas")
        );
        assert_eq!(s.get(coll, "a").await.expect("get"), Some(bytes("v2")));
    }
}

pub(super) async fn case_isolation(ctx: Ctx) {
    let (g1, g2) = (Uuid::new_v4(), Uuid::new_v4());
    let s = &ctx.store;
    let other = ctx.other_space().await;
    s.put_all(
        Collection::game(g1, "items"),
        vec![("x".into(), bytes("g1"))],
    )
    .await
    .expect("put");
    s.put_all(
        Collection::global("games"),
        vec![("x".into(), bytes("global"))],
    )
    .await
    .expect("put");
    assert_eq!(
        s.get(Collection::game(g2, "items"), "x")
            .await
            .expect("get"),
        None
    );
    assert_eq!(
        s.get(Collection::game(g1, "bundles"), "x")
            .await
            .expect("get"),
        None
    );
    for coll in [Collection::game(g1, "items"), Collection::global("games")] {
        assert_eq!(other.get(coll, "x").await.expect("get"), None);
        assert!(other.list(coll).await.expect("list").is_empty());
    }
    apply(s, &op(g1, "t1", MoneyKind::Earned, 10)).await;
    assert_eq!(gold(&other, g1, Environment::Production, "p1").await, 0);
    assert_eq!(gold(s, g2, Environment::Production, "p1").await, 0);
}

pub(super) async fn case_versioned_write_is_all_or_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let (versions, items) = (
        Collection::game(g, "versions"),
        Collection::game(g, "items"),
    );
    let entry = |id: &str, v: &str| (id.to_owned(), bytes(v));
    // No version yet: `None` is expected.
    assert!(
        s.put_all_versioned(VersionedWrite {
            version: versions,
            version_id: "c",
            expected: None,
            new_version: bytes("1"),
            coll: items,
            entries: vec![entry("a", "A1")]
        })
        .await
        .expect("first")
    );
    // A writer that read before it lost: nothing of its write lands.
    let peer = ctx.peer().await;
    assert!(
        !peer
            .put_all_versioned(VersionedWrite {
                version: versions,
                version_id: "c",
                expected: None,
                new_version: bytes("1"),
                coll: items,
                entries: vec![entry("b", "B")]
            })
            .await
            .expect("stale")
    );
    assert_eq!(s.get(items, "b").await.expect("get"), None);
    assert_eq!(s.get(versions, "c").await.expect("get"), Some(bytes("1")));
    // One that read the current version wins, with all its entries.
    assert!(
        peer.put_all_versioned(VersionedWrite {
            version: versions,
            version_id: "c",
            expected: Some(b"1"),
            new_version: bytes("2"),
            coll: items,
            entries: vec![entry("a", "A2"), entry("b", "B")]
        })
        .await
        .expect("current")
    );
    assert_eq!(s.get(items, "a").await.expect("get"), Some(bytes("A2")));
    assert_eq!(s.get(items, "b").await.expect("get"), Some(bytes("B")));
    assert_eq!(s.get(versions, "c").await.expect("get"), Some(bytes("2")));
    // Two games' collections never make one write.
    let other = Collection::game(Uuid::new_v4(), "items");
    assert!(matches!(
        s.put_all_versioned(VersionedWrite {
            version: versions,
            version_id: "c",
            expected: Some(b"2"),
            new_version: bytes("3"),
            coll: other,
            entries: Vec::new()
        })
        .await,
        Err(StoreError::Corrupt(_))
    ));
}

/// The way custom-page drafts append versions: read the head, write the next version and
/// the head against it, and read again on `false`. Writers on two nodes never get the same
/// number, and no version is lost.
pub(super) async fn case_concurrent_versioned_appends_get_distinct_numbers(ctx: Ctx) {
    let game = Uuid::new_v4();
    let heads = Collection::game(game, "heads");
    let versions = Collection::game(game, "versions");
    let peer = ctx.peer().await;
    let mut tasks = Vec::new();
    for i in 0..12 {
        let store = if i % 2 == 0 {
            ctx.store.clone()
        } else {
            peer.clone()
        };
        tasks.push(tokio::spawn(async move {
            loop {
                let head = store.get(heads, "page").await.expect("get");
                let last: u32 = head.as_deref().map_or(0, |b| {
                    std::str::from_utf8(b).expect("utf8").parse().expect("n")
                });
                let next = last + 1;
                let written = store
                    .put_all_versioned(VersionedWrite {
                        version: heads,
                        version_id: "page",
                        expected: head.as_deref(),
                        new_version: bytes(&next.to_string()),
                        coll: versions,
                        entries: vec![(format!("page:{next}"), bytes(&format!("by {i}")))],
                    })
                    .await
                    .expect("write");
                if written {
                    return next;
                }
            }
        }));
    }
    let mut numbers = Vec::new();
    for task in tasks {
        numbers.push(task.await.expect("join"));
    }
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=12).collect::<Vec<u32>>());
    assert_eq!(ctx.store.list(versions).await.expect("list").len(), 12);
}
