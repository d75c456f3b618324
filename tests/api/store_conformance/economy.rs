//! The economy figures the wallet step keeps: revenue by group, purchases by day and payer,
//! cohort flows.

use chrono::{NaiveDate, Utc};
use offer_domain::environment::Environment;
use offer_engine::store::{DayAggregate, MoneyKind, MoneyOp, MoneyOutcome, Proof};
use uuid::Uuid;

use super::{Ctx, apply, at, day, op, snapshot};

pub(super) async fn case_cohort_flows_are_kept_beside_the_totals(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let with_cohort = |tx: &str, kind: MoneyKind, amount: i64, cohort: Option<&str>| {
        let mut o = op(g, tx, kind, amount);
        o.cohort = cohort.map(str::to_owned);
        o.import = true;
        o
    };
    for o in [
        with_cohort("a", MoneyKind::Earned, 300, Some("2026-W40")),
        with_cohort("b", MoneyKind::Spent, 100, Some("2026-W40")),
        with_cohort("c", MoneyKind::Earned, 50, Some("2026-W41")),
        with_cohort("d", MoneyKind::Earned, 7, None),
        with_cohort("e", MoneyKind::Purchase, 999, Some("2026-W40")),
    ] {
        apply(s, &o).await;
    }
    // A replay counts once in its cohort too.
    apply(
        s,
        &with_cohort("a", MoneyKind::Earned, 300, Some("2026-W40")),
    )
    .await;
    let (_, _, days) = snapshot(s, g).await;
    let day = &days[0];
    assert_eq!(day.earned["gold"], 357);
    assert_eq!(day.spent["gold"], 100);
    assert_eq!(day.revenue_treatment_cents, 999);
    assert_eq!(day.cohorts.len(), 2, "{:?}", day.cohorts);
    let w40 = &day.cohorts["2026-W40"];
    assert_eq!((w40.earned["gold"], w40.spent["gold"]), (300, 100));
    let w41 = &day.cohorts["2026-W41"];
    assert_eq!(w41.earned["gold"], 50);
    assert!(w41.spent.is_empty());
}

pub(super) async fn case_purchases_kept_by_day_and_payer(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let today = Utc::now();
    let yesterday = today - chrono::Duration::days(1);
    let at = |tx: &str, player: &str, cents: i64, ts: chrono::DateTime<Utc>| {
        let mut o = op(g, tx, MoneyKind::Purchase, cents);
        o.player_id = player.into();
        o.ts = ts;
        o
    };
    for o in [
        at("a", "p1", 100, yesterday),
        at("b", "p1", 250, today),
        at("c", "p1", 50, today),
        at("d", "p2", 999, today),
    ] {
        apply(s, &o).await;
    }
    // A replay and money that is not revenue leave the days alone.
    apply(s, &at("d", "p2", 999, today)).await;
    apply(s, &op(g, "e", MoneyKind::Earned, 70)).await;
    let days = [
        yesterday.date_naive(),
        today.date_naive(),
        (today + chrono::Duration::days(1)).date_naive(),
    ];
    let mut revenues = s.day_revenues(g, env, &days).await.expect("revenues");
    for day in &mut revenues {
        day.sort();
    }
    assert_eq!(
        revenues,
        vec![
            vec![("p1".to_owned(), 100)],
            vec![("p1".to_owned(), 300), ("p2".to_owned(), 999)],
            vec![],
        ]
    );
    let sandbox = s
        .day_revenues(g, Environment::Sandbox, &days)
        .await
        .expect("revenues");
    assert!(sandbox.iter().all(Vec::is_empty));
}

pub(super) async fn case_purchase_revenue_by_group(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "e1", MoneyKind::Earned, 7)).await;
    let treated = op(g, "buy1", MoneyKind::Purchase, 499);
    assert_eq!(
        apply(s, &treated).await,
        MoneyOutcome::Applied {
            balance: 0,
            left_out: 0
        }
    );
    let control = MoneyOp {
        holdout: true,
        ..op(g, "buy2", MoneyKind::Purchase, 199)
    };
    apply(s, &control).await;
    apply(
        s,
        &MoneyOp {
            ts: at(2, 1),
            ..op(g, "buy3", MoneyKind::Purchase, 1000)
        },
    )
    .await;
    let (balance, ledger, _) = snapshot(s, g).await;
    assert_eq!(balance, 7, "a purchase moves no wallet");
    assert_eq!(ledger.len(), 4);
    assert_eq!(ledger[1].kind, MoneyKind::Purchase);
    assert_eq!(ledger[1].balance_after, 0);
    let days = s
        .day_aggregates(g, Environment::Production, &[day(1), day(2), day(3)])
        .await
        .expect("aggregates");
    assert_eq!(days[0].revenue_treatment_cents, 499);
    assert_eq!(days[0].revenue_control_cents, 199);
    assert_eq!(days[1].revenue_treatment_cents, 1000);
    assert_eq!(days[1].revenue_control_cents, 0);
    assert_eq!(days[2], DayAggregate::default());
}

