//! The telemetry queue through the Rust API, with no engine to send to: an event longer than
//! the engine takes is refused by `track`; tracking appends one line to the queue's file
//! (`telemetry.log`), the same file, however many events wait; and the queue's bounds evict
//! the oldest non-money events (reported) and refuse money past its own bound.

// This file uses part of the shared fixture only.
#[allow(dead_code)]
mod support;

use std::io::{Read as _, Seek as _, SeekFrom};
use std::os::unix::fs::MetadataExt as _;

use offer_sdk::{Sdk, SdkCallback, SdkEvent, TrackError};
use support::{config, eventually, free_port, options, temp_dir, wait_for};

/// An SDK of a game at an address where no engine listens, with its data in `data`.
fn offline_sdk(data: &std::path::Path, capacity: usize, money_capacity: usize) -> Sdk {
    let mut options = options(data);
    options.telemetry_capacity = capacity;
    options.money_capacity = money_capacity;
    let base = format!("http://127.0.0.1:{}", free_port());
    let game = uuid::Uuid::new_v4().to_string();
    Sdk::init(
        &config(&game, "ofr_live_sk_nothing", &base),
        Some("player_0".into()),
        None,
        options,
    )
    .expect("init needs no network")
}

/// `currency_earned` of one gem with `tx_id` and a `source` of `source_bytes` bytes.
fn earned(tx_id: &str, source_bytes: usize) -> SdkEvent {
    SdkEvent::CurrencyEarned {
        currency_id: "gems".into(),
        amount: 1,
        source: Some("s".repeat(source_bytes)),
        tx_id: tx_id.into(),
        ts: None,
    }
}

#[test]
fn an_event_longer_than_the_engine_takes_is_refused_and_not_queued() {
    let data = temp_dir("too-large");
    let sdk = offline_sdk(&data, 1_000, 1_000);
    let refused = sdk.track(earned("big", 3 << 20));
    assert!(
        matches!(refused, Err(TrackError::TooLarge { bytes, limit }) if bytes > limit),
        "{refused:?}"
    );
    // Just under the engine's 2 MiB body, less the batch's envelope and room for the longest
    // player token (`,"player_token":"`, 8 KiB, `"`): taken.
    sdk.track(earned("fits", 2_097_152 - 65 - 8_210 - 200))
        .expect("an event that fits a body alone is queued");
    assert_eq!(sdk.pending_events(), 1);
    drop(sdk);
    let _ = std::fs::remove_dir_all(data);
}

#[test]
fn track_appends_one_line_to_the_same_file_however_many_events_wait() {
    let data = temp_dir("journal");
    let journal = data.join("telemetry.log");
    let first = offline_sdk(&data, 1_000, 1_000_000);
    for n in 0..50_000 {
        first.track(earned(&format!("tx-{n}"), 0)).expect("queued");
    }
    assert_eq!(first.pending_events(), 50_000);
    drop(first);

    let sdk = offline_sdk(&data, 1_000, 1_000_000);
    assert_eq!(sdk.pending_events(), 50_000, "read back from disk");
    let file = std::fs::metadata(&journal).expect("the queue's file");
    let (inode, mut length) = (file.ino(), file.len());
    for n in 0..100 {
        let tx_id = format!("more-{n}");
        sdk.track(earned(&tx_id, 0)).expect("queued");
        eventually("the event is written", || {
            std::fs::metadata(&journal).is_ok_and(|m| m.len() > length)
        });
        let file = std::fs::metadata(&journal).expect("the queue's file");
        assert_eq!(file.ino(), inode, "the file was not rewritten");
        let mut appended = String::new();
        let mut reader = std::fs::File::open(&journal).expect("open");
        reader.seek(SeekFrom::Start(length)).expect("seek");
        reader.read_to_string(&mut appended).expect("read");
        let record: serde_json::Value =
            serde_json::from_str(appended.trim_end()).expect("one JSON line");
        assert!(appended.ends_with('\n') && appended.trim_end().lines().count() == 1);
        assert_eq!(record["event"]["tx_id"], tx_id.as_str(), "{appended}");
        assert_eq!(record["id"], 50_000 + n, "{appended}");
        length = file.len();
    }
    assert_eq!(sdk.pending_events(), 50_100);
    drop(sdk);
    let _ = std::fs::remove_dir_all(data);
}

#[test]
fn a_full_queue_evicts_the_oldest_non_money_events_and_refuses_money_past_its_bound() {
    let data = temp_dir("bound");
    let sdk = offline_sdk(&data, 10, 5);
    for _ in 0..10 {
        sdk.track(SdkEvent::FirstLoss { ts: None }).expect("queued");
    }
    for n in 0..5 {
        sdk.track(earned(&format!("tx-{n}"), 0)).expect("queued");
    }
    assert_eq!(
        sdk.pending_events(),
        10,
        "each earning evicted a first_loss"
    );
    let SdkCallback::Error { message, .. } = wait_for(
        &sdk,
        "the eviction reported",
        |c| matches!(c, SdkCallback::Error { code, .. } if code == "sdk_events_dropped"),
    ) else {
        unreachable!("filtered above")
    };
    assert!(message.contains("non-money"), "{message}");
    assert_eq!(
        sdk.track(earned("tx-5", 0)),
        Err(TrackError::QueueFull { capacity: 5 })
    );
    assert_eq!(sdk.pending_events(), 10);
    drop(sdk);
    let _ = std::fs::remove_dir_all(data);
}
