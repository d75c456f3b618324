//! Custom offer pages: the template language, its validator and the tree the preview
//! renderer draws.
//!
//! A template is Dart source as an AI coding assistant writes it for a Flutter screen: a
//! few imports and a `StatelessWidget` subclass whose `build` returns a widget tree. The
//! subset read here is parsed once ([`parse`]) into a typed tree ([`ast`]) with line
//! numbers; [`validate()`] and the preview renderer both walk that tree, and both take the
//! widgets and their arguments from one table ([`widgets`]).
//!
//! Layout, leaves first:
//! - [`gate`]: the validator's gate names, which a parse error also reports.
//! - [`error`]: the parse error, with its line.
//! - [`lexer`]: source to tokens; the delimiter balance check.
//! - [`ast`]: the tree.
//! - [`parser`]: tokens to the tree, depth and size bounded.
//! - [`widgets`]: the widget table: constructors, their arguments, named constants.
//! - [`bindings`]: the bindings object and how a template reads it.
//! - [`catalogue`]: the item lookup the validator and the renderer are given.
//! - [`forbidden`]: the import allow-list and the APIs a page may never use.
//! - [`folding`]: the strings a template builds from its constants, for the secret scan.
//! - [`limits`]: the render limits a template is checked against before it runs.
//! - [`cost`]: the static estimate of a render's evaluation steps.
//! - [`mod@validate`]: the gates, each with a stable name.
//!
//! The secret scanner the validator uses is [`crate::secret_scan`], shared with the rest of
//! the service.

pub mod ast;
pub mod bindings;
pub mod catalogue;
pub mod cost;
pub mod error;
pub mod folding;
pub mod forbidden;
pub mod gate;
pub mod lexer;
pub mod limits;
pub mod parser;
pub mod validate;
pub mod widgets;

pub use error::ParseError;
pub use gate::Gate;
pub use parser::parse;
pub use validate::{Finding, Validation, validate};

/// Largest template accepted, in bytes of UTF-8 source.
pub const MAX_TEMPLATE_BYTES: usize = 64 * 1024;
/// Largest bindings object accepted, in bytes of compact JSON.
pub const MAX_BINDINGS_BYTES: usize = 16 * 1024;
/// Deepest nesting of the tree. A widget passed as `child:` costs two levels (the argument
/// and the call), one in `children: [...]` three, so this allows widget trees about 40 deep.
pub const MAX_NESTING: usize = 128;
/// Most expression nodes in one template: 64 KiB of ordinary widget code stays well under
/// it, only degenerate input (a list of 16,000 numbers) reaches it.
pub const MAX_NODES: usize = 16_384;
