//! The wallet step: earn and spend, overspends, replays, the kill switch, environments,
//! imports, concurrent spends, many mixed events of two games in flight at once (on Redis
//! they share script calls) and randomised ledger sums.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use chrono::NaiveDate;
use offer_domain::environment::Environment;
use offer_engine::store::{DayAggregate, MoneyKind, MoneyOp, MoneyOutcome};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use uuid::Uuid;

use super::{Ctx, apply, at, day, gold, op, snapshot};

pub(super) async fn case_earn_then_spend(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    assert_eq!(
        apply(s, &op(g, "e1", MoneyKind::Earned, 100)).await,
        MoneyOutcome::Applied {
            balance: 100,
            left_out: 0
        }
    );
    assert_eq!(
        apply(s, &op(g, "s1", MoneyKind::Spent, 30)).await,
        MoneyOutcome::Applied {
            balance: 70,
            left_out: 0
        }
    );
    let (balance, ledger, days) = snapshot(s, g).await;
    assert_eq!(balance, 70);
    assert_eq!(ledger.len(), 2);
    assert_eq!(ledger[0].tx_id, "e1");
    assert_eq!(ledger[0].kind, MoneyKind::Earned);
    assert_eq!(ledger[0].balance_after, 100);
    assert_eq!(ledger[1].kind, MoneyKind::Spent);
    assert_eq!(ledger[1].amount, 30);
    assert_eq!(ledger[1].balance_after, 70);
    assert_eq!(ledger[1].ts, at(1, 12));
    assert_eq!(days[0].earned, BTreeMap::from([("gold".to_string(), 100)]));
    assert_eq!(days[0].spent, BTreeMap::from([("gold".to_string(), 30)]));
    // A day without events is empty.
    let other_day = s
        .day_aggregates(g, Environment::Production, &[day(2)])
        .await
        .expect("aggregates");
    assert_eq!(other_day, vec![DayAggregate::default()]);
}

pub(super) async fn case_overspend_writes_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "e1", MoneyKind::Earned, 50)).await;
    let before = snapshot(s, g).await;
    assert_eq!(
        apply(s, &op(g, "s1", MoneyKind::Spent, 51)).await,
        MoneyOutcome::InsufficientFunds { balance: 50 }
    );
    assert_eq!(snapshot(s, g).await, before);
    // The refused tx id was not recorded: it may be retried once funds arrive.
    apply(s, &op(g, "e2", MoneyKind::Earned, 1)).await;
    assert_eq!(
        apply(s, &op(g, "s1", MoneyKind::Spent, 51)).await,
        MoneyOutcome::Applied {
            balance: 0,
            left_out: 0
        }
    );
}

pub(super) async fn case_reused_tx_id_is_a_conflict(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let earn = op(g, "e1", MoneyKind::Earned, 40);
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Applied {
            balance: 40,
            left_out: 0
        }
    );
    // The same tx_id with another amount changes nothing and does not reveal the first change.
    let other_amount = op(g, "e1", MoneyKind::Earned, 41);
    assert_eq!(apply(s, &other_amount).await, MoneyOutcome::TxConflict);
    let (balance, ledger, _) = snapshot(s, g).await;
    assert_eq!((balance, ledger.len()), (40, 1));
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Duplicate { balance: 40 }
    );
}

/// A `tx_id` is the player's own: another player who sends it first (a guess, or by chance)
/// neither spoils the owner's event nor learns anything, and each player's retry counts once.
pub(super) async fn case_tx_id_is_unique_per_player(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let victim = op(g, "t-1", MoneyKind::Earned, 40);
    let guesser = MoneyOp {
        player_id: "p2".into(),
        amount: 1,
        ..victim.clone()
    };
    assert_eq!(
        apply(s, &guesser).await,
        MoneyOutcome::Applied {
            balance: 1,
            left_out: 0
        }
    );
    assert_eq!(
        apply(s, &victim).await,
        MoneyOutcome::Applied {
            balance: 40,
            left_out: 0
        }
    );
    assert_eq!(
        apply(s, &victim).await,
        MoneyOutcome::Duplicate { balance: 40 }
    );
    assert_eq!(
        apply(s, &guesser).await,
        MoneyOutcome::Duplicate { balance: 1 }
    );
    assert_eq!(
        apply(
            s,
            &MoneyOp {
                amount: 2,
                ..guesser.clone()
            }
        )
        .await,
        MoneyOutcome::TxConflict
    );
    assert_eq!(gold(s, g, Environment::Production, "p1").await, 40);
    assert_eq!(gold(s, g, Environment::Production, "p2").await, 1);
    let (_, ledger, _) = snapshot(s, g).await;
    let lines: Vec<(&str, &str, i64)> = ledger
        .iter()
        .map(|l| (l.player_id.as_str(), l.tx_id.as_str(), l.amount))
        .collect();
    assert_eq!(lines, [("p2", "t-1", 1), ("p1", "t-1", 40)]);
}

