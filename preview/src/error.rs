//! Why a preview could not be rendered, and which limit of the render budget a page crossed.

use std::fmt;
use std::time::Duration;

/// A render failure.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The template has no `StatelessWidget` subclass with a `build` method.
    #[error("the template has no entry widget (a StatelessWidget with a build method)")]
    NoEntryWidget,
    /// The screen size cannot be allocated (zero or absurdly large).
    #[error("cannot allocate a {width}x{height} image")]
    BadScreen {
        /// Requested width in pixels.
        width: u32,
        /// Requested height in pixels.
        height: u32,
    },
    /// A shipped font failed to load (a corrupted build).
    #[error("the shipped font cannot be read")]
    Font,
    /// The page crossed a limit of its [`Budget`](crate::Budget): the render stopped before
    /// doing (or allocating) more.
    #[error("the page is over the preview budget: {0}")]
    OverBudget(Exceeded),
    /// PNG encoding failed.
    #[error("PNG encoding failed: {0}")]
    Encode(String),
}

/// The limit a render crossed, with its value.
#[derive(Debug, Clone, PartialEq)]
pub enum Exceeded {
    /// The canvas is larger than `max_canvas_pixels`.
    CanvasArea {
        /// Pixels asked for.
        pixels: u64,
        /// The limit.
        max: u64,
    },
    /// A text style sets a font size over `max_font_size`.
    FontSize {
        /// The size asked for.
        size: f32,
        /// The limit.
        max: f32,
    },
    /// More than `max_glyphs` glyphs.
    Glyphs {
        /// The limit.
        max: u64,
    },
    /// More than `max_layout_nodes` boxes.
    LayoutNodes {
        /// The limit.
        max: u64,
    },
    /// Widgets nested deeper than `max_depth`.
    Depth {
        /// The limit.
        max: usize,
    },
    /// More than `max_eval_steps` evaluation steps.
    EvalSteps {
        /// The limit.
        max: u64,
    },
    /// The render ran past `time`.
    Time {
        /// The limit.
        max: Duration,
    },
    /// The render would allocate more than `max_memory_bytes`.
    Memory {
        /// What was being allocated when the budget ran out.
        what: &'static str,
        /// The limit.
        max: u64,
    },
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CanvasArea { pixels, max } => write!(
                f,
                "canvas area limit: {pixels} pixels asked for, at most {max}"
            ),
            Self::FontSize { size, max } => write!(
                f,
                "font size limit: fontSize {size} is over the largest allowed, {max}"
            ),
            Self::Glyphs { max } => write!(
                f,
                "glyph limit: the page sets more than {max} characters of text"
            ),
            Self::LayoutNodes { max } => write!(
                f,
                "layout node limit: the page lays out more than {max} boxes"
            ),
            Self::Depth { max } => write!(
                f,
                "widget depth limit: widgets (or the expressions that build them) nest deeper \
                 than {max} levels"
            ),
            Self::EvalSteps { max } => write!(
                f,
                "evaluation step limit: the page takes more than {max} steps to evaluate \
                 (methods or widget classes that call each other many times, or values \
                 copied many times)"
            ),
            Self::Time { max } => write!(
                f,
                "time limit: the render took longer than {} ms",
                max.as_millis()
            ),
            Self::Memory { what, max } => write!(
                f,
                "memory limit: {what} would take the render over {} MiB",
                max / (1024 * 1024)
            ),
        }
    }
}
