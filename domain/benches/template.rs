//! Validation of custom-page templates against the 5 ms budget for 64 KiB.
//!
//! - `typical_page`: the test fixture, a 2.4 KiB page of a headline, art, a name row and a
//!   button (what an assistant writes for one offer screen);
//! - `realistic_64k`: the same page with its product tile repeated until the template is
//!   just under 64 KiB (about 60 tiles, each an item's art, name, amount and button);
//! - `worst_64k`: 64 KiB of blocks nested as deep as the parser allows, each ending in a
//!   text of twenty interpolated bindings reads, so every node kind and every gate works.

use criterion::{Criterion, criterion_group, criterion_main};
use offer_domain::template::catalogue::{ItemLookup, ItemSummary};
use offer_domain::template::{MAX_NESTING, MAX_TEMPLATE_BYTES, validate};
use serde_json::{Value, json};
use std::hint::black_box;

const PAGE: &str = include_str!("../tests/fixtures/offer_page.dart");

fn lookup(id: &str) -> ItemLookup {
    ItemLookup::Live(ItemSummary {
        name: format!("Item {id}"),
        price: "$4.99".into(),
        amount: Some(500),
        art: Some("a1b2c3d4e5f6a1b2c3d4e5f6".into()),
        description: Some("A pack".into()),
    })
}

fn bindings() -> Value {
    let items: Vec<String> = (0..8).map(|i| format!("pack_{i}")).collect();
    json!({"items": items, "title": "Spring sale", "discount": 40})
}

/// A page whose `build` returns a `Column` of `blocks`, repeated to fill 64 KiB.
fn filled(block: impl Fn(usize) -> String) -> String {
    let head = "import 'package:flutter/material.dart';\n\
        import 'package:offer_sdk/offer_sdk.dart';\n\n\
        class BigPage extends StatelessWidget {\n\
          const BigPage({super.key, required this.offer});\n\n\
          final OfferData offer;\n\n\
          @override\n\
          Widget build(BuildContext context) {\n\
            return Column(\n\
              children: [\n";
    let tail = "      ],\n    );\n  }\n}\n";
    let mut src = head.to_string();
    for i in 0.. {
        let b = block(i);
        if src.len() + b.len() + tail.len() > MAX_TEMPLATE_BYTES {
            break;
        }
        src.push_str(&b);
    }
    src.push_str(tail);
    src
}

fn tile(i: usize) -> String {
    let n = i % 8;
    format!(
        "        Container(\n\
          padding: const EdgeInsets.all(12),\n\
          margin: const EdgeInsets.symmetric(vertical: 8),\n\
          decoration: BoxDecoration(color: Colors.white12, borderRadius: BorderRadius.circular(16)),\n\
          child: Row(\n\
            crossAxisAlignment: CrossAxisAlignment.center,\n\
            children: [\n\
              SizedBox(width: 96, height: 96, child: Image(item: offer.items[{n}], fit: BoxFit.contain)),\n\
              const SizedBox(width: 16),\n\
              Expanded(child: Text(offer.items[{n}].name, style: TextStyle(fontSize: 28, color: Colors.white))),\n\
              Text('x${{offer.items[{n}].amount}}', style: TextStyle(fontSize: 24, fontWeight: FontWeight.bold)),\n\
              OfferButton(item: offer.items[{n}], color: Colors.green, width: 200),\n\
            ],\n\
          ),\n\
        ),\n"
    )
}

fn deep(i: usize) -> String {
    let n = i % 8;
    // Column(children: [...]) costs 2 levels and its element 1; each Center 2; the block
    // sits in the page's `children` list at level 3.
    let levels = (MAX_NESTING - 12) / 2;
    let reads: Vec<String> = (0..20)
        .map(|k| match k % 3 {
            0 => "${offer['title']}".to_string(),
            1 => format!("${{offer.items[{n}].name}}"),
            _ => format!("${{offer.items[{n}]['price']}}"),
        })
        .collect();
    format!(
        "{}Text('{}', style: TextStyle(color: Color(0xFFFFFFFF))){},\n",
        "Center(child: ".repeat(levels),
        reads.join(" "),
        ")".repeat(levels)
    )
}

fn bench(c: &mut Criterion) {
    let b = bindings();
    let realistic = filled(tile);
    let worst = filled(deep);
    for (name, src) in [
        ("typical_page", PAGE),
        ("realistic_64k", &realistic),
        ("worst_64k", &worst),
    ] {
        let v = validate(src, &b, &lookup);
        assert!(v.blockers.is_empty(), "{name}: {:#?}", v.blockers);
        eprintln!("{name}: {} bytes", src.len());
        c.bench_function(&format!("validate_{name}"), |bench| {
            bench.iter(|| validate(black_box(src), black_box(&b), &lookup))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