pub(super) async fn case_purchases_keep_lifetime_spend(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let buy = op(g, "b1", MoneyKind::Purchase, 499);
    assert_eq!(
        apply(s, &buy).await,
        MoneyOutcome::Applied {
            balance: 0,
            left_out: 0
        }
    );
    assert_eq!(apply(s, &buy).await, MoneyOutcome::Duplicate { balance: 0 });
    apply(s, &op(g, "b2", MoneyKind::Purchase, 1000)).await;
    let env = Environment::Production;
    assert_eq!(s.spend_cents(g, env, "p1").await.expect("spend"), 1499);
    assert_eq!(s.spend_cents(g, env, "p2").await.expect("spend"), 0);
    assert_eq!(
        s.spend_cents(g, Environment::Sandbox, "p1")
            .await
            .expect("spend"),
        0
    );
    // Every payer of the game in one read; non-payers and other environments are absent.
    let mut buyer2 = op(g, "b3", MoneyKind::Purchase, 250);
    buyer2.player_id = "p3".into();
    apply(s, &buyer2).await;
    let mut all = s.spends(g, env).await.expect("spends");
    all.sort();
    assert_eq!(all, [("p1".to_owned(), 1499), ("p3".to_owned(), 250)]);
    assert!(
        s.spends(g, Environment::Sandbox)
            .await
            .expect("spends")
            .is_empty()
    );
}

pub(super) async fn case_replay_counts_once(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let earn = op(g, "e1", MoneyKind::Earned, 40);
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Applied {
            balance: 40,
            left_out: 0
        }
    );
    for _ in 0..100 {
        assert_eq!(
            apply(s, &earn).await,
            MoneyOutcome::Duplicate { balance: 40 }
        );
    }
    let (balance, ledger, days) = snapshot(s, g).await;
    assert_eq!(balance, 40);
    assert_eq!(ledger.len(), 1);
    assert_eq!(days[0].earned["gold"], 40);
    // A replay answers the first result even after the balance moved on.
    apply(s, &op(g, "s1", MoneyKind::Spent, 10)).await;
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Duplicate { balance: 40 }
    );
}

pub(super) async fn case_kill_switch_writes_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "e1", MoneyKind::Earned, 10)).await;
    s.set_kill_level(g, 2).await.expect("kill 2");
    assert_eq!(
        apply(s, &op(g, "e2", MoneyKind::Earned, 5)).await,
        MoneyOutcome::Applied {
            balance: 15,
            left_out: 0
        }
    );
    s.set_kill_level(g, 3).await.expect("kill 3");
    let before = snapshot(s, g).await;
    for (i, kind) in [MoneyKind::Earned, MoneyKind::Spent, MoneyKind::Purchase]
        .into_iter()
        .enumerate()
    {
        assert_eq!(
            apply(s, &op(g, &format!("k{i}"), kind, 1)).await,
            MoneyOutcome::KillSwitch
        );
    }
    assert_eq!(snapshot(s, g).await, before);
    s.set_kill_level(g, 0).await.expect("kill 0");
    assert_eq!(
        apply(s, &op(g, "k0", MoneyKind::Earned, 1)).await,
        MoneyOutcome::Applied {
            balance: 16,
            left_out: 0
        }
    );
}

pub(super) async fn case_environments_apart(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "t1", MoneyKind::Earned, 100)).await;
    let sandbox = MoneyOp {
        env: Environment::Sandbox,
        ..op(g, "t1", MoneyKind::Earned, 5)
    };
    // Same tx id in another environment is another event.
    assert_eq!(
        apply(s, &sandbox).await,
        MoneyOutcome::Applied {
            balance: 5,
            left_out: 0
        }
    );
    let prod = gold(s, g, Environment::Production, "p1").await;
    let sand = gold(s, g, Environment::Sandbox, "p1").await;
    assert_eq!((prod, sand), (100, 5));
    let sandbox_ledger = s.ledger(g, Environment::Sandbox).await.expect("ledger");
    assert_eq!(sandbox_ledger.len(), 1);
    assert_eq!(sandbox_ledger[0].amount, 5);
    let days = s
        .day_aggregates(g, Environment::Sandbox, &[day(1)])
        .await
        .expect("aggregates");
    assert_eq!(days[0].earned["gold"], 5);
}

