//! The inter-node bus and the decision log.

use std::sync::Arc;
use std::time::{Duration, Instant};

use offer_engine::store::DecisionFilter;
use offer_wire::bus::BusMessage;
use uuid::Uuid;

use super::{Ctx, at, bytes};

pub(super) async fn case_publish_reaches_subscriber(ctx: Ctx) {
    let receiver_node = ctx.peer().await;
    let mut rx = receiver_node.subscribe();
    let mut own_rx = ctx.store.subscribe();
    let msg = BusMessage::KillSwitch {
        game_id: Uuid::new_v4(),
        level: 2,
        reason: "incident".into(),
        updated_at: at(1, 0),
    };
    ctx.store.publish(&msg).await.expect("publish");
    let got = tokio::time::timeout(Duration::from_secs(2), rx.recv())
        .await
        .expect("message within 2 s")
        .expect("bus open");
    assert_eq!(got, msg);
    let own = tokio::time::timeout(Duration::from_secs(2), own_rx.recv())
        .await
        .expect("sender receives its own message")
        .expect("bus open");
    assert_eq!(own, msg);
    // Another key space hears nothing.
    let stranger = ctx.other_space().await;
    let mut stranger_rx = stranger.subscribe();
    ctx.store
        .publish(&BusMessage::GameChanged {
            game_id: Uuid::new_v4(),
            origin: Uuid::new_v4(),
        })
        .await
        .expect("publish");
    assert!(
        tokio::time::timeout(Duration::from_millis(200), stranger_rx.recv())
            .await
            .is_err()
    );
}

pub(super) async fn case_decisions_expire_and_stay_in_their_game(ctx: Ctx) {
    let s = &ctx.store;
    let (g, other) = (Uuid::new_v4(), Uuid::new_v4());
    let (d1, d2, brief) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    let hour = Duration::from_secs(3600);
    s.put_decisions(g, Vec::new(), hour).await.expect("empty");
    s.put_decisions(
        g,
        vec![(d1, bytes("{\"n\":1}")), (d2, bytes("{\"n\":2}"))],
        hour,
    )
    .await
    .expect("put");
    assert_eq!(
        s.get_decision(g, d1).await.expect("get"),
        Some(bytes("{\"n\":1}"))
    );
    // Another node reads them; another game, or an unknown id, finds nothing.
    let peer = ctx.peer().await;
    assert_eq!(
        peer.get_decision(g, d2).await.expect("get"),
        Some(bytes("{\"n\":2}"))
    );
    assert_eq!(s.get_decision(other, d1).await.expect("get"), None);
    assert_eq!(s.get_decision(g, Uuid::new_v4()).await.expect("get"), None);
    // Written again, a record is replaced.
    s.put_decisions(g, vec![(d1, bytes("{\"n\":3}"))], hour)
        .await
        .expect("replace");
    assert_eq!(
        s.get_decision(g, d1).await.expect("get"),
        Some(bytes("{\"n\":3}"))
    );
    // Past its time to live a record is gone; the others stay.
    s.put_decisions(g, vec![(brief, bytes("{}"))], Duration::from_millis(1))
        .await
        .expect("put brief");
    let deadline = Instant::now() + Duration::from_secs(5);
    while s.get_decision(g, brief).await.expect("get").is_some() {
        assert!(Instant::now() < deadline, "the record never expired");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(s.get_decision(g, d2).await.expect("get").is_some());
    // A scan of the game's records finds what the filter keeps, from any node, and never
    // another game's or an expired one.
    s.put_decisions(other, vec![(Uuid::new_v4(), bytes("{\"n\":3}"))], hour)
        .await
        .expect("put other");
    let threes: DecisionFilter = Arc::new(|b: &[u8]| b == b"{\"n\":3}");
    assert_eq!(
        peer.find_decisions(g, threes).await.expect("find"),
        vec![bytes("{\"n\":3}")]
    );
    let mut all = s
        .find_decisions(g, Arc::new(|_: &[u8]| true))
        .await
        .expect("find all");
    all.sort();
    assert_eq!(all, vec![bytes("{\"n\":2}"), bytes("{\"n\":3}")]);
}
