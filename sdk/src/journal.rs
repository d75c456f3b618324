//! The telemetry queue on disk: an append-only journal, `telemetry.log` in the SDK's data
//! directory, so keeping one more event costs one more line, however long the queue is.
//!
//! Each line is one record: `{"id":N,"event":{...}}` queues an event, `{"done":[N,...]}`
//! forgets events (the engine took them, or the queue dropped them). Replaying the lines in
//! order gives the queue. A crash mid-append leaves at most a partial last line, which the
//! next load skips.
//!
//! **Compaction** rewrites the file with the queued events alone (a temporary file, synced,
//! then renamed over the journal, so a crash leaves the old journal or the new one). It happens
//! at two points only: the first write after a load that found anything but queued events
//! (forgotten events, a partial line, the single-file queue of earlier SDK versions), and a
//! write after which the journal would exceed twice the bytes of the queued events plus
//! [`COMPACT_SLACK_BYTES`]. Every record is so rewritten a bounded number of times, whatever
//! the queue's length.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};

use offer_wire::event::SdkEvent;
use serde::Deserialize;

use crate::storage;

/// The journal's file in the SDK's data directory.
const JOURNAL_FILE: &str = "telemetry.log";

/// The single JSON file earlier SDK versions kept the whole queue in, read once and replaced
/// by the journal.
const LEGACY_FILE: &str = "telemetry.json";

/// The bytes the journal may hold beyond twice its queued events before it is compacted, so
/// a short queue is not rewritten every few acknowledgements.
pub(crate) const COMPACT_SLACK_BYTES: u64 = 1 << 20;

/// One line of the journal.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Record {
    /// An event queued under its local id.
    Queued {
        /// The local id.
        id: u64,
        /// The event.
        event: SdkEvent,
    },
    /// Events forgotten, by local id.
    Done {
        /// Their ids.
        done: Vec<u64>,
    },
}

/// An event of the queue of earlier SDK versions (`telemetry.json`, one JSON array).
#[derive(Debug, Deserialize)]
struct LegacyQueued {
    id: u64,
    event: SdkEvent,
}

/// The line that queues `event_json` under `id`.
pub fn queued_line(id: u64, event_json: &str) -> String {
    format!("{{\"id\":{id},\"event\":{event_json}}}\n")
}

/// The length of [`queued_line`] for `id` and an event of `event_bytes`, without writing it:
/// `{"id":` (6), the id's digits, `,"event":` (9), the event and `}` with the newline (2).
pub fn queued_line_bytes(id: u64, event_bytes: usize) -> u64 {
    let digits = id.checked_ilog10().map_or(1, |log| log + 1);
    17 + u64::from(digits) + event_bytes as u64
}

/// The line that forgets `ids`.
pub fn done_line(ids: &[u64]) -> String {
    let list: Vec<String> = ids.iter().map(u64::to_string).collect();
    format!("{{\"done\":[{}]}}\n", list.join(","))
}

/// What a load found: the queued events in id order, and whether the journal must be
/// compacted before anything is appended to it.
#[derive(Debug)]
pub struct Loaded {
    /// The events still queued, by local id, oldest first.
    pub events: Vec<(u64, SdkEvent)>,
    /// Whether the file holds anything but these events (or the legacy file exists).
    pub needs_compaction: bool,
}

/// The journal's file, opened for appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    legacy: PathBuf,
    /// Open for appending once the first write happened.
    file: Option<File>,
    /// The file's length.
    bytes: u64,
    /// Compactions made since the journal was opened.
    compactions: u64,
}

