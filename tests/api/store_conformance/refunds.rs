//! Refunds in the wallet step: a refund moves every record a purchase moves, by its negated
//! amount (the lifetime spend, the payer's day, the day's revenue of the player's group), on
//! its own day, while its ledger line keeps kind `refund` and the positive amount; it counts
//! once per `tx_id`, whether it comes alone or among many events at once.

use offer_domain::environment::Environment;
use offer_engine::store::{MoneyKind, MoneyOp, MoneyOutcome};
use uuid::Uuid;

use super::{Ctx, apply, at, day, op};

pub(super) async fn case_refunds_take_revenue_back(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let on = |tx: &str, kind: MoneyKind, player: &str, cents: i64, d: u32| MoneyOp {
        player_id: player.into(),
        ts: at(d, 12),
        ..op(g, tx, kind, cents)
    };
    apply(s, &on("buy", MoneyKind::Purchase, "p1", 499, 1)).await;
    let control = MoneyOp {
        holdout: true,
        ..on("buy", MoneyKind::Purchase, "p2", 300, 1)
    };
    apply(s, &control).await;

    // Refunded on the next day: all of p1's purchase, part of p2's.
    let refund = on("refund:app_store:1", MoneyKind::Refund, "p1", 499, 2);
    assert_eq!(
        apply(s, &refund).await,
        MoneyOutcome::Applied {
            balance: 0,
            left_out: 0
        }
    );
    let partial = MoneyOp {
        holdout: true,
        ..on("refund:google_play:t", MoneyKind::Refund, "p2", 100, 2)
    };
    apply(s, &partial).await;
    // A replay counts once; the same tx_id with another amount is a conflict.
    assert_eq!(
        apply(s, &refund).await,
        MoneyOutcome::Duplicate { balance: 0 }
    );
    assert_eq!(
        apply(s, &on("refund:app_store:1", MoneyKind::Refund, "p1", 1, 2)).await,
        MoneyOutcome::TxConflict
    );

    assert_eq!(s.spend_cents(g, env, "p1").await.expect("spend"), 0);
    assert_eq!(s.spend_cents(g, env, "p2").await.expect("spend"), 200);
    let ledger = s.ledger(g, env).await.expect("ledger");
    assert_eq!(ledger.len(), 4);
    assert_eq!(ledger[2].kind, MoneyKind::Refund);
    assert_eq!(ledger[2].kind.event_name(), "refund");
    assert_eq!(
        (
            ledger[2].amount,
            ledger[2].balance_after,
            ledger[2].currency_id.as_str()
        ),
        (499, 0, "")
    );
    // The purchase's day keeps its revenue; the refund's day has it taken back.
    let days = s
        .day_aggregates(g, env, &[day(1), day(2)])
        .await
        .expect("aggregates");
    assert_eq!(
        (
            days[0].revenue_treatment_cents,
            days[0].revenue_control_cents
        ),
        (499, 300)
    );
    assert_eq!(
        (
            days[1].revenue_treatment_cents,
            days[1].revenue_control_cents
        ),
        (-499, -100)
    );
    // What the stores took back is shown beside the net, on the refund's day.
    assert_eq!((days[0].refunded_cents, days[1].refunded_cents), (0, 599));
    let mut revenues = s
        .day_revenues(g, env, &[day(1), day(2)])
        .await
        .expect("revenues");
    for d in &mut revenues {
        d.sort();
    }
    assert_eq!(
        revenues,
        vec![
            vec![("p1".to_owned(), 499), ("p2".to_owned(), 300)],
            vec![("p1".to_owned(), -499), ("p2".to_owned(), -100)],
        ]
    );
}

pub(super) async fn case_a_refund_passes_the_kill_switch(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let by = |player: &str, tx: &str, kind: MoneyKind, cents: i64| MoneyOp {
        player_id: player.into(),
        ..op(g, tx, kind, cents)
    };
    for p in ["a", "b", "c"] {
        apply(s, &by(p, "buy", MoneyKind::Purchase, 500)).await;
    }
    s.set_kill_level(g, 3).await.expect("kill 3");
    // Alone: the game's SDK is off, the store's refund still counts.
    let applied = MoneyOutcome::Applied {
        balance: 0,
        left_out: 0,
    };
    assert_eq!(
        apply(s, &by("a", "refund:1", MoneyKind::Refund, 500)).await,
        applied
    );
    // Among the game's other events in flight (one script call on Redis): each answered as
    // alone, the refunds applied, the rest refused.
    let mixed = [
        by("b", "refund:2", MoneyKind::Refund, 200),
        by("b", "more", MoneyKind::Purchase, 100),
        by("c", "refund:3", MoneyKind::Refund, 500),
        by("c", "gold", MoneyKind::Earned, 10),
    ];
    let answers = futures::future::join_all(mixed.iter().map(|o| s.apply_money(o))).await;
    let answers: Vec<MoneyOutcome> = answers.into_iter().map(|a| a.expect("answered")).collect();
    assert_eq!(
        answers,
        [
            applied.clone(),
            MoneyOutcome::KillSwitch,
            applied,
            MoneyOutcome::KillSwitch
        ]
    );
    let mut spends = s.spends(g, env).await.expect("spends");
    spends.sort();
    assert_eq!(
        spends,
        [
            ("a".to_owned(), 0),
            ("b".to_owned(), 300),
            ("c".to_owned(), 0)
        ]
    );
    assert_eq!(s.balance(g, env, "c", "gold").await.expect("balance"), 0);
}

pub(super) async fn case_many_refunds_at_once_count_once_each(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let players: Vec<String> = (0..24).map(|i| format!("payer|{i}")).collect();
    let by = |player: &str, tx: &str, kind: MoneyKind, cents: i64| MoneyOp {
        player_id: player.into(),
        ..op(g, tx, kind, cents)
    };
    let buys: Vec<MoneyOp> = players
        .iter()
        .map(|p| by(p, "buy", MoneyKind::Purchase, 100))
        .collect();
    for answer in futures::future::join_all(buys.iter().map(|o| s.apply_money(o))).await {
        assert_eq!(
            answer.expect("applied"),
            MoneyOutcome::Applied {
                balance: 0,
                left_out: 0
            }
        );
    }
    // Every refund twice, all in flight at once (on Redis they share script calls).
    let refunds: Vec<MoneyOp> = players
        .iter()
        .flat_map(|p| {
            let refund = by(p, "refund:google_play:x", MoneyKind::Refund, 40);
            [refund.clone(), refund]
        })
        .collect();
    let answers = futures::future::join_all(refunds.iter().map(|o| s.apply_money(o))).await;
    let applied = answers
        .iter()
        .filter(|a| matches!(a, Ok(MoneyOutcome::Applied { .. })))
        .count();
    let duplicates = answers
        .iter()
        .filter(|a| matches!(a, Ok(MoneyOutcome::Duplicate { .. })))
        .count();
    assert_eq!((applied, duplicates), (players.len(), players.len()));
    let mut spends = s.spends(g, env).await.expect("spends");
    spends.sort();
    let mut expected: Vec<(String, i64)> = players.iter().map(|p| (p.clone(), 60)).collect();
    expected.sort();
    assert_eq!(spends, expected);
    let days = s
        .day_aggregates(g, env, &[day(1)])
        .await
        .expect("aggregates");
    assert_eq!(days[0].revenue_treatment_cents, 60 * players.len() as i64);
    assert_eq!(days[0].refunded_cents, 40 * players.len() as i64);
}
