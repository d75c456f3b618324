//! The decision log: every decision this node made recently, with its trace, so the
//! dashboard can see why an offer was (or was not) served, and shadow decisions can be
//! counted and inspected.
//!
//! Bounded: the oldest records are overwritten past the capacity. Kept per node in memory,
//! so the hot path never writes to the store nor takes a lock. Each record also goes into a
//! bounded outbox, which a task behind the responses writes to the store in batches
//! ([`crate::service::workers::decisions`]), so that every node can show it; when the outbox is full (the
//! store fell behind) the record stays on this node only and is counted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use offer_actors::SessionInfo;
use offer_domain::catalogue::Item;
use offer_domain::environment::Environment;
use offer_domain::learner::Features;
use offer_domain::offer::{ExperimentRef, ServedOffer};
use offer_domain::pipeline::{
    Candidate, Decision, Explanation, Lesson, NoOfferReason, Outcome, TraceStep,
};
use offer_domain::schema::SnakeCaseId;
use serde::Serialize;
use utoipa::ToSchema;
use uuid::{Builder, Uuid};

/// What the engine answered.
#[derive(Debug, Clone)]
pub enum Served {
    /// An offer.
    Offer(ServedOffer),
    /// No offer, with the `Offer-Outcome` reason and the decision's id.
    NoOffer(NoOfferReason, Uuid),
}

/// An L1/L2 pick that did not serve (shadow) or waits for approval, as the dashboard sees
/// it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CandidateView {
    /// Level 1 or 2.
    pub fallback_level: u8,
    /// Definition key.
    pub definition_key: String,
    /// The items.
    #[schema(value_type = Vec<SnakeCaseId>)]
    pub item_ids: Vec<String>,
    /// Price in cents.
    pub price_cents: i64,
}

fn candidate<S: serde::Serializer>(c: &Option<Candidate>, s: S) -> Result<S::Ok, S::Error> {
    /// [`CandidateView`]'s shape, borrowed from the candidate: every record written to the
    /// store is serialised through it, so it copies no string.
    #[derive(Serialize)]
    struct Borrowed<'a> {
        fallback_level: u8,
        definition_key: &'a str,
        #[serde(serialize_with = "item_ids")]
        item_ids: &'a [Arc<Item>],
        price_cents: i64,
    }
    c.as_ref()
        .map(|c| Borrowed {
            fallback_level: c.level,
            definition_key: &c.definition_key,
            item_ids: &c.items,
            price_cents: c.price_cents,
        })
        .serialize(s)
}

fn item_ids<S: serde::Serializer>(items: &[Arc<Item>], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(items.iter().map(|i| i.item_id.as_str()))
}

