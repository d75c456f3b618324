//! The limits a preview render runs under that a template can be checked against before it
//! runs: the renderer's budget (`offer_preview::Budget`) takes its defaults from here, and
//! the validator warns when the tree alone shows a page would cross them.

/// Largest font size a page may set, in logical pixels. A glyph's cost grows with the
/// square of its size; a phone screen is about 400 logical pixels wide, so larger text only
/// ever shows a fragment of one glyph.
pub const MAX_FONT_SIZE: f32 = 512.0;

/// Deepest nesting of helper-method and widget-class calls the renderer follows; a call
/// deeper than this renders as nothing, so a class that builds itself ends.
pub const MAX_CALL_DEPTH: usize = 8;

/// Most evaluation steps (one per expression evaluated, call made or node of a value
/// copied) of one render. Depth alone does not bound a render: methods that call each
/// other ten ways, seven deep, evaluate ten million calls. An ordinary page takes a few
/// thousand steps.
pub const MAX_EVAL_STEPS: u64 = 200_000;

/// Most glyphs one render lays out and draws. A full phone screen of 14-pixel text holds
/// about 3,000.
pub const MAX_GLYPHS: u64 = 20_000;

/// Most boxes one render lays out.
pub const MAX_LAYOUT_NODES: u64 = 20_000;

/// Deepest nesting of widgets in an evaluated page.
pub const MAX_WIDGET_DEPTH: usize = 128;
