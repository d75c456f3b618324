//! The economy figures the wallet step keeps: revenue by group, purchases by day and payer,
//! cohort flows.

use chrono::Utc;
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
        MoneyOutcome::Applied { balance: 0, left_out: 0 }
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
        assert_eq!(apply(s, &o).await, MoneyOutcome::Applied { balance: 0, left_out: 0 });
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
