//! Approvals: AI offers (and custom pages) queued for a studio's decision, and the rule
//! that an approval is decided once.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::bandit::Arm;
use crate::custom_page::PageRef;
use crate::schema::SnakeCaseId;
use crate::simulation::SimulationResult;

/// Lifecycle of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a decision.
    Pending,
    /// Approved: the definition serves (an offer), or the version is published (a page).
    Approved,
    /// Rejected: it never serves.
    Rejected,
    /// Left pending past the configured expiry: it can no longer be decided.
    Expired,
}

/// What kind of thing waits for approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalKind {
    /// An L1/L2 offer definition.
    Offer,
    /// A custom offer page.
    CustomPage,
}

/// The offer an approval covers: every candidate with the same definition key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OfferDefinition {
    /// Stable key shared by identical candidates.
    pub definition_key: String,
    /// Pipeline level (1 or 2).
    pub fallback_level: u8,
    /// The trigger event that produced it first.
    pub trigger: String,
    /// The items.
    #[schema(value_type = Vec<SnakeCaseId>)]
    pub item_ids: Vec<String>,
    /// Price in cents before experiments.
    pub price_cents: i64,
    /// Price in dollars.
    pub price_usd: f64,
    /// The L1 arm, for L1 offers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arm: Option<Arm>,
}

/// An approval record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Approval {
    /// Id.
    pub approval_id: Uuid,
    /// The game.
    pub game_id: Uuid,
    /// Offer or custom page.
    pub kind: ApprovalKind,
    /// Lifecycle state.
    pub status: ApprovalStatus,
    /// The offer definition (kind `offer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offer: Option<OfferDefinition>,
    /// The page version to publish (kind `custom_page`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<PageRef>,
    /// Queue time.
    pub created_at: DateTime<Utc>,
    /// Decision time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<DateTime<Utc>>,
    /// Who decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// Why it was rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The last simulation result, when one ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulation: Option<SimulationResult>,
}

/// A studio's decision on a pending approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The definition serves from now on.
    Approve,
    /// It never serves; the reason is kept on the record.
    Reject {
        /// Why, shown to the studio's team.
        reason: Option<String>,
    },
}

/// A second decision on an approval that is no longer pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the approval is already {0}")]
pub struct AlreadyDecided(pub &'static str);

/// What an approval is asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// An L1/L2 offer definition.
    Offer(OfferDefinition),
    /// One version of a custom page.
    Page(PageRef),
}

impl Approval {
    /// A new pending approval of `subject`, queued `now`.
    pub fn pending(approval_id: Uuid, game_id: Uuid, subject: Subject, now: DateTime<Utc>) -> Self {
        let (kind, offer, page) = match subject {
            Subject::Offer(offer) => (ApprovalKind::Offer, Some(offer), None),
            Subject::Page(page) => (ApprovalKind::CustomPage, None, Some(page)),
        };
        Self {
            approval_id,
            game_id,
            kind,
            status: ApprovalStatus::Pending,
            offer,
            page,
            created_at: now,
            decided_at: None,
            decided_by: None,
            reason: None,
            simulation: None,
        }
    }
}

impl ApprovalStatus {
    /// The wire name of the status.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
        }
    }
}

impl Approval {
    /// The expired record, when this one is still pending and was queued at least
    /// `after` before `now`; `None` otherwise. Expiry is a state change like a decision,
    /// so the caller stores it with the same compare-and-swap.
    pub fn expire(&self, now: DateTime<Utc>, after: chrono::Duration) -> Option<Approval> {
        if self.status != ApprovalStatus::Pending || now < self.created_at + after {
            return None;
        }
        let mut next = self.clone();
        next.status = ApprovalStatus::Expired;
        next.decided_at = Some(self.created_at + after);
        Some(next)
    }

    /// The decided record: only a pending approval can be decided, once.
    pub fn decide(
        &self,
        verdict: Verdict,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Approval, AlreadyDecided> {
        if self.status != ApprovalStatus::Pending {
            return Err(AlreadyDecided(self.status.as_str()));
        }
        let mut next = self.clone();
        match verdict {
            Verdict::Approve => next.status = ApprovalStatus::Approved,
            Verdict::Reject { reason } => {
                next.status = ApprovalStatus::Rejected;
                next.reason = reason;
            }
        }
        next.decided_at = Some(now);
        next.decided_by = Some(by.to_owned());
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;

    fn pending() -> Approval {
        Approval {
            approval_id: Uuid::nil(),
            game_id: Uuid::nil(),
            kind: ApprovalKind::Offer,
            status: ApprovalStatus::Pending,
            offer: None,
            page: None,
            created_at: Utc
                .with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
                .single()
                .expect("date"),
            decided_at: None,
            decided_by: None,
            reason: None,
            simulation: None,
        }
    }

    #[test]
    fn a_pending_approval_expires_exactly_at_its_deadline_and_then_cannot_be_decided() {
        let a = pending();
        let after = Duration::hours(2);
        let just_before = a.created_at + after - Duration::seconds(1);
        assert!(a.expire(just_before, after).is_none());
        let expired = a.expire(a.created_at + after, after).expect("expired");
        assert_eq!(expired.status, ApprovalStatus::Expired);
        assert_eq!(expired.decided_at, Some(a.created_at + after));
        assert_eq!(
            expired.decide(Verdict::Approve, "x", just_before),
            Err(AlreadyDecided("expired"))
        );
        // Decided or expired records never expire (again).
        assert!(expired.expire(a.created_at + after * 10, after).is_none());
        let approved = a
            .decide(Verdict::Approve, "x", just_before)
            .expect("pending");
        assert!(approved.expire(a.created_at + after * 10, after).is_none());
        assert_eq!(
            approved.decide(Verdict::Approve, "x", just_before),
            Err(AlreadyDecided("approved"))
        );
    }
}