/// A recorded decision. It keeps the decision's own parts (shared items, the trace, the
/// candidates) rather than copies, so recording costs no more than one allocation; the
/// dashboard shape is produced when it is read.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DecisionRecord {
    /// The offer id (or the decision id of a no-offer answer, sent as `Decision-Id`).
    pub offer_id: Uuid,
    /// The game.
    pub game_id: Uuid,
    /// The session.
    pub session_id: Uuid,
    /// The session's environment, to find its frequency-cap counters.
    #[serde(skip)]
    pub env: Environment,
    /// The trigger event.
    pub trigger: String,
    /// When.
    #[serde(serialize_with = "offer_domain::timestamp::serialize")]
    pub decided_at: DateTime<Utc>,
    /// `offer` or the `Offer-Outcome` of a no-offer answer.
    pub outcome: &'static str,
    /// Level served.
    pub fallback_level: Option<u8>,
    /// Items served.
    #[serde(rename = "item_ids", serialize_with = "item_ids")]
    #[schema(value_type = Vec<SnakeCaseId>)]
    pub items: Vec<Arc<Item>>,
    /// Price served, in cents.
    pub price_cents: Option<i64>,
    /// Why each higher level passed.
    pub trace: Vec<TraceStep>,
    /// Shadow mode: the L1/L2 pick that stayed silent.
    #[serde(serialize_with = "candidate")]
    #[schema(value_type = Option<CandidateView>)]
    pub shadow: Option<Candidate>,
    /// Assisted mode: the first L1/L2 pick waiting for approval (every pick is queued).
    #[serde(serialize_with = "candidate")]
    #[schema(value_type = Option<CandidateView>)]
    pub approval_candidate: Option<Candidate>,
    /// Why the AI picked its arm, when L1 ran: the features it used, the sampled expected
    /// revenue of its pick and of the runner-up, and the features that weighed most.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub l1: Option<Explanation>,
    /// What a later `offer_shown` or `purchase` of this offer teaches the learner (a
    /// single-item offer): its arm, which level served it and the context's features, on
    /// whichever node the event arrives.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub learning: Option<Lesson>,
    /// The experiment and variant that priced the served offer, if one did: what a later
    /// `offer_shown` or `purchase` of it counts in, on whichever node the event arrives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experiment: Option<ExperimentRef>,
    /// Whether the game had a frequency cap when this was decided: only then are the
    /// session's counters written beside the record (see `service::caps`).
    #[serde(skip)]
    pub capped: bool,
}

impl DecisionRecord {
    /// Builds the record of a decision (consumed) and what was served; `capped` says
    /// whether the game had a frequency cap.
    pub fn new(
        id: Uuid,
        session: &SessionInfo,
        trigger: &str,
        at: DateTime<Utc>,
        decision: Decision,
        served: &Served,
        capped: bool,
    ) -> Self {
        let Decision {
            outcome,
            trace,
            shadow,
            approval_candidates,
            explanation,
        } = decision;
        let (outcome, level, items, price, learning) = match (served, outcome) {
            (Served::Offer(o), Outcome::Offer(plan)) => (
                "offer",
                Some(o.fallback_level),
                plan.items,
                Some(o.price_cents),
                plan.lesson,
            ),
            (Served::Offer(o), Outcome::NoOffer(_)) => (
                "offer",
                Some(o.fallback_level),
                o.items.clone(),
                Some(o.price_cents),
                None,
            ),
            (Served::NoOffer(reason, _), _) => (reason.as_str(), None, Vec::new(), None, None),
        };
        let experiment = match served {
            Served::Offer(o) => o.experiment.clone(),
            Served::NoOffer(..) => None,
        };
        Self {
            offer_id: id,
            game_id: session.game_id,
            session_id: session.session_id,
            env: session.env,
            trigger: trigger.to_owned(),
            decided_at: at,
            outcome,
            fallback_level: level,
            items,
            price_cents: price,
            trace,
            shadow,
            approval_candidate: approval_candidates.into_iter().next(),
            l1: explanation,
            learning,
            experiment,
            capped,
        }
    }
}

/// Shadow decisions of a game on this node.
#[derive(Debug, Default)]
struct ShadowCounts {
    level_1: AtomicU64,
    level_2: AtomicU64,
}

/// One slot of the ring. Each has its own lock, held for a pointer swap only, so writers
/// of different decisions never meet (cheaper than a lock-free swap, whose readers' debt
/// list every writer must walk).
type Slot = Mutex<Option<Arc<DecisionRecord>>>;

/// The bounded log: a ring of slots. A decision's id carries its slot number in its last
/// four bytes (the rest is random, as in any v4 UUID), so a lookup goes straight to the
/// slot and checks that the record there is still that decision.
pub struct DecisionLog {
    slots: Box<[Slot]>,
    next: AtomicU64,
    shadow: DashMap<Uuid, ShadowCounts>,
    /// Records on their way to the store.
    outbox: mpsc::Sender<Arc<DecisionRecord>>,
    /// The outbox's receiving end, until the task that writes the store takes it.
    inbox: Mutex<Option<mpsc::Receiver<Arc<DecisionRecord>>>>,
    /// Records the outbox had no room for (and so shown by this node only), since start.
    dropped: AtomicU64,
}

