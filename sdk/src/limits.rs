//! The engine's limits on `POST /v1/sdk/events`, mirrored here so the SDK never sends a body
//! the engine must refuse: a batch is cut to fit them, and `track` refuses an event that could
//! never fit in one.
//!
//! An engine configured lower than these still answers 413 `payload_too_large`; the telemetry
//! sender then halves its batches, and drops (and reports) a single event refused alone (see
//! [`crate::flush`]).

/// The largest request body the engine reads: `server.max_body_bytes` in the engine's
/// `config/default.toml` (2 MiB), enforced by its body limit layer (`src/http/mod.rs`).
pub(crate) const MAX_BODY_BYTES: usize = 2_097_152;

/// The most events one call carries: `MAX_BATCH` of the engine's `src/service/events.rs`.
pub(crate) const MAX_BATCH_EVENTS: usize = 100;

/// The bytes of a batch's body around its events: `{"session_id":"` (15), the session's
/// hyphenated UUID (36), `","events":[` (12) and `]}` (2). The body is written by
/// [`crate::telemetry::body`], whose test checks this figure.
pub(crate) const ENVELOPE_BYTES: usize = 65;

/// The bytes a batch's body takes for the player token at most: `,"player_token":"` (17), the
/// longest token the SDK sends and `"` (1). Every batch leaves room for them, so a token given
/// later never makes a cut batch too long.
pub(crate) const TOKEN_FIELD_BYTES: usize = 18 + crate::player_token::MAX_TOKEN_BYTES;

/// The largest event, as JSON, that fits in a body alone, with the longest token: anything
/// longer could never be sent, so `track` refuses it.
pub(crate) const MAX_EVENT_BYTES: usize = MAX_BODY_BYTES - ENVELOPE_BYTES - TOKEN_FIELD_BYTES;