impl Journal {
    /// Reads the journal of `data_dir` (and the legacy queue file, when an earlier SDK left
    /// one). A missing or unreadable file is an empty queue; unreadable lines are skipped.
    pub fn open(data_dir: &Path) -> (Self, Loaded) {
        let path = data_dir.join(JOURNAL_FILE);
        let legacy = data_dir.join(LEGACY_FILE);
        let mut queued = BTreeMap::new();
        let mut needs_compaction = false;
        if let Some(old) = std::fs::read(&legacy)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Vec<LegacyQueued>>(&bytes).ok())
        {
            queued.extend(old.into_iter().map(|q| (q.id, q.event)));
            needs_compaction = true;
        }
        if legacy.exists() {
            needs_compaction = true;
        }
        let mut bytes = 0;
        if let Ok(file) = File::open(&path) {
            let length = file.metadata().map_or(0, |m| m.len());
            for line in BufReader::new(file).split(b'\n') {
                let Ok(line) = line else {
                    needs_compaction = true;
                    break;
                };
                bytes += line.len() as u64 + 1;
                match serde_json::from_slice::<Record>(&line) {
                    Ok(Record::Queued { id, event }) => {
                        queued.insert(id, event);
                    }
                    Ok(Record::Done { done }) => {
                        needs_compaction = true;
                        for id in done {
                            queued.remove(&id);
                        }
                    }
                    // A partial last line after a crash, or damage: skipped, and gone with
                    // the compaction that follows.
                    Err(_) => needs_compaction = true,
                }
            }
            // A last line without its newline (a crash mid-append): the next line appended
            // would run into it, so the journal is rewritten first.
            if bytes != length {
                needs_compaction = true;
                bytes = length;
            }
        }
        let journal = Self {
            path,
            legacy,
            file: None,
            bytes,
            compactions: 0,
        };
        let loaded = Loaded {
            events: queued.into_iter().collect(),
            needs_compaction,
        };
        (journal, loaded)
    }

    /// The file's length in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// How many compactions this journal made since it was opened.
    #[cfg(test)]
    pub fn compactions(&self) -> u64 {
        self.compactions
    }

    /// Appends `lines` (whole records, each ending in a newline) and syncs them.
    pub fn append(&mut self, lines: &[u8]) -> std::io::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let file = match &mut self.file {
            Some(file) => file,
            None => self.file.insert(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&self.path)?,
            ),
        };
        file.write_all(lines)?;
        file.sync_data()?;
        self.bytes += lines.len() as u64;
        Ok(())
    }

    /// Replaces the journal with `lines`, the queued events' records, atomically; the legacy
    /// file, if any, goes once the journal holds its events.
    pub fn rewrite(&mut self, lines: &[u8]) -> std::io::Result<()> {
        self.file = None;
        storage::write_atomically(&self.path, lines)?;
        self.bytes = lines.len() as u64;
        self.compactions += 1;
        match std::fs::remove_file(&self.legacy) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// Whether a journal of `journal_bytes` holding `live_bytes` of queued records is due for a
/// compaction.
pub fn compaction_due(journal_bytes: u64, live_bytes: u64) -> bool {
    journal_bytes
        > live_bytes
            .saturating_mul(2)
            .saturating_add(COMPACT_SLACK_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("offer-sdk-j-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).expect("dir");
        d
    }

    #[test]
    fn replaying_the_lines_gives_the_queue_and_a_partial_line_is_skipped() {
        let d = dir();
        let (mut journal, loaded) = Journal::open(&d);
        assert!(loaded.events.is_empty() && !loaded.needs_compaction);
        let mut lines = queued_line(0, r#"{"type":"first_loss"}"#);
        lines += &queued_line(1, r#"{"type":"boss_raid"}"#);
        lines += &done_line(&[0]);
        lines += r#"{"id":2,"event":{"type":"first_lo"#;
        journal.append(lines.as_bytes()).expect("append");
        let (_, loaded) = Journal::open(&d);
        let kinds: Vec<_> = loaded
            .events
            .iter()
            .map(|(id, e)| (*id, e.kind()))
            .collect();
        assert_eq!(kinds, [(1, "boss_raid")]);
        assert!(loaded.needs_compaction);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_queued_purchase_keeps_its_receipt_across_a_restart() {
        let d = dir();
        let (mut journal, _) = Journal::open(&d);
        let event = r#"{"type":"purchase","item_ids":[],"price_cents":0,"tx_id":"t","receipt":{"store":"google_play","purchase_data":"{\"orderId\": \"GPA.1\",\"productId\":\"\\u00e9\"}","signature":"c2ln"}}"#;
        journal
            .append(queued_line(0, event).as_bytes())
            .expect("append");
        let (_, loaded) = Journal::open(&d);
        let expected: SdkEvent = serde_json::from_str(event).expect("a purchase");
        assert_eq!(loaded.events, vec![(0, expected)]);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn the_legacy_queue_file_is_read_and_gone_after_the_first_compaction() {
        let d = dir();
        std::fs::write(
            d.join(LEGACY_FILE),
            r#"[{"id":4,"event":{"type":"first_loss"}}]"#,
        )
        .expect("legacy file");
        let (mut journal, loaded) = Journal::open(&d);
        assert_eq!(loaded.events.len(), 1);
        assert!(loaded.needs_compaction);
        journal
            .rewrite(queued_line(4, r#"{"type":"first_loss"}"#).as_bytes())
            .expect("rewrite");
        assert!(!d.join(LEGACY_FILE).exists());
        let (_, again) = Journal::open(&d);
        assert_eq!(again.events[0].0, 4);
        assert!(!again.needs_compaction);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_queued_lines_length_is_known_without_writing_it() {
        let event = r#"{"type":"first_loss"}"#;
        for id in [0, 9, 10, 99, 12_345, u64::MAX] {
            assert_eq!(
                queued_line_bytes(id, event.len()),
                queued_line(id, event).len() as u64
            );
        }
    }

    #[test]
    fn compaction_is_due_past_twice_the_live_bytes_and_the_slack() {
        assert!(!compaction_due(COMPACT_SLACK_BYTES, 0));
        assert!(compaction_due(COMPACT_SLACK_BYTES + 1, 0));
        assert!(!compaction_due(2 * 500 + COMPACT_SLACK_BYTES, 500));
        assert!(compaction_due(2 * 500 + COMPACT_SLACK_BYTES + 1, 500));
    }
}