/// A purchase whose revenue does not count (unverified, or a sandbox transaction on a live
/// key) keeps its ledger line with its proof and shows as the day's unverified revenue, and
/// adds to no lifetime spend, no payer's day and no group's revenue; a verified one counts as
/// a purchase always did.
pub(super) async fn case_unproven_purchases_stay_out_of_revenue(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let with = |tx: &str, cents: i64, proof: Proof, holdout: bool| MoneyOp {
        proof: Some(proof),
        holdout,
        ..op(g, tx, MoneyKind::Purchase, cents)
    };
    for o in [
        with("v", 499, Proof::Verified, false),
        with("u", 1_000_000, Proof::Unverified, false),
        with("uh", 300, Proof::Unverified, true),
        with("s", 99, Proof::Sandbox, false),
    ] {
        assert_eq!(
            apply(s, &o).await,
            MoneyOutcome::Applied {
                balance: 0,
                left_out: 0
            }
        );
    }
    // A replay of an unverified purchase is a replay like any other.
    assert_eq!(
        apply(s, &with("u", 1_000_000, Proof::Unverified, false)).await,
        MoneyOutcome::Duplicate { balance: 0 }
    );
    assert_eq!(s.spend_cents(g, env, "p1").await.expect("spend"), 499);
    assert_eq!(
        s.spends(g, env).await.expect("spends"),
        vec![("p1".to_owned(), 499)]
    );
    let revenues = s.day_revenues(g, env, &[day(1)]).await.expect("revenues");
    assert_eq!(revenues, vec![vec![("p1".to_owned(), 499)]]);
    let days = s
        .day_aggregates(g, env, &[day(1), day(2)])
        .await
        .expect("aggregates");
    assert_eq!(days[0].revenue_treatment_cents, 499);
    assert_eq!(days[0].revenue_control_cents, 0);
    assert_eq!(days[0].revenue_unverified_cents, 1_000_000 + 300 + 99);
    assert_eq!(days[1], DayAggregate::default());
    let proofs: Vec<(String, Option<Proof>)> = s
        .ledger(g, env)
        .await
        .expect("ledger")
        .into_iter()
        .map(|line| (line.tx_id, line.proof))
        .collect();
    assert_eq!(
        proofs,
        [
            ("v".to_owned(), Some(Proof::Verified)),
            ("u".to_owned(), Some(Proof::Unverified)),
            ("uh".to_owned(), Some(Proof::Unverified)),
            ("s".to_owned(), Some(Proof::Sandbox)),
        ]
    );
}

