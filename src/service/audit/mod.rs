//! The audit trail: every change a person or key makes, recorded with who, when, what and
//! from where.
//!
//! A use case that changes something names what it changes ([`Audit`]: the action, the
//! object and the stored documents that hold it) and runs its change through
//! [`audited`]. The record is decided by the
//! store, not by the use case's answer: the watched documents are read before and after the
//! change, and a record is appended exactly when they differ, with the fields that changed
//! (secrets redacted). An intent written before the change makes this survive a crash: a
//! node that stops between the change and its record leaves the intent, and the sweep (at
//! start, then hourly, on any node) settles it the same way. So there is no change without
//! its record and no record without its change, whichever node or moment fails.
//!
//! - [`intent`]: the audited change, its intent and the sweep that settles old intents;
//! - [`trail`]: the records: appending, reading a studio's page by page, forgetting those
//!   past `audit.retention_days`;
//! - [`operator`]: the operator's billing settings, recorded at start as the difference
//!   from the last recorded configuration.

pub mod intent;
pub mod operator;
pub mod trail;

pub use intent::{Audit, Watched, audited};
