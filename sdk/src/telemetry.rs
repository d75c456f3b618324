//! The telemetry queue: events the game tracked and the engine has not acknowledged yet,
//! bounded, and kept on disk ([`crate::journal`]), so an outage or a restart of the game
//! loses nothing that matters.
//!
//! **The bounds.** Past `capacity` queued events, each new event evicts the oldest event that
//! is not a money event; money events (`currency_earned`, `currency_spent`, `purchase`,
//! `item_used`) are never evicted. They have a bound of their own, `money_capacity`: past it,
//! `track` refuses a money event ([`TrackError::QueueFull`]) and the game still holds it. The
//! evicted events are counted and reported to the game ([`TelemetryQueue::take_dropped`]).
//! Every money event carries a `tx_id` (one is generated when the game leaves it empty), which
//! makes a resend after a lost answer harmless: the engine applies each `tx_id` once. Other
//! events have no such key: one whose answer was lost is sent again and may count twice.
//!
//! **Sizes.** An event is encoded once, when tracked; one longer than
//! [`limits::MAX_EVENT_BYTES`] could never be sent and is refused ([`TrackError::TooLarge`]).
//! A batch takes at most [`limits::MAX_BATCH_EVENTS`] events in a body of at most
//! [`limits::MAX_BODY_BYTES`], money events first (each kind in the order tracked).
//!
//! **Cost.** Pushing touches memory only, costs the same however many events wait, and never
//! waits on the disk on the game's thread: it adds the event's journal line to the records not
//! yet written, which the SDK's thread appends ([`TelemetryQueue::take_writes`]).

use std::collections::{HashSet, VecDeque};
use std::path::Path;
use std::sync::Arc;

use offer_wire::event::SdkEvent;
use uuid::Uuid;

use crate::error::TrackError;
use crate::journal::{self, Journal};
use crate::limits;

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

/// An event ready to queue: given its `tx_id`, encoded, and checked against the engine's size
/// limit. Made on the caller's thread, before the queue is locked.
#[derive(Debug)]
pub struct Prepared {
    json: Arc<str>,
    kind: &'static str,
    money: bool,
}

/// Encodes `event` for the queue (a money event without `tx_id` gets one), or refuses it when
/// it could never fit in a request the engine reads.
pub fn prepare(event: SdkEvent) -> Result<Prepared, TrackError> {
    let event = with_tx_id(event);
    let json = serde_json::to_string(&event).map_err(|e| TrackError::Unencodable(e.to_string()))?;
    if json.len() > limits::MAX_EVENT_BYTES {
        return Err(TrackError::TooLarge {
            bytes: json.len(),
            limit: limits::MAX_EVENT_BYTES,
        });
    }
    Ok(Prepared {
        json: json.into(),
        kind: event.kind(),
        money: is_money(&event),
    })
}

/// One queued event and the local number it is acknowledged by.
#[derive(Debug, Clone)]
pub struct Queued {
    /// Increasing number, local to this install.
    pub id: u64,
    /// The event's JSON, as sent.
    pub json: Arc<str>,
    /// The event's type (`purchase`, `first_loss`, ...).
    pub kind: &'static str,
}

impl Queued {
    /// The bytes of this event's journal line.
    fn record_bytes(&self) -> u64 {
        journal::queued_line_bytes(self.id, self.json.len())
    }
}

/// What the journal needs next: the records since the last write, or, when a compaction is
/// due, the whole queue to rewrite it with.
#[derive(Debug)]
pub enum Writes {
    /// Lines to append (possibly none).
    Append(String),
    /// Every queued event, oldest first by kind: the journal's new content.
    Rewrite(Vec<Queued>),
}

/// The queue in memory, with the journal records it has not handed out yet.
#[derive(Debug)]
pub struct TelemetryQueue {
    money: VecDeque<Queued>,
    other: VecDeque<Queued>,
    next_id: u64,
    capacity: usize,
    money_capacity: usize,
    /// The bytes of the queued events' journal lines.
    live_bytes: u64,
    /// Journal lines not written yet.
    unwritten: String,
    /// Whether the next write rewrites the journal rather than appending to it.
    compact_next: bool,
    /// Events evicted by the bound since the game was last told.
    evicted: u64,
    /// Events of an earlier run too large to ever send, dropped at load, not told yet.
    too_large: u64,
}

