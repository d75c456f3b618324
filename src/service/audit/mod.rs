//! The audit trail: every change a person or key makes, recorded with who, when, what and
//! from where.
//!
//! A use case that changes something names what it changes ([`Audit`]: the action, the
//! object and the stored documents that hold it). The record is decided by the store, not by
//! the use case's answer: it is made exactly when the watched documents change, with the
//! fields that changed (secrets redacted), so there is no change without its record and no
//! record without its change, whichever node or moment fails. How depends on where the
//! object lives:
//!
//! - **A game's own objects** (its configuration, catalogue, bundles, approvals: documents of
//!   the game's own collections, like its records) are changed through [`Recorded`]: the
//!   write and its record are one atomic store step (one SQLite transaction; one script on
//!   Redis, where a game's keys share a Cluster slot), and a refused write writes neither.
//!   These are `templates.put`, `bundle.put`, `bundle.delete`, `experiment.add`,
//!   `experiment.delete`, `kill_switch.set`, `store_settings.put`,
//!   `store_settings.rotate_google_play_token`, `player_auth.put`, `item.upsert`,
//!   `item.bulk_upsert`, `item.patch`, `item.delete`, `approval.approve` and
//!   `approval.reject`.
//! - **Everything else** touches a deployment-wide collection, which on a Redis Cluster sits
//!   in another slot than the record: the game record (`game.*`, in `games`), keys, members,
//!   dashboard sessions, device sign-ins, the operator's settings, the approval index a
//!   publish request writes (`custom_page.request_publish`), and a player's erasure (which
//!   spans the player's money records and every node's sessions). Such a change runs through
//!   [`audited`]: an intent is written before it, the documents are read again after it,
//!   and a restart's sweep completes an intent a stopped node left.
//!
//! - [`atomic`]: a game's change and its record in one store step;
//! - [`intent`]: the audited change through an intent, and the sweep that settles old
//!   intents;
//! - [`trail`]: the records: appending, reading a studio's page by page, forgetting those
//!   past `audit.retention_days`;
//! - [`operator`]: the operator's billing settings, recorded at start as the difference
//!   from the last recorded configuration.

pub mod atomic;
pub mod intent;
pub mod operator;
pub mod trail;

pub use atomic::Recorded;
pub use intent::{Audit, Watched, audited};
