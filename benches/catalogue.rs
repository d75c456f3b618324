//! Criterion benches of the catalogue hot paths:
//! - bulk validation plus value computation for 500 items (what `POST .../items/bulk` does
//!   in memory before its one store write);
//! - the catalogue read path: a published snapshot loaded and a 1000-item page serialised,
//!   as `GET .../items` does.

use std::hint::black_box;
use std::time::Duration;

use arc_swap::ArcSwap;
use chrono::Utc;
use criterion::{Criterion, criterion_group, criterion_main};
use offer_domain::catalogue::{Item, ItemInput, recompute_values};
use offer_domain::currency::Currency;
use offer_domain::testing::currencies;
use offer_engine::http::items::ItemPage;
use serde_json::json;

/// A realistic bulk payload: packs of both currencies, items priced in money and in gold.
fn payload(n: usize) -> Vec<u8> {
    let items: Vec<_> = (0..n)
        .map(|i| match i % 5 {
            0 => json!({"item_id": format!("gems_{i}"), "item_name": format!("{i} Gems"), "category": "currency_pack",
                        "currency_id": "gems", "quantity": 100 + i, "price_usd": 0.99 + (i % 50) as f64,
                        "is_consumable": true, "fallback_eligible": true}),
            1 => json!({"item_id": format!("gold_{i}"), "item_name": format!("{i} Gold"), "category": "currency",
                        "currency_id": "gold", "quantity": 1000 + i, "price_usd": 0,
                        "earned_price": {"currency_id": "gems", "amount": 50 + i}, "is_consumable": true,
                        "fallback_eligible": false}),
            2 => json!({"item_id": format!("potion_{i}"), "item_name": "Potion", "category": "consumable",
                        "price_usd": 0, "earned_price": {"currency_id": "gold", "amount": 200 + i},
                        "is_consumable": true, "fallback_eligible": true}),
            3 => json!({"item_id": format!("sword_{i}"), "item_name": "Sword", "category": "equipment",
                        "price_cents": 299 + i, "is_consumable": false, "fallback_eligible": false,
                        "description": "A sharp sword forged in dragon fire."}),
            _ => json!({"item_id": format!("hat_{i}"), "item_name": "Hat", "category": "cosmetic",
                        "price_usd": 1.99, "is_consumable": false, "fallback_eligible": true}),
        })
        .collect();
    serde_json::to_vec(&json!({ "items": items })).expect("serialise")
}

#[derive(serde::Deserialize)]
struct Bulk {
    items: Vec<ItemInput>,
}

fn bulk(bytes: &[u8], currencies: &[Currency]) -> Vec<Item> {
    let bulk: Bulk = serde_json::from_slice(bytes).expect("parse");
    let now = Utc::now();
    let mut items: Vec<Item> = bulk
        .items
        .into_iter()
        .map(|i| i.into_item(currencies, None, now).expect("valid"))
        .collect();
    recompute_values(&mut items, currencies);
    items
}

fn benches(c: &mut Criterion) {
    let currencies = currencies();
    let body = payload(500);
    let mut g = c.benchmark_group("catalogue");
    g.measurement_time(Duration::from_secs(5)).sample_size(50);
    g.bench_function("bulk_500_parse_validate_value", |b| {
        b.iter(|| black_box(bulk(black_box(&body), &currencies)));
    });
    let items = bulk(&payload(1000), &currencies);
    g.bench_function("recompute_values_1000", |b| {
        let mut items = items.clone();
        b.iter(|| black_box(recompute_values(black_box(&mut items), &currencies)));
    });
    let published = ArcSwap::from_pointee(items);
    g.bench_function("read_page_1000_serialised", |b| {
        b.iter(|| {
            // As `GET .../items` does: load the published catalogue, take a page, serialise
            // the page struct.
            let view = published.load_full();
            let page = ItemPage {
                items: view
                    .iter()
                    .filter(|i| i.is_live())
                    .take(1000)
                    .cloned()
                    .collect(),
                next_cursor: None,
            };
            black_box(serde_json::to_vec(&page).expect("json"))
        });
    });
    g.finish();
}

criterion_group!(catalogue, benches);
criterion_main!(catalogue);
