//! Custom offer page previews: a parsed template, its bindings and the bound items' data in,
//! PNG bytes out.
//!
//! The widget tree is evaluated from the same tree and widget table the validator checks
//! (`offer_domain::template`), laid out with a Flutter-like box model in logical pixels,
//! and rasterised at the phone's device pixel ratio with `tiny-skia`; glyphs come from
//! `ab_glyph` and the DejaVu Sans fonts shipped in `fonts/` (Bitstream Vera licence, see
//! `fonts/LICENSE-DejaVu.txt`). Nothing here performs I/O.
//!
//! Every render runs under a [`Budget`]: limits on canvas area, font size, glyphs, layout
//! nodes, widget depth, evaluation steps, time and memory. A page over any of them fails
//! with [`RenderError::OverBudget`] naming the limit, having done (and allocated) no more
//! than the budget allows, whatever the template does.
//!
//! Layout, leaves first:
//! - [`error`]: why a render failed.
//! - [`budget`]: the limits of a render and the meter that enforces them.
//! - [`screen`]: the phone sizes.
//! - [`widget`]: the evaluated widget tree.
//! - [`eval`]: template tree plus bindings to widget tree.
//! - [`text`]: the fonts, measuring and wrapping.
//! - [`layout`]: sizes and positions.
//! - [`paint`]: rasterising and PNG encoding.
//!
//! With the `testing` feature, `testing` holds the fixtures the tests and benches share.

pub mod budget;
pub mod error;
pub mod eval;
pub mod layout;
pub mod paint;
pub mod screen;
#[cfg(feature = "testing")]
pub mod testing;
pub mod text;
pub mod widget;

use offer_domain::template::ast::Template;
use offer_domain::template::bindings::Bindings;
use offer_domain::template::catalogue::ItemSummary;

pub use budget::{Budget, RENDER_STACK_BYTES};
pub use error::{Exceeded, RenderError};
pub use screen::{PHONE_1080X1920, PHONE_1170X2532, PHONE_SIZES, Screen};

/// A bound item as the renderer shows it, in the order of the bindings' `items`.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundItem {
    /// Its name, price text, amount and art id.
    pub summary: ItemSummary,
    /// Its art as PNG or JPEG bytes, when the asset library has it; drawn as a grey
    /// placeholder otherwise.
    pub art: Option<Vec<u8>>,
}

/// Renders the entry widget of `template` with `bindings` and `items` at `screen`'s size,
/// within `budget`.
///
/// Returns PNG bytes of exactly `screen.width` x `screen.height` pixels. A template without
/// an entry widget is an error, and so is a page over its budget; anything else the
/// validator would refuse (an unknown widget, a missing binding) renders as nothing rather
/// than failing, so a preview of a draft always shows what can be shown. Run it on a thread
/// with a stack of [`RENDER_STACK_BYTES`].
pub fn render(
    template: &Template,
    bindings: &Bindings,
    items: &[BoundItem],
    screen: Screen,
    budget: &Budget,
) -> Result<Vec<u8>, RenderError> {
    let meter = budget::Meter::new(budget);
    let root = eval::evaluate(template, bindings, items, &meter)?;
    let fonts = text::Fonts::load()?;
    let laid = layout::layout_page(&root, items, &fonts, screen, &meter)?;
    paint::paint(&laid, items, &fonts, screen, &meter)
}