impl TelemetryQueue {
    /// The queue of `data_dir`, with what a previous run left unsent, and its journal.
    /// `capacity` is the count past which non-money events are evicted, `money_capacity` the
    /// most money events kept. An event of the file too large to ever send is dropped (and
    /// reported as such).
    pub fn open(data_dir: &Path, capacity: usize, money_capacity: usize) -> (Self, Journal) {
        let (journal, loaded) = Journal::open(data_dir);
        let mut queue = Self {
            money: VecDeque::new(),
            other: VecDeque::new(),
            next_id: loaded.events.last().map_or(0, |(id, _)| id + 1),
            capacity: capacity.max(1),
            money_capacity: money_capacity.max(1),
            live_bytes: 0,
            unwritten: String::new(),
            compact_next: loaded.needs_compaction,
            evicted: 0,
            too_large: 0,
        };
        for (id, event) in loaded.events {
            match prepare(event) {
                Ok(prepared) => queue.insert(id, prepared),
                Err(_) => {
                    queue.too_large += 1;
                    queue.compact_next = true;
                }
            }
        }
        (queue, journal)
    }

    /// Adds an event under `id`, without the bounds or a journal line (the load).
    fn insert(&mut self, id: u64, prepared: Prepared) {
        let queued = Queued {
            id,
            json: prepared.json,
            kind: prepared.kind,
        };
        self.live_bytes += queued.record_bytes();
        if prepared.money {
            self.money.push_back(queued);
        } else {
            self.other.push_back(queued);
        }
    }

    /// Queues `prepared`, in memory only (the SDK's thread writes it, see
    /// [`Self::take_writes`]). A money event is refused when `money_capacity` of them wait;
    /// past `capacity` events, the oldest non-money event is evicted. Returns whether one was.
    pub fn push(&mut self, prepared: Prepared) -> Result<bool, TrackError> {
        if prepared.money && self.money.len() >= self.money_capacity {
            return Err(TrackError::QueueFull {
                capacity: self.money_capacity,
            });
        }
        let mut evicted = false;
        if self.len() >= self.capacity
            && let Some(oldest) = self.other.pop_front()
        {
            self.forget_one(&oldest);
            self.unwritten += &journal::done_line(&[oldest.id]);
            self.evicted += 1;
            evicted = true;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.unwritten += &journal::queued_line(id, &prepared.json);
        self.insert(id, prepared);
        Ok(evicted)
    }

    /// The next batch: money events first, then the others, each kind oldest first; at most
    /// `max_events` events, and no more than the engine's body limit allows, but always one
    /// event when any waits.
    pub fn batch(&self, max_events: usize) -> Vec<Queued> {
        let mut batch = Vec::new();
        let mut body_bytes = limits::ENVELOPE_BYTES + limits::TOKEN_FIELD_BYTES;
        for queued in self.money.iter().chain(self.other.iter()) {
            let separator = usize::from(!batch.is_empty());
            let longer = body_bytes + separator + queued.json.len();
            if batch.len() >= max_events || (!batch.is_empty() && longer > limits::MAX_BODY_BYTES) {
                break;
            }
            body_bytes = longer;
            batch.push(queued.clone());
        }
        batch
    }

    /// Forgets the events of `ids` (the engine took them, or they were dropped); ids no
    /// longer queued are skipped.
    pub fn acknowledge(&mut self, ids: &[u64]) {
        let ids: HashSet<u64> = ids.iter().copied().collect();
        // A batch is taken from the front of each kind, and only pushes (at the back) and
        // evictions (at the front) happen meanwhile: the batch's events still queued are at
        // the front.
        let mut gone = Vec::new();
        for side in [&mut self.money, &mut self.other] {
            while side.front().is_some_and(|q| ids.contains(&q.id)) {
                gone.extend(side.pop_front());
            }
        }
        if gone.is_empty() {
            return;
        }
        for queued in &gone {
            self.forget_one(queued);
        }
        let gone_ids: Vec<u64> = gone.iter().map(|q| q.id).collect();
        self.unwritten += &journal::done_line(&gone_ids);
    }

    /// Takes `queued`'s line out of the live bytes.
    fn forget_one(&mut self, queued: &Queued) {
        self.live_bytes = self.live_bytes.saturating_sub(queued.record_bytes());
    }

    /// The records to write to a journal now `journal_bytes` long: the lines since the last
    /// write, or the whole queue when a compaction is due (see [`crate::journal`]).
    pub fn take_writes(&mut self, journal_bytes: u64) -> Writes {
        let after = journal_bytes + self.unwritten.len() as u64;
        if self.compact_next || journal::compaction_due(after, self.live_bytes) {
            self.compact_next = false;
            self.unwritten.clear();
            return Writes::Rewrite(
                self.money
                    .iter()
                    .chain(self.other.iter())
                    .cloned()
                    .collect(),
            );
        }
        Writes::Append(std::mem::take(&mut self.unwritten))
    }

    /// Makes the next write a compaction: a write failed, and the journal may lack records.
    pub fn rewrite_next(&mut self) {
        self.compact_next = true;
    }

    /// The events dropped since the last call: evicted by the bound, and too large to send.
    pub fn take_dropped(&mut self) -> (u64, u64) {
        (
            std::mem::take(&mut self.evicted),
            std::mem::take(&mut self.too_large),
        )
    }

    /// The count past which non-money events are evicted.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many events wait.
    pub fn len(&self) -> usize {
        self.money.len() + self.other.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The body of `POST /v1/sdk/events` for `batch`, written from the events' JSON as queued,
/// with the player's token when the game gave one; [`limits::ENVELOPE_BYTES`] is its length
/// without the events and the token, [`limits::TOKEN_FIELD_BYTES`] the most the token adds.
/// (A token is base64url parts and dots, see [`crate::player_token::PlayerToken::read`]: it
/// needs no escaping.)
pub fn body(session_id: Uuid, player_token: Option<&str>, batch: &[Queued]) -> String {
    let events_bytes: usize = batch.iter().map(|q| q.json.len() + 1).sum();
    let mut body =
        String::with_capacity(limits::ENVELOPE_BYTES + limits::TOKEN_FIELD_BYTES + events_bytes);
    body.push_str("{\"session_id\":\"");
    body.push_str(&session_id.hyphenated().to_string());
    if let Some(token) = player_token {
        body.push_str("\",\"player_token\":\"");
        body.push_str(token);
    }
    body.push_str("\",\"events\":[");
    for (i, queued) in batch.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&queued.json);
    }
    body.push_str("]}");
    body
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("offer-sdk-q-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).expect("dir");
        d
    }

    fn earned(tx: &str) -> SdkEvent {
        earned_with_source(tx, None)
    }

    /// One gem earned, with a `source` text that gives the event its size.
    fn earned_with_source(tx: &str, source: Option<String>) -> SdkEvent {
        SdkEvent::CurrencyEarned {
            currency_id: "gems".into(),
            amount: 1,
            source,
            tx_id: tx.into(),
            ts: None,
        }
    }

    fn push(q: &mut TelemetryQueue, event: SdkEvent) -> bool {
        q.push(prepare(event).expect("prepared")).expect("queued")
    }

    /// Writes what the queue hands out, as the SDK's thread does.
    fn write(q: &mut TelemetryQueue, journal: &mut Journal) {
        match q.take_writes(journal.bytes()) {
            Writes::Append(lines) => journal.append(lines.as_bytes()),
            Writes::Rewrite(all) => {
                let lines: String = all
                    .iter()
                    .map(|q| journal::queued_line(q.id, &q.json))
                    .collect();
                journal.rewrite(lines.as_bytes())
            }
        }
        .expect("written");
    }

    fn kinds(q: &TelemetryQueue) -> Vec<&'static str> {
        q.batch(100).iter().map(|e| e.kind).collect()
    }

