//! The telemetry sender: the queue goes to `POST /v1/sdk/events` in batches (money events
//! first, each within the engine's limits, see [`crate::limits`]), whenever an event is
//! tracked or the flush interval passes, once the session is open and while the kill switch
//! allows the SDK; failures are retried with backoff.
//!
//! A batch the engine refuses as too large (413, from an engine configured below the limits
//! the SDK mirrors) is halved until it fits; an event refused alone is dropped and reported as
//! `sdk_event_too_large`, so one oversized event never holds back the events behind it. A
//! batch refused as invalid (400, 422) is sent one event at a time to find the bad one, which
//! is dropped and reported as `sdk_event_refused`. After each accepted batch the batch size
//! doubles again, up to the engine's limit.
//!
//! Each batch carries the player's token when the game gave one; a batch refused for its token
//! (401 `player_token_*`) stays queued and goes with the game's next token (see
//! [`crate::player_token`]).

use std::sync::atomic::Ordering;

use reqwest::StatusCode;
use reqwest::header::CONTENT_TYPE;

use crate::backoff::Backoff;
use crate::callback::SdkCallback;
use crate::journal;
use crate::limits::MAX_BATCH_EVENTS;
use crate::player_token;
use crate::shared::{BACKOFF_BASE, Shared, lock};
use crate::sigpipe;
use crate::telemetry::{self, Queued, Writes};

/// Sends the telemetry queue in batches whenever it is woken or the interval passes, once
/// the session is open and while the kill switch allows the SDK.
pub async fn run(shared: &Shared, http: &reqwest::Client) {
    let mut backoff = Backoff::new(BACKOFF_BASE, shared.timing.backoff_cap);
    let mut max_events = MAX_BATCH_EVENTS;
    loop {
        tokio::select! {
            () = shared.flush.notified() => {}
            () = tokio::time::sleep(shared.timing.flush_interval) => {}
        }
        keep(shared);
        loop {
            if !shared.session_open.load(Ordering::SeqCst)
                || !shared.state.kill_level().allows_sdk()
            {
                break;
            }
            // A refused token waits for the game's next one, which wakes this loop; meanwhile
            // the loop keeps writing what is tracked to disk.
            if lock(&shared.queue).is_empty() || shared.tokens.refusal().is_some() {
                break;
            }
            // Before the batch is cut: waiting for a token, more events may come.
            let token = shared.token().await;
            let batch = lock(&shared.queue).batch(max_events);
            if batch.is_empty() {
                break;
            }
            let sent = http
                .post(shared.config.url("/v1/sdk/events"))
                .bearer_auth(&shared.config.api_key)
                .header(CONTENT_TYPE, "application/json")
                .body(telemetry::body(
                    shared.session_id,
                    token.text.as_deref(),
                    &batch,
                ))
                .send()
                .await;
            let sent = match sent {
                Ok(response) if response.status() == StatusCode::UNAUTHORIZED => {
                    match player_token::token_refusal(response).await {
                        // The batch stays queued: it goes with the game's next token.
                        Some(refusal) => {
                            shared.token_refused(&token, refusal);
                            continue;
                        }
                        None => Ok(StatusCode::UNAUTHORIZED),
                    }
                }
                other => other.map(|r| r.status()),
            };
            match sent {
                Ok(StatusCode::ACCEPTED) => {
                    backoff.reset();
                    forget(shared, &batch);
                    max_events = (max_events * 2).min(MAX_BATCH_EVENTS);
                }
                Ok(StatusCode::PAYLOAD_TOO_LARGE) if batch.len() > 1 => {
                    max_events = batch.len() / 2;
                }
                Ok(StatusCode::PAYLOAD_TOO_LARGE) => {
                    drop_refused(shared, &batch, "sdk_event_too_large", "as too large");
                }
                Ok(StatusCode::UNPROCESSABLE_ENTITY | StatusCode::BAD_REQUEST)
                    if batch.len() > 1 =>
                {
                    // One bad event refuses the whole batch: send one at a time to find it.
                    max_events = 1;
                }
                Ok(StatusCode::UNPROCESSABLE_ENTITY | StatusCode::BAD_REQUEST) => {
                    drop_refused(shared, &batch, "sdk_event_refused", "as invalid");
                }
                Ok(StatusCode::FORBIDDEN) => break,
                other => {
                    if other.is_err() {
                        // The upload may have been cut by a peer that went away: a write to
                        // it may have left a (blocked) SIGPIPE on this thread.
                        sigpipe::discard_pending();
                    }
                    tokio::time::sleep(backoff.next_delay()).await;
                }
            }
        }
    }
}

/// Drops the one event of `batch`, which the engine refused `why`, and tells the game.
fn drop_refused(shared: &Shared, batch: &[Queued], code: &str, why: &str) {
    for queued in batch {
        shared.emit(SdkCallback::Error {
            code: code.into(),
            message: format!(
                "the engine refused a {} event of {} bytes {why}; it was dropped",
                queued.kind,
                queued.json.len()
            ),
        });
    }
    forget(shared, batch);
}

/// Removes sent or dropped events from the queue and writes that to its file.
fn forget(shared: &Shared, batch: &[Queued]) {
    let ids: Vec<u64> = batch.iter().map(|q| q.id).collect();
    lock(&shared.queue).acknowledge(&ids);
    keep(shared);
}

/// Writes what changed in the queue since the last write to its file (appending, or
/// compacting when due: see [`crate::journal`]), without holding the queue's lock while
/// writing, and tells the game of events the queue dropped.
pub fn keep(shared: &Shared) {
    let mut file = lock(&shared.journal);
    let writes = lock(&shared.queue).take_writes(file.bytes());
    let written = match writes {
        Writes::Append(lines) => file.append(lines.as_bytes()),
        Writes::Rewrite(all) => {
            let lines: String = all
                .iter()
                .map(|q| journal::queued_line(q.id, &q.json))
                .collect();
            file.rewrite(lines.as_bytes())
        }
    };
    drop(file);
    let ((evicted, too_large), capacity) = {
        let mut queue = lock(&shared.queue);
        if written.is_err() {
            queue.rewrite_next();
        }
        (queue.take_dropped(), queue.capacity())
    };
    if let Err(e) = written {
        shared.emit(SdkCallback::Error {
            code: "sdk_queue_write".into(),
            message: format!("cannot write the telemetry queue: {e}"),
        });
    }
    if evicted > 0 {
        shared.emit(SdkCallback::Error {
            code: "sdk_events_dropped".into(),
            message: format!(
                "{evicted} non-money events were dropped: past {capacity} queued events, each \
                 new one evicts the oldest non-money event"
            ),
        });
    }
    if too_large > 0 {
        shared.emit(SdkCallback::Error {
            code: "sdk_event_too_large".into(),
            message: format!(
                "{too_large} queued events of an earlier run were dropped: each is larger than \
                 the engine takes"
            ),
        });
    }
}