/// Shadow statistics of a game.
#[derive(Debug, Serialize, ToSchema)]
pub struct ShadowReport {
    /// L1 picks kept silent.
    pub level_1: u64,
    /// L2 picks kept silent.
    pub level_2: u64,
    /// The most recent shadow decisions, newest first.
    pub recent: Vec<DecisionRecord>,
}

fn lock(slot: &Slot) -> std::sync::MutexGuard<'_, Option<Arc<DecisionRecord>>> {
    // A slot only ever holds a complete pointer, so a poisoned lock is still consistent.
    slot.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn slot_of(id: &Uuid) -> usize {
    let b = id.as_bytes();
    u32::from_be_bytes([b[12], b[13], b[14], b[15]]) as usize
}

impl DecisionLog {
    /// A log keeping the last `capacity` decisions (at most `u32::MAX`), with room for
    /// `outbox` records waiting for the store.
    pub fn new(capacity: usize, outbox: usize) -> Self {
        let capacity = capacity.clamp(1, u32::MAX as usize);
        let (sender, receiver) = mpsc::channel(outbox.max(1));
        Self {
            slots: (0..capacity).map(|_| Mutex::new(None)).collect(),
            next: AtomicU64::new(0),
            shadow: DashMap::new(),
            outbox: sender,
            inbox: Mutex::new(Some(receiver)),
            dropped: AtomicU64::new(0),
        }
    }

