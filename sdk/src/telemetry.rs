//! The telemetry queue: events the game tracked and the engine has not acknowledged yet,
//! bounded in memory and kept on disk, so an outage or a restart of the game loses nothing
//! that matters.
//!
//! The bound applies to telemetry: when the queue is full, the oldest event that is not a
//! money event is dropped to make room. Money events (`currency_earned`, `currency_spent`,
//! `purchase`, `item_used`) are never dropped, so a queue holding only money events grows past the bound.
//! Every money event carries a `tx_id` (one is generated when the game leaves it empty), which
//! makes a resend after a lost answer harmless: the engine applies each `tx_id` once. Other
//! events have no such key: one whose answer was lost is sent again and may count twice.
//!
//! Pushing only touches memory, so tracking never waits on the disk on the game's thread; the
//! SDK's thread writes the queue (atomically) before each send and after each acknowledgement.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use offer_wire::event::SdkEvent;
use serde::{Deserialize, Serialize};

use crate::storage;

/// The queue's file in the SDK's data directory.
const QUEUE_FILE: &str = "telemetry.json";

/// Whether the event moves money or items, and so is never dropped.
pub fn is_money(event: &SdkEvent) -> bool {
    matches!(
        event,
        SdkEvent::CurrencyEarned { .. }
            | SdkEvent::CurrencySpent { .. }
            | SdkEvent::Purchase { .. }
            | SdkEvent::ItemUsed { .. }
    )
}

/// The event with a fresh `tx_id` when it is a money event whose `tx_id` is empty.
fn with_tx_id(mut event: SdkEvent) -> SdkEvent {
    match &mut event {
        SdkEvent::CurrencyEarned { tx_id, .. }
        | SdkEvent::CurrencySpent { tx_id, .. }
        | SdkEvent::Purchase { tx_id, .. }
        | SdkEvent::ItemUsed { tx_id, .. }
            if tx_id.is_empty() =>
        {
            *tx_id = uuid::Uuid::new_v4().to_string();
        }
        _ => {}
    }
    event
}

/// One queued event and the local number it is acknowledged by.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Queued {
    /// Increasing number, local to this install.
    pub id: u64,
    /// The event.
    pub event: SdkEvent,
}

/// The queue, mirrored to disk after every change.
#[derive(Debug)]
pub struct TelemetryQueue {
    events: VecDeque<Queued>,
    next_id: u64,
    capacity: usize,
    path: PathBuf,
    /// Whether memory holds changes the file does not have yet.
    dirty: bool,
}

impl TelemetryQueue {
    /// The queue of `data_dir`, with what a previous run left unsent (an unreadable file
    /// is treated as empty). `capacity` bounds the non-money events.
    pub fn load(data_dir: &Path, capacity: usize) -> Self {
        let path = data_dir.join(QUEUE_FILE);
        let events: VecDeque<Queued> = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        let next_id = events.back().map_or(0, |q| q.id + 1);
        Self {
            events,
            next_id,
            capacity: capacity.max(1),
            path,
            dirty: false,
        }
    }

    /// Queues `event` (a money event gets a `tx_id` when it has none), dropping the oldest
    /// non-money event when the queue is full, in memory only (see [`Self::persist`]).
    /// Returns whether an event was dropped.
    pub fn push(&mut self, event: SdkEvent) -> bool {
        let mut dropped = false;
        if self.events.len() >= self.capacity
            && let Some(oldest) = self.events.iter().position(|q| !is_money(&q.event))
        {
            self.events.remove(oldest);
            dropped = true;
        }
        self.events.push_back(Queued {
            id: self.next_id,
            event: with_tx_id(event),
        });
        self.next_id += 1;
        self.dirty = true;
        dropped
    }

    /// The oldest `max` events, to send as one batch.
    pub fn batch(&self, max: usize) -> Vec<Queued> {
        self.events.iter().take(max).cloned().collect()
    }

    /// Forgets the events the engine accepted (by their local ids; events dropped meanwhile
    /// are simply absent).
    pub fn acknowledge(&mut self, ids: &[u64]) -> std::io::Result<()> {
        self.events.retain(|q| !ids.contains(&q.id));
        self.dirty = true;
        self.persist()
    }

    /// How many events wait.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Writes the queue to disk atomically, if it changed since the last write.
    pub fn persist(&mut self) -> std::io::Result<()> {
        if !self.dirty {
            return Ok(());
        }
        let bytes = serde_json::to_vec(&self.events).map_err(std::io::Error::other)?;
        storage::write_atomically(&self.path, &bytes)?;
        self.dirty = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("offer-sdk-q-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).expect("dir");
        d
    }

    fn earned(tx: &str) -> SdkEvent {
        SdkEvent::CurrencyEarned {
            currency_id: "gems".into(),
            amount: 1,
            source: None,
            tx_id: tx.into(),
            ts: None,
        }
    }

    #[test]
    fn a_full_queue_drops_the_oldest_telemetry_never_money() {
        let d = dir();
        let mut q = TelemetryQueue::load(&d, 3);
        q.push(earned("a"));
        q.push(SdkEvent::FirstLoss { ts: None });
        q.push(SdkEvent::BossRaid { ts: None });
        assert!(q.push(earned("b")), "first_loss dropped");
        let kinds: Vec<_> = q.batch(10).iter().map(|e| e.event.kind()).collect();
        assert_eq!(kinds, ["currency_earned", "boss_raid", "currency_earned"]);
        q.push(earned("c"));
        q.push(earned("d"));
        let kinds: Vec<_> = q.batch(10).iter().map(|e| e.event.kind()).collect();
        assert_eq!(
            kinds, ["currency_earned"; 4],
            "money is kept past the bound"
        );
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn item_used_is_a_money_event() {
        assert!(is_money(&SdkEvent::ItemUsed {
            item_id: "potion".into(),
            quantity: 1,
            tx_id: "use-1".into(),
            ts: None,
        }));
        assert!(!is_money(&SdkEvent::FirstLoss { ts: None }));
    }

    #[test]
    fn money_gets_a_tx_id_and_the_queue_survives_a_restart() {
        let d = dir();
        let mut q = TelemetryQueue::load(&d, 10);
        q.push(earned(""));
        q.push(SdkEvent::FirstLoss { ts: None });
        let unwritten = TelemetryQueue::load(&d, 10);
        assert!(unwritten.is_empty(), "a push alone writes nothing");
        q.persist().expect("write");
        let first = q.batch(1);
        let SdkEvent::CurrencyEarned { tx_id, .. } = &first[0].event else {
            panic!("{first:?}")
        };
        assert!(!tx_id.is_empty());
        q.acknowledge(&[first[0].id]).expect("ack");
        let again = TelemetryQueue::load(&d, 10);
        assert_eq!(again.len(), 1);
        assert_eq!(again.batch(1)[0].event.kind(), "first_loss");
        let _ = std::fs::remove_dir_all(d);
    }
}
