//! Erasing a player, the store told only the game, environment, player and tombstone: its
//! wallet goes; its spends, day spends, day totals, ledger lines,
//! idempotency records and exposures (of an experiment the game no longer has too) go on
//! under the tombstone with every total unchanged; a replay under the tombstone is still
//! recognised; the same id coming back starts with nothing; another player (one whose id
//! the erased one's is a prefix of, or whose fields look alike) and the other environment
//! are untouched; and a second run changes nothing.

use offer_domain::environment::Environment;
use offer_engine::store::{
    Exposure, ExposureKey, ExposureTotals, MoneyKind, MoneyOutcome, PlayerErasure, Proof,
    SharedStore,
};
use uuid::Uuid;

use super::{Ctx, apply, at, day, gold, op};

const PLAYER: &str = "ab";
const TOMBSTONE: &str = "erased-1";
/// Another player whose id starts with the erased one's.
const OTHER: &str = "ab:c";

/// The money events of `player`: earned above a day cap, spent, a verified and an
/// unverified purchase on the next day.
async fn play(store: &SharedStore, game: Uuid, player: &str) {
    let mut earn = op(game, "e1", MoneyKind::Earned, 300);
    earn.day_cap = Some(100);
    let spend = op(game, "s1", MoneyKind::Spent, 120);
    let mut buy = op(game, "p1", MoneyKind::Purchase, 499);
    buy.ts = at(2, 9);
    buy.proof = Some(Proof::Verified);
    let mut unproven = op(game, "p2", MoneyKind::Purchase, 100);
    unproven.ts = at(2, 10);
    unproven.proof = Some(Proof::Unverified);
    for mut event in [earn, spend, buy, unproven] {
        event.player_id = player.into();
        assert!(
            matches!(apply(store, &event).await, MoneyOutcome::Applied { .. }),
            "{event:?}"
        );
    }
}

/// Everything the game's production figures read, with `from` named `to`, sorted.
async fn figures(
    store: &SharedStore,
    game: Uuid,
    experiment: Uuid,
    (from, to): (&str, &str),
) -> String {
    let env = Environment::Production;
    let days = [day(1), day(2)];
    let rename = |p: String| if p == from { to.to_owned() } else { p };
    let mut spends: Vec<_> = store.spends(game, env).await.expect("spends");
    spends = spends.into_iter().map(|(p, c)| (rename(p), c)).collect();
    spends.sort();
    let mut revenues = store
        .day_revenues(game, env, &days)
        .await
        .expect("day revenues");
    for day in &mut revenues {
        *day = day.drain(..).map(|(p, c)| (rename(p), c)).collect();
        day.sort();
    }
    let ledger: Vec<_> = store
        .ledger(game, env)
        .await
        .expect("ledger")
        .into_iter()
        .map(|mut l| {
            l.player_id = rename(l.player_id);
            l
        })
        .collect();
    let aggregates = store
        .day_aggregates(game, env, &days)
        .await
        .expect("aggregates");
    let mut totals: Vec<_> = store
        .player_day_totals(game, env, &days)
        .await
        .expect("day totals")
        .into_iter()
        .map(|t| format!("{t:?}"))
        .collect();
    totals.sort();
    let mut exposures: Vec<_> = store
        .exposures(game, env, experiment)
        .await
        .expect("exposures")
        .into_iter()
        .map(|e| Exposure {
            player_id: rename(e.player_id),
            ..e
        })
        .map(|e| format!("{e:?}"))
        .collect();
    exposures.sort();
    format!("{spends:?}\n{revenues:?}\n{ledger:?}\n{aggregates:?}\n{totals:?}\n{exposures:?}")
}

