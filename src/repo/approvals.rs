//! Approval records: offers (and later custom pages) queued for a studio decision.
//!
//! In Assisted mode every L1/L2 candidate needs an approval before it serves. A candidate
//! is queued once per definition key (`insert_new` on the key makes that hold across
//! nodes); approving makes the definition servable at once on every node (actor change
//! here, bus message to the others). A decision is a compare-and-swap from `pending`, so a
//! second decision answers 409.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use offer_actors::{GameChange, GameHandle};
use offer_domain::bandit::Arm;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::games::{actor_err, notify};
use crate::auth::{decode, encode};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::store::Collection;

/// Lifecycle of an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a decision.
    Pending,
    /// Approved: the definition serves.
    Approved,
    /// Rejected: it never serves.
    Rejected,
    /// Superseded or timed out (not produced yet by this version).
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
    /// The page (kind `custom_page`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub page: Option<serde_json::Value>,
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
    #[schema(value_type = Option<Object>)]
    pub simulation: Option<serde_json::Value>,
}

fn approvals(game_id: Uuid) -> Collection {
    Collection::game(game_id, "approvals")
}

fn by_definition(game_id: Uuid) -> Collection {
    Collection::game(game_id, "approval_definitions")
}

fn index() -> Collection {
    Collection::global("approval_index")
}

/// The approved and the already queued definition keys of a game.
pub struct Definitions {
    /// Approved keys.
    pub approved: HashSet<String>,
    /// Keys with any approval record.
    pub queued: HashSet<String>,
}

/// Reads the definition sets the game actor needs.
pub async fn definitions(state: &AppState, game_id: Uuid) -> ApiResult<Definitions> {
    let mut out = Definitions {
        approved: HashSet::new(),
        queued: HashSet::new(),
    };
    for (_, bytes) in state.store.list(approvals(game_id)).await? {
        let a: Approval = decode(&bytes)?;
        if let Some(offer) = a.offer {
            if a.status == ApprovalStatus::Approved {
                out.approved.insert(offer.definition_key.clone());
            }
            out.queued.insert(offer.definition_key);
        }
    }
    Ok(out)
}

/// Queues an offer definition once; a definition already queued (on any node) is left
/// alone. Returns the approval id when this call wrote the record.
pub async fn queue_offer(
    state: &AppState,
    handle: &GameHandle,
    offer: OfferDefinition,
) -> ApiResult<Option<Uuid>> {
    let game_id = handle.view().game.game_id;
    let approval_id = Uuid::new_v4();
    let key = offer.definition_key.clone();
    let fresh = state
        .store
        .insert_new(
            by_definition(game_id),
            &key,
            approval_id.to_string().into_bytes(),
        )
        .await?;
    // The marker names the approval. When an earlier attempt wrote the marker but failed
    // before the record, the record is written now under the marker's id, so a candidate is
    // never left queued without an approval the studio can see.
    let approval_id = if fresh {
        approval_id
    } else {
        state
            .store
            .get(by_definition(game_id), &key)
            .await?
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|s| s.parse::<Uuid>().ok())
            .ok_or_else(|| ApiError::Internal("corrupt approval marker".into()))?
    };
    let missing = fresh
        || state
            .store
            .get(approvals(game_id), &approval_id.to_string())
            .await?
            .is_none();
    if missing {
        let approval = Approval {
            approval_id,
            game_id,
            kind: ApprovalKind::Offer,
            status: ApprovalStatus::Pending,
            offer: Some(offer),
            page: None,
            created_at: Utc::now(),
            decided_at: None,
            decided_by: None,
            reason: None,
            simulation: None,
        };
        // The index first: a record is only ever visible with its index.
        state
            .store
            .put_all(
                index(),
                vec![(approval_id.to_string(), game_id.to_string().into_bytes())],
            )
            .await?;
        state
            .store
            .insert_new(
                approvals(game_id),
                &approval_id.to_string(),
                encode(&approval)?,
            )
            .await?;
    }
    handle
        .change(GameChange::Queued(key))
        .await
        .map_err(actor_err)?;
    Ok(missing.then_some(approval_id))
}

/// A game's approvals, newest first, optionally of one status.
pub async fn list(
    state: &AppState,
    game_id: Uuid,
    status: Option<ApprovalStatus>,
) -> ApiResult<Vec<Approval>> {
    let mut out: Vec<Approval> = Vec::new();
    for (_, bytes) in state.store.list(approvals(game_id)).await? {
        let a: Approval = decode(&bytes)?;
        if status.is_none_or(|s| s == a.status) {
            out.push(a);
        }
    }
    out.sort_by_key(|a| std::cmp::Reverse(a.created_at));
    Ok(out)
}

/// One approval and its stored bytes (for compare-and-swap). Does not check the studio.
pub async fn get(state: &AppState, approval_id: Uuid) -> ApiResult<(Approval, Vec<u8>)> {
    let id = approval_id.to_string();
    let game_id = state
        .store
        .get(index(), &id)
        .await?
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.parse::<Uuid>().ok())
        .ok_or(ApiError::NotFound("approval"))?;
    let bytes = state
        .store
        .get(approvals(game_id), &id)
        .await?
        .ok_or(ApiError::NotFound("approval"))?;
    Ok((decode(&bytes)?, bytes))
}

/// Approves or rejects a pending approval; a decided one is a 409.
pub async fn decide(
    state: &AppState,
    handle: &GameHandle,
    approval: Approval,
    stored: Vec<u8>,
    approve: bool,
    by: &str,
    reason: Option<String>,
) -> ApiResult<Approval> {
    if approval.status != ApprovalStatus::Pending {
        return Err(ApiError::Conflict(format!(
            "the approval is already {}",
            serde_json::to_value(approval.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        )));
    }
    let mut next = approval;
    next.status = if approve {
        ApprovalStatus::Approved
    } else {
        ApprovalStatus::Rejected
    };
    next.decided_at = Some(Utc::now());
    next.decided_by = Some(by.to_owned());
    next.reason = reason;
    let swapped = state
        .store
        .compare_and_swap(
            approvals(next.game_id),
            &next.approval_id.to_string(),
            Some(&stored),
            encode(&next)?,
        )
        .await?;
    if !swapped {
        return Err(ApiError::Conflict(
            "the approval was decided concurrently".into(),
        ));
    }
    if approve && let Some(offer) = &next.offer {
        handle
            .change(GameChange::Approved(offer.definition_key.clone()))
            .await
            .map_err(actor_err)?;
        notify(state, next.game_id).await?;
    }
    Ok(next)
}
