//! The inventory step: adds once per transaction id, uses, overuses, environments, concurrent
//! uses and the remembered transaction ids.

use std::sync::Arc;

use offer_domain::environment::Environment;
use offer_engine::service::play::inventory::{
    self, InventoryChange, InventoryOp, InventoryOutcome, Items,
};
use offer_engine::store::SharedStore;
use uuid::Uuid;

use super::Ctx;

/// An inventory step of player `p1` in production.
fn inv(game_id: Uuid, tx_id: &str, change: InventoryChange) -> InventoryOp {
    InventoryOp {
        game_id,
        env: Environment::Production,
        player_id: "p1".into(),
        tx_id: tx_id.into(),
        change,
    }
}

fn add(items: &[(&str, i64)]) -> InventoryChange {
    InventoryChange::Add(items.iter().map(|(i, n)| ((*i).to_owned(), *n)).collect())
}

fn use_of(item_id: &str, quantity: i64) -> InventoryChange {
    InventoryChange::Use {
        item_id: item_id.into(),
        quantity,
    }
}

fn items_of(items: &[(&str, i64)]) -> Items {
    items.iter().map(|(i, n)| ((*i).to_owned(), *n)).collect()
}

async fn step(store: &SharedStore, op: &InventoryOp) -> InventoryOutcome {
    inventory::apply(store.as_ref(), op)
        .await
        .expect("inventory step")
}

async fn inventory_of(store: &SharedStore, game: Uuid, env: Environment) -> Items {
    inventory::read(store.as_ref(), game, env, "p1")
        .await
        .expect("inventory")
}

pub(super) async fn case_inventory_adds_once_per_tx_id(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let env = Environment::Production;
    assert_eq!(inventory_of(s, g, env).await, Items::new());
    let buy = inv(g, "b1", add(&[("sword", 1), ("potion", 3)]));
    let after = items_of(&[("potion", 3), ("sword", 1)]);
    assert_eq!(
        step(s, &buy).await,
        InventoryOutcome::Applied(after.clone())
    );
    // A replay, from another node too, adds nothing.
    let peer = ctx.peer().await;
    assert_eq!(
        step(&peer, &buy).await,
        InventoryOutcome::Duplicate(after.clone())
    );
    assert_eq!(inventory_of(s, g, env).await, after);
    // The same tx_id for another change is a conflict and changes nothing.
    assert_eq!(
        step(s, &inv(g, "b1", add(&[("sword", 2)]))).await,
        InventoryOutcome::TxConflict
    );
    assert_eq!(inventory_of(s, g, env).await, after);
    // Uses keep their tx_ids apart from additions.
    assert_eq!(
        step(s, &inv(g, "b1", use_of("potion", 1))).await,
        InventoryOutcome::Applied(items_of(&[("potion", 2), ("sword", 1)]))
    );
    assert_eq!(
        step(s, &inv(g, "b1", use_of("potion", 2))).await,
        InventoryOutcome::TxConflict
    );
}

pub(super) async fn case_inventory_use_takes_out_and_drops_zero(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    step(s, &inv(g, "b1", add(&[("potion", 3), ("sword", 1)]))).await;
    let used = inv(g, "u1", use_of("potion", 2));
    let after = items_of(&[("potion", 1), ("sword", 1)]);
    assert_eq!(
        step(s, &used).await,
        InventoryOutcome::Applied(after.clone())
    );
    assert_eq!(step(s, &used).await, InventoryOutcome::Duplicate(after));
    assert_eq!(
        step(s, &inv(g, "u2", use_of("potion", 1))).await,
        InventoryOutcome::Applied(items_of(&[("sword", 1)]))
    );
    assert_eq!(
        inventory_of(s, g, Environment::Production).await,
        items_of(&[("sword", 1)])
    );
}

pub(super) async fn case_inventory_overuse_writes_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    step(s, &inv(g, "b1", add(&[("potion", 2)]))).await;
    assert_eq!(
        step(s, &inv(g, "u1", use_of("potion", 3))).await,
        InventoryOutcome::Insufficient { held: 2 }
    );
    assert_eq!(
        step(s, &inv(g, "u2", use_of("elixir", 1))).await,
        InventoryOutcome::Insufficient { held: 0 }
    );
    assert_eq!(
        inventory_of(s, g, Environment::Production).await,
        items_of(&[("potion", 2)])
    );
    // A refused step records nothing: its tx_id may be used again.
    assert_eq!(
        step(s, &inv(g, "u1", use_of("potion", 2))).await,
        InventoryOutcome::Applied(Items::new())
    );
}

pub(super) async fn case_inventory_environments_apart(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    step(s, &inv(g, "b1", add(&[("sword", 1)]))).await;
    // The same tx_id in the sandbox is another step; its inventory is its own.
    let sandbox = InventoryOp {
        env: Environment::Sandbox,
        ..inv(g, "b1", add(&[("shield", 1)]))
    };
    assert_eq!(
        step(s, &sandbox).await,
        InventoryOutcome::Applied(items_of(&[("shield", 1)]))
    );
    assert_eq!(
        inventory_of(s, g, Environment::Production).await,
        items_of(&[("sword", 1)])
    );
    // And another game's inventory of the same player is empty.
    assert_eq!(
        inventory_of(s, Uuid::new_v4(), Environment::Production).await,
        Items::new()
    );
}

pub(super) async fn case_inventory_concurrent_uses(ctx: Ctx) {
    const HELD: i64 = 5;
    const USES: usize = 8;
    let s = &ctx.store;
    let g = Uuid::new_v4();
    step(s, &inv(g, "b1", add(&[("potion", HELD)]))).await;
    let peer = ctx.peer().await;
    let tasks: Vec<_> = (0..USES)
        .map(|i| {
            let s = if i % 2 == 0 {
                Arc::clone(s)
            } else {
                Arc::clone(&peer)
            };
            tokio::spawn(async move {
                inventory::apply(s.as_ref(), &inv(g, &format!("u{i}"), use_of("potion", 1))).await
            })
        })
        .collect();
    let mut applied = 0_i64;
    for task in tasks {
        match task.await.expect("task").expect("inventory step") {
            InventoryOutcome::Applied(_) => applied += 1,
            InventoryOutcome::Insufficient { held } => assert_eq!(held, 0),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(applied, HELD);
    assert_eq!(
        inventory_of(s, g, Environment::Production).await,
        Items::new()
    );
}

pub(super) async fn case_inventory_remembers_recent_tx_ids_per_kind(ctx: Ctx) {
    let s = &ctx.store;
    let g = Uuid::new_v4();
    let uses = inventory::MAX_TX_RECORDS + 2;
    let dust = i64::try_from(uses).expect("small");
    let buy = inv(g, "b0", add(&[("potion", 1), ("gem_dust", dust)]));
    step(s, &buy).await;
    // Many uses later, the purchase is still remembered: uses keep their own records.
    for i in 0..uses {
        step(s, &inv(g, &format!("u{i}"), use_of("gem_dust", 1))).await;
    }
    assert!(matches!(
        step(s, &buy).await,
        InventoryOutcome::Duplicate(_)
    ));
    // The oldest use is forgotten: sent again, it counts again (here, refused as overuse);
    // the newest is remembered.
    assert_eq!(
        step(s, &inv(g, "u0", use_of("gem_dust", 1))).await,
        InventoryOutcome::Insufficient { held: 0 }
    );
    let newest = inv(g, &format!("u{}", uses - 1), use_of("gem_dust", 1));
    assert_eq!(
        step(s, &newest).await,
        InventoryOutcome::Duplicate(items_of(&[("potion", 1)]))
    );
}
