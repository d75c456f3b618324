//! Why a template could not be read: the lexer's and the parser's one error type.

use super::gate::Gate;

/// A template that cannot be turned into a tree, with the line to look at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Not Dart this subset reads: a stray character, a missing `;`, an unsupported form.
    #[error("line {line}: {message}")]
    Syntax {
        /// 1-based line.
        line: u32,
        /// What was expected or found.
        message: String,
    },
    /// A `(`, `[` or `{` never closed, closed by the wrong kind, or a closer with no opener.
    #[error("line {line}: {message}")]
    Unbalanced {
        /// 1-based line of the unmatched delimiter.
        line: u32,
        /// Which delimiter and where.
        message: String,
    },
    /// Expressions nested deeper than the parser's limit.
    #[error("line {line}: nested deeper than {limit} levels", limit = super::MAX_NESTING)]
    TooDeep {
        /// 1-based line where the limit was crossed.
        line: u32,
    },
    /// More tree nodes than the parser's limit.
    #[error("line {line}: more than {limit} expressions", limit = super::MAX_NODES)]
    TooManyNodes {
        /// 1-based line where the limit was crossed.
        line: u32,
    },
}

impl ParseError {
    /// The 1-based line the error points at.
    pub fn line(&self) -> u32 {
        match self {
            Self::Syntax { line, .. }
            | Self::Unbalanced { line, .. }
            | Self::TooDeep { line }
            | Self::TooManyNodes { line } => *line,
        }
    }

    /// The validator gate that reports this error.
    pub fn gate(&self) -> Gate {
        match self {
            Self::Syntax { .. } => Gate::SyntaxError,
            Self::Unbalanced { .. } => Gate::UnbalancedDelimiters,
            Self::TooDeep { .. } => Gate::NestingTooDeep,
            Self::TooManyNodes { .. } => Gate::TooManyNodes,
        }
    }
}
