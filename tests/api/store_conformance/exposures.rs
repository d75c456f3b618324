//! Experiment exposures: additions sum per experiment, variant and player, from any node, and
//! each game, environment and experiment keeps its own.

use offer_domain::environment::Environment;
use offer_engine::store::{Exposure, ExposureKey, ExposureTotals};
use uuid::Uuid;

use super::Ctx;

fn totals(shown: u64, purchases: u64, revenue_cents: u64) -> ExposureTotals {
    ExposureTotals {
        shown,
        purchases,
        revenue_cents,
    }
}

pub(super) async fn case_exposures_add_up_per_player(ctx: Ctx) {
    let s = &ctx.store;
    let (game, experiment) = (Uuid::new_v4(), Uuid::new_v4());
    let key = |variant, player_id| ExposureKey {
        game_id: game,
        env: Environment::Production,
        experiment_id: experiment,
        variant,
        player_id,
    };
    s.add_exposure(key("control", "p:1"), totals(1, 0, 0))
        .await
        .expect("add");
    s.add_exposure(key("control", "p:1"), totals(1, 0, 0))
        .await
        .expect("add");
    // Another node adds to the same totals; a variant whose name looks like a prefix of the
    // other's player ids stays apart.
    let peer = ctx.peer().await;
    peer.add_exposure(key("control", "p:1"), totals(0, 1, 499))
        .await
        .expect("add");
    peer.add_exposure(key("control:p", ":1"), totals(3, 0, 0))
        .await
        .expect("add");
    s.add_exposure(key("cheap", "p:2"), totals(0, 2, 798))
        .await
        .expect("add");
    let mut got = s
        .exposures(game, Environment::Production, experiment)
        .await
        .expect("read");
    got.sort_by(|a, b| (&a.variant, &a.player_id).cmp(&(&b.variant, &b.player_id)));
    let row = |variant: &str, player_id: &str, t| Exposure {
        variant: variant.into(),
        player_id: player_id.into(),
        totals: t,
    };
    assert_eq!(
        got,
        vec![
            row("cheap", "p:2", totals(0, 2, 798)),
            row("control", "p:1", totals(2, 1, 499)),
            row("control:p", ":1", totals(3, 0, 0)),
        ]
    );
    assert_eq!(
        peer.exposures(game, Environment::Production, experiment)
            .await
            .expect("read")
            .len(),
        3
    );
    // The other environment, another experiment and another game see none of it.
    for (g, env, x) in [
        (game, Environment::Sandbox, experiment),
        (game, Environment::Production, Uuid::new_v4()),
        (Uuid::new_v4(), Environment::Production, experiment),
    ] {
        assert!(s.exposures(g, env, x).await.expect("read").is_empty());
    }
}
