//! The telemetry sender: the queue goes to `POST /v1/sdk/events` in batches, whenever an event
//! is tracked or the flush interval passes, once the session is open and while the kill switch
//! allows the SDK; failures are retried with backoff.

use std::sync::atomic::Ordering;

use reqwest::StatusCode;

use crate::backoff::Backoff;
use crate::callback::SdkCallback;
use crate::worker::{BACKOFF_BASE, Shared, lock};

/// The most events in one `POST /v1/sdk/events` (the engine's limit).
const MAX_BATCH: usize = 100;

/// Sends the telemetry queue in batches whenever it is woken or the interval passes, once
/// the session is open and while the kill switch allows the SDK.
pub async fn run(shared: &Shared, http: &reqwest::Client) {
    let mut backoff = Backoff::new(BACKOFF_BASE, shared.timing.backoff_cap);
    let mut batch_size = MAX_BATCH;
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
            let batch = lock(&shared.queue).batch(batch_size);
            if batch.is_empty() {
                batch_size = MAX_BATCH;
                break;
            }
            let events: Vec<_> = batch.iter().map(|q| &q.event).collect();
            let sent = http
                .post(shared.config.url("/v1/sdk/events"))
                .bearer_auth(&shared.config.api_key)
                .json(&serde_json::json!({"session_id": shared.session_id, "events": events}))
                .send()
                .await;
            let ids: Vec<u64> = batch.iter().map(|q| q.id).collect();
            match sent.map(|r| r.status()) {
                Ok(StatusCode::ACCEPTED) => {
                    backoff.reset();
                    forget(shared, &ids);
                }
                Ok(StatusCode::UNPROCESSABLE_ENTITY | StatusCode::BAD_REQUEST)
                    if batch.len() > 1 =>
                {
                    // One bad event refuses the whole batch: send one at a time to find it.
                    batch_size = 1;
                }
                Ok(status @ (StatusCode::UNPROCESSABLE_ENTITY | StatusCode::BAD_REQUEST)) => {
                    shared.emit(SdkCallback::Error {
                        code: "sdk_event_refused".into(),
                        message: format!(
                            "the engine refused a {} event ({status}); it was dropped",
                            batch[0].event.kind()
                        ),
                    });
                    forget(shared, &ids);
                }
                Ok(StatusCode::FORBIDDEN) => break,
                _ => {
                    tokio::time::sleep(backoff.next_delay()).await;
                }
            }
        }
    }
}

/// Removes acknowledged events from the queue, reporting a queue file that cannot be written.
fn forget(shared: &Shared, ids: &[u64]) {
    let written = lock(&shared.queue).acknowledge(ids);
    report_queue_write(shared, written);
}

/// Writes what was tracked since the last write to the queue's file.
pub fn keep(shared: &Shared) {
    let written = lock(&shared.queue).persist();
    report_queue_write(shared, written);
}

/// Tells the game its telemetry queue could not be written (it is still held in memory).
fn report_queue_write(shared: &Shared, written: std::io::Result<()>) {
    if let Err(e) = written {
        shared.emit(SdkCallback::Error {
            code: "sdk_queue_write".into(),
            message: format!("cannot write the telemetry queue: {e}"),
        });
    }
}
