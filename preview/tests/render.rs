//! Previews as PNG: the right dimensions at both phone sizes, the bound item's price really
//! drawn, and the fixture page matching its golden image within a per-pixel budget.
//!
//! Regenerate the golden image after an intended rendering change with
//! `OFFER_PREVIEW_REGENERATE_GOLDEN=1 cargo test -p offer-preview --test render`.

use offer_domain::template::parse;
use offer_preview::testing::{FIXTURE_PAGE as PAGE, gems, price_page, spring_sale_bindings};
use offer_preview::{Budget, PHONE_1080X1920, PHONE_SIZES, Screen, render};
use tiny_skia::{Color, Pixmap};

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/offer_page_1080x1920.png"
);
/// A pixel differs when a channel moves by more than this (anti-aliasing noise stays under).
const CHANNEL_TOLERANCE: u8 = 24;
/// Most differing pixels allowed against the golden image: 0.5% of the screen.
const PIXEL_BUDGET: f64 = 0.005;

/// Item art: a 64x64 PNG, a purple square with a gold disc.
fn art() -> Vec<u8> {
    let mut p = Pixmap::new(64, 64).expect("pixmap");
    p.fill(Color::from_rgba8(120, 40, 200, 255));
    let mut paint = tiny_skia::Paint::default();
    paint.set_color_rgba8(255, 200, 40, 255);
    let disc = tiny_skia::PathBuilder::from_circle(32.0, 32.0, 20.0).expect("circle");
    p.fill_path(
        &disc,
        &paint,
        tiny_skia::FillRule::Winding,
        tiny_skia::Transform::identity(),
        None,
    );
    p.encode_png().expect("png")
}

fn decode(png: &[u8]) -> image::RgbaImage {
    image::load_from_memory(png).expect("a PNG").to_rgba8()
}

fn render_page(src: &str, screen: Screen) -> image::RgbaImage {
    let tree = parse(src).expect("template");
    decode(
        &render(
            &tree,
            &spring_sale_bindings(),
            &[gems(art())],
            screen,
            &Budget::default(),
        )
        .expect("render"),
    )
}

#[test]
fn pngs_have_the_phone_dimensions() {
    for screen in PHONE_SIZES {
        let img = render_page(PAGE, screen);
        assert_eq!(img.dimensions(), (screen.width, screen.height));
    }
}

/// A white button on a white page: only its price text can make pixels non-white.
#[test]
fn the_price_text_is_drawn() {
    let dark = |img: &image::RgbaImage| {
        let (w, h) = img.dimensions();
        let (cx, cy) = (w / 2, h / 2);
        let mut n = 0;
        for y in cy - 40..cy + 40 {
            for x in cx - 200..cx + 200 {
                if img.get_pixel(x, y).0[0] < 128 {
                    n += 1;
                }
            }
        }
        n
    };
    let with_price = render_page(&price_page(""), PHONE_1080X1920);
    assert!(dark(&with_price) > 300, "the price region is blank");
    let blank = render_page(&price_page("label: '', "), PHONE_1080X1920);
    assert_eq!(dark(&blank), 0, "an empty label draws nothing");
}

#[test]
fn the_fixture_page_matches_its_golden_image() {
    let img = render_page(PAGE, PHONE_1080X1920);
    if std::env::var_os("OFFER_PREVIEW_REGENERATE_GOLDEN").is_some() {
        img.save(GOLDEN).expect("write the golden image");
    }
    let golden = decode(&std::fs::read(GOLDEN).expect("the golden image; see the module docs"));
    assert_eq!(img.dimensions(), golden.dimensions());
    let differing = img
        .pixels()
        .zip(golden.pixels())
        .filter(|(a, b)| {
            a.0.iter()
                .zip(b.0)
                .any(|(x, y)| x.abs_diff(y) > CHANNEL_TOLERANCE)
        })
        .count();
    let budget = (f64::from(img.width() * img.height()) * PIXEL_BUDGET) as usize;
    assert!(
        differing <= budget,
        "{differing} pixels differ, budget {budget}"
    );
}

#[test]
fn a_template_without_an_entry_widget_is_an_error() {
    let tree = parse("class A {}").expect("template");
    assert!(
        render(
            &tree,
            &spring_sale_bindings(),
            &[],
            PHONE_1080X1920,
            &Budget::default()
        )
        .is_err()
    );
}
