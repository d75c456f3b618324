//! Expiring documents: they live, then go, and a swap of one is decided once.

use std::time::{Duration, Instant};

use offer_engine::store::Collection;
use uuid::Uuid;

use super::{Ctx, bytes};

pub(super) async fn case_expiring_documents_live_then_go(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::global("codes");
    let hour = Duration::from_secs(3600);
    assert!(
        s.insert_expiring(coll, "a", bytes("1"), hour)
            .await
            .expect("insert")
    );
    // A live document is never replaced by an insert.
    assert!(
        !s.insert_expiring(coll, "a", bytes("2"), hour)
            .await
            .expect("insert")
    );
    assert_eq!(
        s.get_expiring(coll, "a").await.expect("get"),
        Some(bytes("1"))
    );
    // Another node sees it; another collection, scope or id does not, nor the documents.
    let peer = ctx.peer().await;
    assert_eq!(
        peer.get_expiring(coll, "a").await.expect("get"),
        Some(bytes("1"))
    );
    assert_eq!(
        s.get_expiring(Collection::global("other"), "a")
            .await
            .expect("get"),
        None
    );
    let game = Collection::game(Uuid::new_v4(), "codes");
    assert_eq!(s.get_expiring(game, "a").await.expect("get"), None);
    assert_eq!(s.get(coll, "a").await.expect("get"), None);
    // Past its time to live it is gone, a swap finds nothing, and the id is free again.
    assert!(
        s.insert_expiring(coll, "brief", bytes("x"), Duration::from_millis(1))
            .await
            .expect("insert")
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.get_expiring(coll, "brief").await.expect("get").is_some() {
        assert!(Instant::now() < deadline, "the document never expired");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        !s.swap_expiring(coll, "brief", &bytes("x"), bytes("y"))
            .await
            .expect("swap")
    );
    assert!(
        s.insert_expiring(coll, "brief", bytes("z"), hour)
            .await
            .expect("insert")
    );
    assert_eq!(
        s.get_expiring(coll, "brief").await.expect("get"),
        Some(bytes("z"))
    );
    assert!(
        !s.swap_expiring(coll, "never", &bytes("x"), bytes("y"))
            .await
            .expect("swap")
    );
    assert_eq!(s.get_expiring(coll, "never").await.expect("get"), None);
}

pub(super) async fn case_expiring_swap_is_decided_once(ctx: Ctx) {
    let s = &ctx.store;
    let coll = Collection::global("sign_ins");
    assert!(
        s.insert_expiring(coll, "d", bytes("pending"), Duration::from_secs(3600))
            .await
            .expect("insert")
    );
    // Many writers on two nodes race to decide it: exactly one wins.
    let peer = ctx.peer().await;
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = if i % 2 == 0 { s.clone() } else { peer.clone() };
        tasks.push(tokio::spawn(async move {
            store
                .swap_expiring(coll, "d", b"pending", bytes(&format!("decided {i}")))
                .await
                .expect("swap")
        }));
    }
    let mut winners = 0;
    for task in tasks {
        winners += usize::from(task.await.expect("join"));
    }
    assert_eq!(winners, 1);
    let decided = s.get_expiring(coll, "d").await.expect("get").expect("live");
    assert!(decided.starts_with(b"decided "));
    // A wrong expectation changes nothing.
    assert!(
        !s.swap_expiring(coll, "d", b"pending", bytes("again"))
            .await
            .expect("swap")
    );
    assert_eq!(
        s.get_expiring(coll, "d").await.expect("get"),
        Some(decided.clone())
    );
    // A swap keeps the time to live: a brief document swapped still goes.
    assert!(
        s.insert_expiring(coll, "b", bytes("1"), Duration::from_millis(300))
            .await
            .expect("insert")
    );
    assert!(
        s.swap_expiring(coll, "b", b"1", bytes("2"))
            .await
            .expect("swap")
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.get_expiring(coll, "b").await.expect("get").is_some() {
        assert!(
            Instant::now() < deadline,
            "a swapped document never expired"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