    #[test]
    fn a_full_queue_evicts_the_oldest_telemetry_never_money_and_refuses_money_past_its_bound() {
        let d = dir();
        let (mut q, _) = TelemetryQueue::open(&d, 3, 5);
        push(&mut q, earned("a"));
        push(&mut q, SdkEvent::FirstLoss { ts: None });
        push(&mut q, SdkEvent::BossRaid { ts: None });
        assert!(push(&mut q, earned("b")), "first_loss evicted");
        assert_eq!(
            kinds(&q),
            ["currency_earned", "currency_earned", "boss_raid"],
            "money first"
        );
        push(&mut q, earned("c"));
        push(&mut q, earned("d"));
        assert_eq!(
            kinds(&q),
            ["currency_earned"; 4],
            "money is kept past the bound"
        );
        push(&mut q, earned("e"));
        let refused = q.push(prepare(earned("f")).expect("prepared"));
        assert_eq!(refused, Err(TrackError::QueueFull { capacity: 5 }));
        assert_eq!(q.len(), 5);
        assert_eq!(q.take_dropped(), (2, 0));
        assert_eq!(q.take_dropped(), (0, 0), "told once");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn an_event_too_large_to_send_is_refused_and_the_body_is_its_envelope_and_events() {
        let too_large = earned_with_source("t", Some("x".repeat(limits::MAX_EVENT_BYTES)));
        assert!(matches!(
            prepare(too_large),
            Err(TrackError::TooLarge { limit, .. }) if limit == limits::MAX_EVENT_BYTES
        ));
        let session = Uuid::new_v4();
        assert_eq!(body(session, None, &[]).len(), limits::ENVELOPE_BYTES);
        let longest = "t".repeat(crate::player_token::MAX_TOKEN_BYTES);
        assert_eq!(
            body(session, Some(&longest), &[]).len(),
            limits::ENVELOPE_BYTES + limits::TOKEN_FIELD_BYTES
        );
        let d = dir();
        let (mut q, _) = TelemetryQueue::open(&d, 10, 10);
        push(&mut q, SdkEvent::FirstLoss { ts: None });
        push(&mut q, earned("a"));
        let text = body(session, Some("a.b.c"), &q.batch(10));
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(value["session_id"], session.to_string());
        assert_eq!(value["player_token"], "a.b.c");
        assert_eq!(value["events"][0]["type"], "currency_earned");
        assert_eq!(value["events"][1]["type"], "first_loss");
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn a_batch_stays_within_the_engines_body_limit_but_always_takes_one_event() {
        let d = dir();
        let (mut q, _) = TelemetryQueue::open(&d, 1_000, 1_000);
        let source = "s".repeat(100_000);
        for n in 0..30 {
            push(
                &mut q,
                earned_with_source(&format!("t{n}"), Some(source.clone())),
            );
        }
        let batch = q.batch(100);
        let longest = "t".repeat(crate::player_token::MAX_TOKEN_BYTES);
        assert!(body(Uuid::new_v4(), Some(&longest), &batch).len() <= limits::MAX_BODY_BYTES);
        assert_eq!(batch.len(), 20, "20 events of about 100 kB fill 2 MiB");
        assert_eq!(q.batch(1).len(), 1);
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn each_push_appends_one_line_and_compaction_waits_for_its_threshold() {
        let d = dir();
        let (mut q, mut journal) = TelemetryQueue::open(&d, 1_000_000, 1_000_000);
        let source = "s".repeat(10_000);
        let mut expected = 0u64;
        for n in 0..300 {
            push(
                &mut q,
                earned_with_source(&format!("tx-{n}"), Some(source.clone())),
            );
            let line = journal::queued_line(n, &q.money.back().expect("queued").json);
            write(&mut q, &mut journal);
            expected += line.len() as u64;
            assert_eq!(
                journal.bytes(),
                expected,
                "one line more, nothing rewritten"
            );
        }
        assert_eq!(journal.compactions(), 0);
        // Each acknowledgement appends a `done` line, until the journal would pass twice the
        // live bytes plus the slack: that write, and only that one, compacts.
        loop {
            let ids: Vec<u64> = q.batch(1).iter().map(|e| e.id).collect();
            q.acknowledge(&ids);
            let due =
                journal::compaction_due(journal.bytes() + q.unwritten.len() as u64, q.live_bytes);
            let before = journal.bytes();
            write(&mut q, &mut journal);
            if !due {
                assert_eq!(journal.compactions(), 0);
                assert!(journal.bytes() > before, "a done line appended");
                continue;
            }
            assert_eq!(journal.compactions(), 1);
            break;
        }
        assert_eq!(
            journal.bytes(),
            q.live_bytes,
            "the compacted journal holds the queue alone"
        );
        let (again, loaded_journal) = TelemetryQueue::open(&d, 1_000_000, 1_000_000);
        assert_eq!(again.len(), q.len());
        assert_eq!(loaded_journal.bytes(), journal.bytes());
        let _ = std::fs::remove_dir_all(d);
    }

    #[test]
    fn money_gets_a_tx_id_and_the_queue_survives_a_restart() {
        let d = dir();
        let (mut q, mut journal) = TelemetryQueue::open(&d, 10, 10);
        push(&mut q, earned(""));
        push(&mut q, SdkEvent::FirstLoss { ts: None });
        let (unwritten, _) = TelemetryQueue::open(&d, 10, 10);
        assert!(unwritten.is_empty(), "a push alone writes nothing");
        write(&mut q, &mut journal);
        let first = q.batch(1);
        let event: SdkEvent = serde_json::from_str(&first[0].json).expect("event");
        let SdkEvent::CurrencyEarned { tx_id, .. } = event else {
            panic!("{first:?}")
        };
        assert!(!tx_id.is_empty());
        q.acknowledge(&[first[0].id]);
        write(&mut q, &mut journal);
        let (again, _) = TelemetryQueue::open(&d, 10, 10);
        assert_eq!(again.len(), 1);
        assert_eq!(kinds(&again), ["first_loss"]);
        let _ = std::fs::remove_dir_all(d);
    }
}
