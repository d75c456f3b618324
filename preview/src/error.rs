//! Why a preview could not be rendered.

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
    OverBudget(crate::budget::Exceeded),
    /// PNG encoding failed.
    #[error("PNG encoding failed: {0}")]
    Encode(String),
}