pub(super) async fn case_import_skips_balance_check(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let spend = MoneyOp {
        import: true,
        ..op(g, "old-spend", MoneyKind::Spent, 30)
    };
    assert_eq!(
        apply(s, &spend).await,
        MoneyOutcome::Applied {
            balance: -30,
            left_out: 0
        }
    );
    let earn = MoneyOp {
        import: true,
        ..op(g, "old-earn", MoneyKind::Earned, 50)
    };
    assert_eq!(
        apply(s, &earn).await,
        MoneyOutcome::Applied {
            balance: 20,
            left_out: 0
        }
    );
    assert_eq!(
        apply(s, &spend).await,
        MoneyOutcome::Duplicate { balance: -30 }
    );
    let (balance, ledger, days) = snapshot(s, g).await;
    assert_eq!(balance, 20);
    assert_eq!(ledger.len(), 2);
    assert_eq!(days[0].spent["gold"], 30);
}

pub(super) async fn case_concurrent_spends(ctx: Ctx) {
    const BALANCE: i64 = 10_000;
    const PRICE: i64 = 37;
    const SPENDS: usize = 1_000;
    let s = &ctx.store;
    let g = Uuid::new_v4();
    apply(s, &op(g, "seed", MoneyKind::Earned, BALANCE)).await;
    let tasks: Vec<_> = (0..SPENDS)
        .map(|i| {
            let s = Arc::clone(s);
            tokio::spawn(async move {
                s.apply_money(&op(g, &format!("spend-{i}"), MoneyKind::Spent, PRICE))
                    .await
            })
        })
        .collect();
    let mut applied = 0_i64;
    for task in tasks {
        match task.await.expect("task").expect("apply_money") {
            MoneyOutcome::Applied { balance, .. } => {
                assert!(balance >= 0);
                applied += 1;
            }
            MoneyOutcome::InsufficientFunds { balance } => assert!(balance < PRICE),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(applied, BALANCE / PRICE);
    let (balance, ledger, days) = snapshot(s, g).await;
    assert_eq!(balance, BALANCE - applied * PRICE);
    assert!(balance >= 0);
    let spends = ledger.iter().filter(|e| e.kind == MoneyKind::Spent).count();
    assert_eq!(i64::try_from(spends).expect("count"), applied);
    assert_eq!(days[0].spent["gold"], applied * PRICE);
}

pub(super) async fn case_randomised_ledger_sums(ctx: Ctx) {
    const OPS: usize = 10_000;
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    let players = ["ann", "bob", "cy"];
    let currencies = ["gold", "gems"];
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let mut model: HashMap<(String, String), i64> = HashMap::new();
    let mut first_result: HashMap<String, i64> = HashMap::new();
    let mut holdout_of: HashMap<String, bool> = HashMap::new();
    let mut issued: Vec<MoneyOp> = Vec::new();
    for i in 0..OPS {
        let roll = rng.random_range(0..100);
        let op = if roll < 10 && !issued.is_empty() {
            // Replay an earlier event.
            issued[rng.random_range(0..issued.len())].clone()
        } else {
            let kind = match roll {
                0..=44 => MoneyKind::Earned,
                45..=94 => MoneyKind::Spent,
                _ => MoneyKind::Purchase,
            };
            let player = players[rng.random_range(0..players.len())];
            let currency = if kind == MoneyKind::Purchase {
                ""
            } else {
                currencies[rng.random_range(0..currencies.len())]
            };
            MoneyOp {
                game_id: g,
                env,
                player_id: player.into(),
                tx_id: format!("tx-{i}"),
                kind,
                currency_id: currency.into(),
                amount: rng.random_range(1..60),
                ts: at(rng.random_range(1..4), rng.random_range(0..24)),
                holdout: rng.random_bool(0.1),
                import: rng.random_bool(0.02),
                cohort: None,
                proof: None,
                day_cap: None,
            }
        };
        let outcome = apply(s, &op).await;
        let key = (op.player_id.clone(), op.currency_id.clone());
        let current = model.get(&key).copied().unwrap_or(0);
        let expected = if let Some(&balance) = first_result.get(&op.tx_id) {
            MoneyOutcome::Duplicate { balance }
        } else if op.kind == MoneyKind::Spent && !op.import && current < op.amount {
            MoneyOutcome::InsufficientFunds { balance: current }
        } else {
            let after = match op.kind {
                MoneyKind::Earned => current + op.amount,
                MoneyKind::Spent => current - op.amount,
                MoneyKind::Purchase | MoneyKind::Refund => 0,
            };
            if !op.kind.is_revenue() {
                model.insert(key, after);
            }
            first_result.insert(op.tx_id.clone(), after);
            holdout_of.insert(op.tx_id.clone(), op.holdout);
            issued.push(op.clone());
            MoneyOutcome::Applied {
                balance: after,
                left_out: 0,
            }
        };
        assert_eq!(outcome, expected, "op {i}: {op:?}");
    }

    let ledger = s.ledger(g, env).await.expect("ledger");
    assert_eq!(ledger.len(), first_result.len());
    let mut sums: HashMap<(String, String), i64> = HashMap::new();
    let mut expected_days: BTreeMap<NaiveDate, DayAggregate> = BTreeMap::new();
    for entry in &ledger {
        let day = expected_days.entry(entry.ts.date_naive()).or_default();
        let key = (entry.player_id.clone(), entry.currency_id.clone());
        match entry.kind {
            MoneyKind::Earned => {
                *sums.entry(key).or_default() += entry.amount;
                *day.earned.entry(entry.currency_id.clone()).or_default() += entry.amount;
            }
            MoneyKind::Spent => {
                *sums.entry(key).or_default() -= entry.amount;
                *day.spent.entry(entry.currency_id.clone()).or_default() += entry.amount;
            }
            MoneyKind::Purchase if holdout_of[&entry.tx_id] => {
                day.revenue_control_cents += entry.amount;
            }
            MoneyKind::Purchase => day.revenue_treatment_cents += entry.amount,
            MoneyKind::Refund if holdout_of[&entry.tx_id] => {
                day.revenue_control_cents -= entry.amount;
                day.refunded_cents += entry.amount;
            }
            MoneyKind::Refund => {
                day.revenue_treatment_cents -= entry.amount;
                day.refunded_cents += entry.amount;
            }
        }
    }
    for player in players {
        for currency in currencies {
            let key = (player.to_string(), currency.to_string());
            let balance = s.balance(g, env, player, currency).await.expect("balance");
            assert_eq!(balance, sums.get(&key).copied().unwrap_or(0), "{key:?}");
            assert_eq!(balance, model.get(&key).copied().unwrap_or(0), "{key:?}");
        }
    }
    let days: Vec<NaiveDate> = expected_days.keys().copied().collect();
    let actual = s.day_aggregates(g, env, &days).await.expect("aggregates");
    assert_eq!(actual, expected_days.into_values().collect::<Vec<_>>());
}

/// What one player's events in [`case_concurrent_mixed_events`] were answered.
#[derive(Default)]
struct Answers {
    spends: Vec<(String, MoneyOutcome)>,
    earns: Vec<MoneyOutcome>,
    reused: Vec<(i64, MoneyOutcome)>,
}

pub(super) async fn case_concurrent_mixed_events(ctx: Ctx) {
    const PLAYERS: usize = 16;
    const SEED: i64 = 100;
    const PRICE: i64 = 60;
    const EARN: i64 = 5;
    let s = &ctx.store;
    let games = [Uuid::new_v4(), Uuid::new_v4()];
    let player = |p: usize| format!("p{p}");
    let event = |g: Uuid, p: usize, tx: String, kind: MoneyKind, amount: i64| MoneyOp {
        player_id: player(p),
        ..op(g, &tx, kind, amount)
    };
    for g in games {
        for p in 0..PLAYERS {
            let seed = event(g, p, format!("seed-{p}"), MoneyKind::Earned, SEED);
            apply(s, &seed).await;
        }
    }
    // All at once, in both games (the same tx ids in each): per player two spends of which
    // the balance covers one, one earn sent three times, and one tx id used for two amounts.
    let mut events = Vec::new();
    for g in games {
        for p in 0..PLAYERS {
            for which in ["a", "b"] {
                let tx = format!("spend-{p}-{which}");
                events.push(event(g, p, tx, MoneyKind::Spent, PRICE));
            }
            for _ in 0..3 {
                events.push(event(g, p, format!("earn-{p}"), MoneyKind::Earned, EARN));
            }
            for amount in [7, 8] {
                events.push(event(g, p, format!("reuse-{p}"), MoneyKind::Earned, amount));
            }
        }
    }
    let tasks: Vec<_> = events
        .into_iter()
        .map(|event| {
            let s = Arc::clone(s);
            tokio::spawn(async move {
                let outcome = s.apply_money(&event).await.expect("apply_money");
                (event, outcome)
            })
        })
        .collect();
    let mut answers: HashMap<(Uuid, String), Answers> = HashMap::new();
    for task in tasks {
        let (event, outcome) = task.await.expect("task");
        let mine = answers
            .entry((event.game_id, event.player_id.clone()))
            .or_default();
        if event.kind == MoneyKind::Spent {
            mine.spends.push((event.tx_id, outcome));
        } else if event.tx_id.starts_with("earn-") {
            mine.earns.push(outcome);
        } else {
            mine.reused.push((event.amount, outcome));
        }
    }

    let env = Environment::Production;
    for g in games {
        let ledger = s.ledger(g, env).await.expect("ledger");
        let mut total_earned = 0;
        for p in 0..PLAYERS {
            let mine = &answers[&(g, player(p))];
            // The player's ledger lines, in the order they were applied: each line's
            // balance follows from the one before, whatever the batches were.
            let lines: Vec<_> = ledger.iter().filter(|l| l.player_id == player(p)).collect();
            let mut running = 0;
            let mut after: HashMap<&str, i64> = HashMap::new();
            for line in &lines {
                running += match line.kind {
                    MoneyKind::Spent => -line.amount,
                    _ => line.amount,
                };
                assert_eq!(line.balance_after, running, "{line:?}");
                after.insert(&line.tx_id, line.balance_after);
            }
            // One spend applied, at the balance its line shows; the other refused, above
            // the balance left.
            let applied: Vec<_> = mine
                .spends
                .iter()
                .filter_map(|(tx, outcome)| match outcome {
                    MoneyOutcome::Applied { balance, .. } => Some((tx, *balance)),
                    MoneyOutcome::InsufficientFunds { balance } => {
                        assert!((0..PRICE).contains(balance), "{outcome:?}");
                        None
                    }
                    other => panic!("a spend answered {other:?}"),
                })
                .collect();
            let [(spent_tx, spent_balance)] = applied[..] else {
                panic!("spends answered {:?}", mine.spends);
            };
            assert_eq!(after.get(spent_tx.as_str()), Some(&spent_balance));
            // The earn sent three times: applied once, the two others its duplicates.
            let earned = after.get(format!("earn-{p}").as_str()).copied();
            let mut earns = mine.earns.clone();
            earns.sort_by_key(|o| matches!(o, MoneyOutcome::Duplicate { .. }));
            let balance = earned.expect("the earn is in the ledger");
            assert_eq!(
                earns,
                [
                    MoneyOutcome::Applied {
                        balance,
                        left_out: 0
                    },
                    MoneyOutcome::Duplicate { balance },
                    MoneyOutcome::Duplicate { balance }
                ]
            );
            // The reused tx id: one amount applied, the other a conflict.
            let reuse_balance = after
                .get(format!("reuse-{p}").as_str())
                .copied()
                .expect("the reused tx id is in the ledger once");
            let mut kept = None;
            for (amount, outcome) in &mine.reused {
                match outcome {
                    MoneyOutcome::Applied { balance, .. } => {
                        assert_eq!(*balance, reuse_balance);
                        assert!(kept.replace(*amount).is_none(), "{:?}", mine.reused);
                    }
                    MoneyOutcome::TxConflict => {}
                    other => panic!("a reused tx id answered {other:?}"),
                }
            }
            let kept = kept.expect("one amount of the reused tx id applied");
            assert_eq!(lines.len(), 4, "seed, one spend, the earn, the reused id");
            let expected = SEED - PRICE + EARN + kept;
            assert_eq!(running, expected);
            assert_eq!(gold(s, g, env, &player(p)).await, expected);
            total_earned += SEED + EARN + kept;
        }
        assert_eq!(ledger.len(), 4 * PLAYERS);
        let days = s
            .day_aggregates(g, env, &[day(1)])
            .await
            .expect("aggregates");
        assert_eq!(days[0].earned["gold"], total_earned);
        assert_eq!(days[0].spent["gold"], PRICE * PLAYERS as i64);
    }
}