    /// The receiving end of the outbox, for the one task that writes it to the store
    /// (`None` once taken).
    pub fn take_outbox(&self) -> Option<mpsc::Receiver<Arc<DecisionRecord>>> {
        self.inbox
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// How many records found the outbox full since the start (and so stayed on this node
    /// only).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// A fresh decision id, bound to the next slot of the ring (its last four bytes).
    ///
    /// The id is time-ordered, a version 7 UUID: the millisecond it was made, then random
    /// bits. The store keeps decision records ordered by id, so each batch of records lands
    /// at the end of that order, on a few pages, and the oldest leave from its start. With
    /// random ids every record of a batch landed on a page of its own somewhere in the
    /// whole day of records, which the embedded store then had to read and write back.
    pub fn next_id(&self) -> Uuid {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        // The modulo keeps the slot below the capacity, which fits in u32.
        #[allow(clippy::cast_possible_truncation)]
        let slot = (n % self.slots.len() as u64) as u32;
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let id = Builder::from_unix_timestamp_millis(millis, &rand::random()).into_uuid();
        let mut bytes = *id.as_bytes();
        bytes[12..16].copy_from_slice(&slot.to_be_bytes());
        Uuid::from_bytes(bytes)
    }

    /// Stores a record in its id's slot, replacing the oldest decision there, and hands it
    /// to the outbox without waiting.
    pub fn record(&self, record: DecisionRecord) {
        let record = Arc::new(record);
        if self.outbox.try_send(Arc::clone(&record)).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(shadow) = &record.shadow {
            let bump = |c: &ShadowCounts| match shadow.level {
                1 => c.level_1.fetch_add(1, Ordering::Relaxed),
                _ => c.level_2.fetch_add(1, Ordering::Relaxed),
            };
            match self.shadow.get(&record.game_id) {
                Some(counts) => bump(&counts),
                None => bump(&self.shadow.entry(record.game_id).or_default()),
            };
        }
        if let Some(slot) = self.slots.get(slot_of(&record.offer_id)) {
            let previous = lock(slot).replace(record);
            // The evicted record is freed after the lock is released.
            drop(previous);
        }
    }

    /// A recorded decision, if it is still in the ring.
    pub fn get(&self, id: &Uuid) -> Option<Arc<DecisionRecord>> {
        self.slots
            .get(slot_of(id))
            .and_then(|slot| lock(slot).clone())
            .filter(|r| r.offer_id == *id)
    }

    /// This node's decisions of a game for any of `sessions` still in its ring (a player's
    /// data request; a walk over every slot).
    pub fn of_sessions(
        &self,
        game_id: Uuid,
        sessions: &std::collections::HashSet<Uuid>,
    ) -> Vec<Arc<DecisionRecord>> {
        self.slots
            .iter()
            .filter_map(|slot| lock(slot).clone())
            .filter(|r| r.game_id == game_id && sessions.contains(&r.session_id))
            .collect()
    }

    /// The trigger and learner features of this node's latest decisions of a game that have
    /// them (an AI pick or a single-item offer), newest first, at most `limit`.
    pub fn contexts(&self, game_id: Uuid, limit: usize) -> Vec<(String, Arc<Features>)> {
        let mut recent: Vec<(DateTime<Utc>, String, Arc<Features>)> = self
            .slots
            .iter()
            .filter_map(|slot| lock(slot).clone())
            .filter(|r| r.game_id == game_id)
            .filter_map(|r| {
                let features =
                    r.l1.as_ref()
                        .map(|e| &e.features)
                        .or(r.learning.as_ref().map(|l| &l.features))?;
                Some((r.decided_at, r.trigger.clone(), Arc::clone(features)))
            })
            .collect();
        recent.sort_by_key(|(at, ..)| std::cmp::Reverse(*at));
        recent.truncate(limit);
        recent.into_iter().map(|(_, t, f)| (t, f)).collect()
    }

    /// The shadow counts of a game and its latest shadow decisions, at most `limit`.
    pub fn shadow_report(&self, game_id: Uuid, limit: usize) -> ShadowReport {
        let (level_1, level_2) = self.shadow.get(&game_id).map_or((0, 0), |c| {
            (
                c.level_1.load(Ordering::Relaxed),
                c.level_2.load(Ordering::Relaxed),
            )
        });
        let mut recent: Vec<DecisionRecord> = self
            .slots
            .iter()
            .filter_map(|slot| lock(slot).clone())
            .filter(|r| r.game_id == game_id && r.shadow.is_some())
            .map(|r| DecisionRecord::clone(&r))
            .collect();
        recent.sort_by_key(|r| std::cmp::Reverse(r.decided_at));
        recent.truncate(limit);
        ShadowReport {
            level_1,
            level_2,
            recent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_version_7_and_ordered_by_their_millisecond() {
        let log = DecisionLog::new(16, 8);
        let first = log.next_id();
        std::thread::sleep(std::time::Duration::from_millis(3));
        let later = log.next_id();
        assert_eq!(first.get_version_num(), 7);
        assert_eq!(first.get_variant(), uuid::Variant::RFC4122);
        assert!(first < later, "{first} was made before {later}");
        assert_ne!(first, log.next_id());
    }

    #[test]
    fn ids_find_their_slot_until_overwritten() {
        let log = DecisionLog::new(4, 8);
        let ids: Vec<Uuid> = (0..5).map(|_| log.next_id()).collect();
        for id in &ids {
            log.record(DecisionRecord {
                offer_id: *id,
                game_id: Uuid::nil(),
                session_id: Uuid::nil(),
                env: Environment::Production,
                trigger: "t".into(),
                decided_at: Utc::now(),
                outcome: "suppressed",
                fallback_level: None,
                items: Vec::new(),
                price_cents: None,
                trace: Vec::new(),
                shadow: None,
                approval_candidate: None,
                l1: None,
                learning: None,
                experiment: None,
                capped: false,
            });
        }
        assert!(log.get(&ids[0]).is_none(), "overwritten by the fifth");
        for id in &ids[1..] {
            assert_eq!(log.get(id).map(|r| r.offer_id), Some(*id));
        }
        assert!(log.get(&Uuid::new_v4()).is_none());
    }
}
