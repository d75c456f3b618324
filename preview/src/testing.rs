//! Fixtures shared by the renderer's tests, its bench and the engine's preview API tests
//! (behind the `testing` feature, never in a release build of the engine): the fixture page,
//! its bindings and bound item, a page whose only dark pixels are a button's label, and
//! pages over the render budget.

use offer_domain::template::bindings::Bindings;
use offer_domain::template::catalogue::ItemSummary;
pub use offer_domain::testing::fan_out_page;

use crate::BoundItem;

/// The fixture offer page: a title, a discount badge and a purchase button for one item.
pub const FIXTURE_PAGE: &str = include_str!("../../domain/tests/fixtures/offer_page.dart");

/// The fixture page's bindings: the item `gems_500`, a title and a 40% discount.
pub fn spring_sale_bindings() -> Bindings {
    Bindings::from_json(
        &serde_json::json!({"items": ["gems_500"], "title": "Spring sale", "discount": 40}),
    )
    .expect("the fixture's bindings are valid")
}

/// The item `gems_500` as bound: 500 gems for $4.99, drawn with `art` (PNG or JPEG bytes).
pub fn gems(art: Vec<u8>) -> BoundItem {
    BoundItem {
        summary: ItemSummary {
            name: "500 Gems".into(),
            price: "$4.99".into(),
            amount: Some(500),
            art: Some("a1b2c3d4e5f6a1b2c3d4e5f6".into()),
            description: None,
        },
        art: Some(art),
    }
}

/// A white page with one white purchase button whose only dark pixels are its black label:
/// the bound item's price, unless `label` (an `OfferButton` argument such as
/// `label: "Buy", `, trailing comma and space included) replaces it.
pub fn price_page(label: &str) -> String {
    format!(
        "class P extends StatelessWidget {{\n\
           final OfferData offer;\n\
           Widget build(BuildContext context) => Center(\n\
             child: OfferButton(item: offer.items[0], {label}color: Colors.white, textColor: Colors.black, width: 200),\n\
           );\n\
         }}\n"
    )
}

/// A page of one `W` at `font_size`, a few hundred bytes: at 20000 the glyph alone is
/// 60,000 pixels tall at device pixel ratio 3, gigabytes as a buffer of its own.
pub fn font_size_page(font_size: u32) -> String {
    format!(
        "import 'package:flutter/material.dart';\n\
         import 'package:offer_sdk/offer_sdk.dart';\n\
         \n\
         class GiantGlyph extends StatelessWidget {{\n\
           const GiantGlyph({{super.key, required this.offer}});\n\
           final OfferData offer;\n\
           @override\n\
           Widget build(BuildContext context) => Text('W', style: TextStyle(fontSize: {font_size}));\n\
         }}\n"
    )
}