pub(super) async fn case_day_caps_leave_the_excess_out_of_the_day(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let capped = |tx: &str, player: &str, kind: MoneyKind, amount: i64, cap: Option<i64>| {
        let mut o = op(g, tx, kind, amount);
        o.player_id = player.into();
        o.day_cap = cap;
        o.cohort = Some("2026-W40".into());
        o
    };
    let applied = |balance, left_out| MoneyOutcome::Applied { balance, left_out };
    for (o, expected) in [
        (
            capped("a", "p1", MoneyKind::Earned, 600, Some(1000)),
            applied(600, 0),
        ),
        // 1200 reported: 200 above the cap.
        (
            capped("b", "p1", MoneyKind::Earned, 600, Some(1000)),
            applied(1200, 200),
        ),
        // Already above: all of it.
        (
            capped("c", "p1", MoneyKind::Earned, 100, Some(1000)),
            applied(1300, 100),
        ),
        (
            capped("d", "p2", MoneyKind::Earned, 5000, Some(1000)),
            applied(5000, 4000),
        ),
        (
            capped("e", "p1", MoneyKind::Spent, 1000, Some(500)),
            applied(300, 500),
        ),
        (
            capped("f", "p3", MoneyKind::Earned, 50, None),
            applied(50, 0),
        ),
        (
            capped("g", "p3", MoneyKind::Purchase, 499, Some(1)),
            applied(0, 0),
        ),
    ] {
        assert_eq!(apply(s, &o).await, expected, "{}", o.tx_id);
    }
    // A replay counts once, in the day totals too.
    assert_eq!(
        apply(s, &capped("b", "p1", MoneyKind::Earned, 600, Some(1000))).await,
        MoneyOutcome::Duplicate { balance: 1200 }
    );
    let days = s.day_aggregates(g, env, &[day(1)]).await.expect("days");
    let d = &days[0];
    assert_eq!(d.earned["gold"], 600 + 400 + 1000 + 50);
    assert_eq!(d.spent["gold"], 500);
    assert_eq!(d.cohorts["2026-W40"].earned["gold"], 2050);
    assert_eq!(d.left_out_earned["gold"], 200 + 100 + 4000);
    assert_eq!(d.left_out_spent["gold"], 500);
    assert_eq!(d.capped_earned["gold"], 2, "p1 and p2, p1 once");
    assert_eq!(d.capped_spent["gold"], 1);
    assert_eq!(d.revenue_treatment_cents, 499);
    // Every unit is in the wallets and the ledger.
    let ledger = s.ledger(g, env).await.expect("ledger");
    assert_eq!(ledger.len(), 7);
    assert_eq!(
        s.balance(g, env, "p2", "gold").await.expect("balance"),
        5000
    );
    let mut totals: Vec<(MoneyKind, String, i64)> = s
        .player_day_totals(g, env, &[day(1), day(2)])
        .await
        .expect("totals")
        .into_iter()
        .map(|t| (t.kind, t.currency_id, t.total))
        .collect();
    totals.sort_by_key(|t| (t.2, format!("{:?}", t.0)));
    assert_eq!(
        totals,
        [
            (MoneyKind::Earned, "gold".to_owned(), 50),
            (MoneyKind::Spent, "gold".to_owned(), 1000),
            (MoneyKind::Earned, "gold".to_owned(), 1300),
            (MoneyKind::Earned, "gold".to_owned(), 5000),
        ]
    );
    let left = s
        .player_left_out(g, env, "p1", &["gold".to_owned()], &[day(2), day(1)])
        .await
        .expect("left out");
    let left: Vec<(NaiveDate, MoneyKind, i64)> = left
        .into_iter()
        .map(|l| (l.day, l.kind, l.left_out))
        .collect();
    assert_eq!(
        left,
        [
            (day(1), MoneyKind::Earned, 300),
            (day(1), MoneyKind::Spent, 500)
        ]
    );
    assert!(
        s.player_left_out(g, env, "p3", &["gold".to_owned()], &[day(1)])
            .await
            .expect("left out")
            .is_empty()
    );
    // Another environment's days are apart.
    assert!(
        s.player_day_totals(g, Environment::Sandbox, &[day(1)])
            .await
            .expect("totals")
            .is_empty()
    );
}

/// Many capped events of a few players at once (on Redis, combined into script calls of many
/// events): each player's day counts exactly up to the cap, whatever the order.
pub(super) async fn case_concurrent_capped_events_count_up_to_the_cap(ctx: Ctx) {
    const CAP: i64 = 1000;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let tasks: Vec<_> = (0..80)
        .map(|i| {
            let s = std::sync::Arc::clone(&ctx.store);
            tokio::spawn(async move {
                let mut o = op(g, &format!("t{i}"), MoneyKind::Earned, 70 + i);
                o.player_id = format!("p{}", i % 4);
                o.day_cap = Some(CAP);
                s.apply_money(&o).await.expect("apply_money")
            })
        })
        .collect();
    let mut left_out = 0;
    for task in tasks {
        match task.await.expect("task") {
            MoneyOutcome::Applied { left_out: l, .. } => left_out += l,
            other => panic!("unexpected {other:?}"),
        }
    }
    let reported: i64 = (0..80).map(|i| 70 + i).sum();
    let days = ctx
        .store
        .day_aggregates(g, env, &[day(1)])
        .await
        .expect("days");
    assert_eq!(
        days[0].earned["gold"],
        4 * CAP,
        "each player's day counts up to the cap"
    );
    assert_eq!(days[0].left_out_earned["gold"], reported - 4 * CAP);
    assert_eq!(left_out, reported - 4 * CAP);
    assert_eq!(days[0].capped_earned["gold"], 4);
}
