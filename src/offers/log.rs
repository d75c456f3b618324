//! The decision log: every decision this node made recently, with its trace, so the
//! dashboard can see why an offer was (or was not) served, and shadow decisions can be
//! counted and inspected.
//!
//! Bounded: the oldest records are dropped past the capacity. Kept per node in memory,
//! so the hot path never writes to the store; a decision is found on the node that made it.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use dashmap::DashMap;
use offer_actors::SessionInfo;
use offer_domain::bandit::{Arm, Segment};
use offer_domain::pipeline::{Candidate, Decision};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::Served;

/// One step of a decision's trace.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TraceEntry {
    /// Level the note is about.
    pub level: u8,
    /// Why it passed (snake_case).
    pub note: &'static str,
}

/// An L1/L2 pick that did not serve (shadow) or waits for approval.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CandidateRecord {
    /// Level 1 or 2.
    pub fallback_level: u8,
    /// Definition key.
    pub definition_key: String,
    /// The items.
    pub item_ids: Vec<String>,
    /// Price in cents.
    pub price_cents: i64,
}

impl From<&Candidate> for CandidateRecord {
    fn from(c: &Candidate) -> Self {
        Self {
            fallback_level: c.level,
            definition_key: c.definition_key.clone(),
            item_ids: c.items.iter().map(|i| i.item_id.clone()).collect(),
            price_cents: c.price_cents,
        }
    }
}

/// A recorded decision.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DecisionRecord {
    /// The offer id (or the decision id of a no-offer answer, sent as `Decision-Id`).
    pub offer_id: Uuid,
    /// The game.
    pub game_id: Uuid,
    /// The session.
    pub session_id: Uuid,
    /// The trigger event.
    pub trigger: String,
    /// When.
    pub decided_at: DateTime<Utc>,
    /// `offer` or the `Offer-Outcome` of a no-offer answer.
    pub outcome: &'static str,
    /// Level served.
    pub fallback_level: Option<u8>,
    /// Items served.
    pub item_ids: Vec<String>,
    /// Price served, in cents.
    pub price_cents: Option<i64>,
    /// Why each higher level passed.
    pub trace: Vec<TraceEntry>,
    /// Shadow mode: the L1/L2 pick that stayed silent.
    pub shadow: Option<CandidateRecord>,
    /// Assisted mode: the L1/L2 pick waiting for approval.
    pub approval_candidate: Option<CandidateRecord>,
    /// The L1 arm served, for learning from later events.
    #[serde(skip)]
    pub learning: Option<(Segment, Arm)>,
}

impl DecisionRecord {
    /// Builds the record of a decision and what was served.
    pub fn new(
        id: Uuid,
        session: &SessionInfo,
        trigger: &str,
        at: DateTime<Utc>,
        decision: &Decision,
        served: &Served,
    ) -> Self {
        let (outcome, level, items, price, learning) = match served {
            Served::Offer(o) => {
                let learning = match &decision.outcome {
                    offer_domain::pipeline::Outcome::Offer(plan) => plan.segment.zip(plan.arm),
                    offer_domain::pipeline::Outcome::NoOffer(_) => None,
                };
                (
                    "offer",
                    Some(o.fallback_level),
                    o.items.iter().map(|i| i.item_id.clone()).collect(),
                    Some(o.price_cents),
                    learning,
                )
            }
            Served::NoOffer(reason, _) => (reason.as_str(), None, Vec::new(), None, None),
        };
        Self {
            offer_id: id,
            game_id: session.game_id,
            session_id: session.session_id,
            trigger: trigger.to_owned(),
            decided_at: at,
            outcome,
            fallback_level: level,
            item_ids: items,
            price_cents: price,
            trace: decision
                .trace
                .iter()
                .map(|t| TraceEntry {
                    level: t.level,
                    note: t.note,
                })
                .collect(),
            shadow: decision.shadow.as_ref().map(CandidateRecord::from),
            approval_candidate: decision
                .approval_candidate
                .as_ref()
                .map(CandidateRecord::from),
            learning,
        }
    }
}

/// Shadow decisions of a game on this node.
#[derive(Debug, Default)]
struct ShadowCounts {
    level_1: AtomicU64,
    level_2: AtomicU64,
}

/// The bounded log.
pub struct DecisionLog {
    capacity: usize,
    records: DashMap<Uuid, Arc<DecisionRecord>>,
    order: std::sync::Mutex<VecDeque<Uuid>>,
    shadow: DashMap<Uuid, ShadowCounts>,
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

impl DecisionLog {
    /// A log keeping at most `capacity` records.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            records: DashMap::new(),
            order: std::sync::Mutex::new(VecDeque::new()),
            shadow: DashMap::new(),
        }
    }

    /// Adds a record, dropping the oldest past the capacity.
    pub fn record(&self, record: DecisionRecord) {
        if let Some(shadow) = &record.shadow {
            let counts = self.shadow.entry(record.game_id).or_default();
            match shadow.fallback_level {
                1 => counts.level_1.fetch_add(1, Ordering::Relaxed),
                _ => counts.level_2.fetch_add(1, Ordering::Relaxed),
            };
        }
        let id = record.offer_id;
        self.records.insert(id, Arc::new(record));
        let evicted = {
            let mut order = self
                .order
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            order.push_back(id);
            if order.len() > self.capacity {
                order.pop_front()
            } else {
                None
            }
        };
        if let Some(old) = evicted {
            self.records.remove(&old);
        }
    }

    /// A recorded decision.
    pub fn get(&self, id: &Uuid) -> Option<Arc<DecisionRecord>> {
        self.records.get(id).map(|r| r.clone())
    }

    /// Shadow counts and the latest `limit` shadow decisions of a game.
    pub fn shadow_report(&self, game_id: Uuid, limit: usize) -> ShadowReport {
        let (level_1, level_2) = self.shadow.get(&game_id).map_or((0, 0), |c| {
            (
                c.level_1.load(Ordering::Relaxed),
                c.level_2.load(Ordering::Relaxed),
            )
        });
        let ids: Vec<Uuid> = self
            .order
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .rev()
            .copied()
            .collect();
        let recent = ids
            .iter()
            .filter_map(|id| self.get(id))
            .filter(|r| r.game_id == game_id && r.shadow.is_some())
            .take(limit)
            .map(|r| DecisionRecord::clone(&r))
            .collect();
        ShadowReport {
            level_1,
            level_2,
            recent,
        }
    }
}
