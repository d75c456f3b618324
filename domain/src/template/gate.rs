//! The validator's gates: the stable name of every check a template and its bindings go
//! through, shared by the validator's findings and the parse error that stops a reading.

use serde::Serialize;
use utoipa::ToSchema;

/// A validator gate: the stable `gate` name of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// The template is over `MAX_TEMPLATE_BYTES` (64 KiB).
    TemplateTooLarge,
    /// The bindings are over `MAX_BINDINGS_BYTES` (16 KiB of JSON).
    BindingsTooLarge,
    /// The template is more than `MAX_NODES` expressions.
    TooManyNodes,
    /// The template nests deeper than `MAX_NESTING`.
    NestingTooDeep,
    /// The template is not in the Dart subset.
    SyntaxError,
    /// A `(`, `[` or `{` is unmatched.
    UnbalancedDelimiters,
    /// An import outside the allow-list.
    ImportNotAllowed,
    /// A network API (`HttpClient`, `Image.network`, `http.get`, ...).
    NetworkCall,
    /// An API that leaves the widget sandbox (`MethodChannel`, `Isolate`, `File`, ...).
    ForbiddenApi,
    /// No `StatelessWidget` subclass with a `build` returning a widget.
    EntryWidgetMissing,
    /// A constructor or constant not in the widget table, or an unsupported method call.
    UnknownWidget,
    /// An argument the constructor does not take.
    UnknownArgument,
    /// A required argument is missing.
    MissingArgument,
    /// The bindings are not `{items: [ids], name: string | number}`.
    BadBindings,
    /// The template reads a value or item position the bindings do not have.
    UnknownBinding,
    /// A bound item id that no catalogue item has.
    UnknownItem,
    /// A bound item that is deleted.
    DeletedItem,
    /// The template reads an item field that does not exist.
    UnknownItemField,
    /// Something shaped like a service key in the template (as written, or in a string it
    /// builds from constants: see `folding`) or the bindings.
    SecretPatternFound,
    /// Warning: a named value or item bound but never read.
    UnusedBinding,
    /// Warning: the template reads an item field the item has no value for (no amount, no
    /// art, no description); the page shows nothing there.
    ItemFieldEmpty,
    /// Warning: a literal `fontSize` over the largest a preview renders
    /// ([`MAX_FONT_SIZE`](super::limits::MAX_FONT_SIZE)); its preview fails.
    FontSizeOverLimit,
    /// Warning: helper methods and widget classes call each other so many times that
    /// evaluating the page takes more than [`MAX_EVAL_STEPS`](super::limits::MAX_EVAL_STEPS) steps; its preview fails.
    EvaluationOverLimit,
}
