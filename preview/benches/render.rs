//! One preview render at phone size (1080x1920): the fixture page with its bound item's
//! art, from parsed tree to PNG bytes (evaluation, layout, rasterising, PNG encoding).

use criterion::{Criterion, criterion_group, criterion_main};
use offer_domain::template::parse;
use offer_preview::testing::{FIXTURE_PAGE as PAGE, gems, spring_sale_bindings};
use offer_preview::{Budget, PHONE_1080X1920, PHONE_1170X2532, render};
use std::hint::black_box;

/// Item art: a 256x256 PNG.
fn art() -> Vec<u8> {
    let mut p = tiny_skia::Pixmap::new(256, 256).expect("pixmap");
    p.fill(tiny_skia::Color::from_rgba8(120, 40, 200, 255));
    p.encode_png().expect("png")
}

fn bench(c: &mut Criterion) {
    let tree = parse(PAGE).expect("fixture page");
    let bindings = spring_sale_bindings();
    let items = [gems(art())];
    let budget = Budget::default();
    for (name, screen) in [
        ("render_1080x1920", PHONE_1080X1920),
        ("render_1170x2532", PHONE_1170X2532),
    ] {
        c.bench_function(name, |b| {
            b.iter(|| render(black_box(&tree), &bindings, &items, screen, &budget))
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);