pub(super) async fn case_erasure_renames_the_money_records(ctx: Ctx) {
    let s = &ctx.store;
    let (game, experiment) = (Uuid::new_v4(), Uuid::new_v4());
    let env = Environment::Production;
    play(s, game, PLAYER).await;
    play(s, game, OTHER).await;
    let mut sandbox = op(game, "sb", MoneyKind::Earned, 7);
    sandbox.env = Environment::Sandbox;
    sandbox.player_id = PLAYER.into();
    apply(s, &sandbox).await;
    let exposure = |variant, player_id| ExposureKey {
        game_id: game,
        env,
        experiment_id: experiment,
        variant,
        player_id,
    };
    let bought = ExposureTotals {
        shown: 1,
        purchases: 1,
        revenue_cents: 499,
    };
    s.add_exposure(exposure("v", PLAYER), bought)
        .await
        .expect("exposure");
    // An experiment that counted the player and is no longer the game's: the erasure is
    // told neither the experiments nor the days, and reaches every one all the same.
    let gone = Uuid::new_v4();
    s.add_exposure(
        ExposureKey {
            experiment_id: gone,
            ..exposure("v", PLAYER)
        },
        bought,
    )
    .await
    .expect("exposure");
    // Its field reads `s2:vab` like the erased player's `s1:vab`.
    s.add_exposure(exposure("va", "b"), bought)
        .await
        .expect("exposure");
    let before = figures(s, game, experiment, (PLAYER, TOMBSTONE)).await;
    let left_before = s
        .player_left_out(game, env, PLAYER, &["gold".into()], &[day(1)])
        .await
        .expect("left out");
    assert_eq!(left_before.len(), 1, "the day cap left some out");

    let erasure = PlayerErasure {
        game_id: game,
        env,
        player_id: PLAYER.into(),
        tombstone: TOMBSTONE.into(),
    };
    assert!(s.erase_player(&erasure).await.expect("erase") > 0);
    assert_eq!(
        figures(s, game, experiment, (PLAYER, TOMBSTONE)).await,
        before
    );
    let players: Vec<_> = s
        .exposures(game, env, gone)
        .await
        .expect("exposures")
        .into_iter()
        .map(|e| (e.player_id, e.totals))
        .collect();
    assert_eq!(players, [(TOMBSTONE.to_owned(), bought)]);
    // The wallet is gone, not renamed; the spend is the tombstone's.
    assert_eq!(gold(s, game, env, PLAYER).await, 0);
    assert_eq!(gold(s, game, env, TOMBSTONE).await, 0);
    assert_eq!(s.spend_cents(game, env, PLAYER).await.expect("spend"), 0);
    assert_eq!(
        s.spend_cents(game, env, TOMBSTONE).await.expect("spend"),
        499
    );
    assert!(
        s.ledger(game, env)
            .await
            .expect("ledger")
            .iter()
            .all(|l| l.player_id != PLAYER)
    );
    assert!(
        s.player_left_out(game, env, PLAYER, &["gold".into()], &[day(1)])
            .await
            .expect("left out")
            .is_empty()
    );
    assert_eq!(
        s.player_left_out(game, env, TOMBSTONE, &["gold".into()], &[day(1)])
            .await
            .expect("left out"),
        left_before
    );
    // Another peer's replay of the event under the tombstone is the same event.
    let mut replay = op(game, "e1", MoneyKind::Earned, 300);
    replay.player_id = TOMBSTONE.into();
    assert_eq!(
        apply(&ctx.peer().await, &replay).await,
        MoneyOutcome::Duplicate { balance: 300 }
    );
    // Nothing left: a second run changes nothing.
    assert_eq!(s.erase_player(&erasure).await.expect("again"), 0);
    // The other player and the sandbox are untouched.
    assert_eq!(gold(s, game, env, OTHER).await, 180);
    assert_eq!(s.spend_cents(game, env, OTHER).await.expect("spend"), 499);
    assert_eq!(gold(s, game, Environment::Sandbox, PLAYER).await, 7);
    // The same id coming back starts with nothing, its `tx_id`s free again.
    let mut back = op(game, "e1", MoneyKind::Earned, 5);
    back.player_id = PLAYER.into();
    assert_eq!(
        apply(s, &back).await,
        MoneyOutcome::Applied {
            balance: 5,
            left_out: 0
        }
    );
}
