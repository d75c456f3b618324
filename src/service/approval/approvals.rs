//! Approval records: offers and custom pages queued for a studio decision.
//!
//! In Assisted mode every L1/L2 candidate needs an approval before it serves. A candidate
//! is queued once per definition key (`insert_new` on the key makes that hold across
//! nodes); approving makes the definition servable at once on every node (actor change
//! here, bus message to the others). A custom page is queued by each publish request
//! ([`publish_request::request`](crate::service::approval::publish_request::request)); approving it publishes that version, if it still passes the
//! validator: the decision and the published page are one atomic store step, and the change
//! reaches every node's clients as a `config` message. A decision is a compare-and-swap from
//! `pending`, so a second decision answers 409; its audit record is written in the same
//! atomic store step, so a decision that lost records nothing.
//!
//! A pending approval left undecided past `offers.approval_expiry_s` expires. Expiry is
//! applied when the record is read (listed, fetched or decided), with the same
//! compare-and-swap as a decision, so no sweeper is needed and two nodes agree: a decision
//! and an expiry racing for one record cannot both win.

use chrono::Utc;
use offer_actors::{GameChange, GameHandle};
use offer_domain::approval::{Approval, ApprovalStatus, OfferDefinition, Subject, Verdict};
use offer_domain::audit::{ChangedBy, ObjectRef};
use offer_domain::custom_page::{PageRef, SharedPage};
use offer_domain::simulation::SimulationResult;
use uuid::Uuid;

use crate::service::access::{approvals_collection, for_studio};
use crate::service::audit::{Audit, Recorded, Watched};
use crate::service::write::Committed;
use crate::service::{
    ServiceError, ServiceResult, Services, authoring::page_validation, authoring::published_page,
};
use crate::store::codec::{decode, encode};
use crate::store::{Collection, VersionedWrite};

/// Compare-and-swap attempts against concurrent changes of one record before giving up.
const CAS_ATTEMPTS: usize = 5;
/// Longest rejection reason, in characters.
const MAX_REASON_CHARS: usize = 1000;

fn by_definition(game_id: Uuid) -> Collection {
    Collection::game(game_id, "approval_definitions")
}

fn index() -> Collection {
    Collection::global("approval_index")
}

/// Queues an offer definition once; a definition already queued (on any node) is left
/// alone. Returns the approval id when this call wrote the record.
pub async fn queue_offer(
    state: &Services,
    handle: &GameHandle,
    offer: OfferDefinition,
) -> ServiceResult<Option<Uuid>> {
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
            .ok_or_else(|| ServiceError::Internal("corrupt approval marker".into()))?
    };
    let missing = fresh
        || state
            .store
            .get(approvals_collection(game_id), &approval_id.to_string())
            .await?
            .is_none();
    if missing {
        let approval = Approval::pending(approval_id, game_id, Subject::Offer(offer), Utc::now());
        insert(state, &approval).await?;
    }
    handle.change(GameChange::Queued(key)).await?;
    Ok(missing.then_some(approval_id))
}

/// Writes a new approval record, its index first: a record is only ever visible with its
/// index.
async fn insert(state: &Services, approval: &Approval) -> ServiceResult<()> {
    let id = approval.approval_id.to_string();
    state
        .store
        .put_all(
            index(),
            vec![(id.clone(), approval.game_id.to_string().into_bytes())],
        )
        .await?;
    state
        .store
        .insert_new(
            approvals_collection(approval.game_id),
            &id,
            encode(approval)?,
        )
        .await?;
    Ok(())
}

/// Queues a pending `custom_page` approval for one version of a page (every publish request
/// is its own approval). The caller checked that the version exists.
pub async fn queue_page(
    state: &Services,
    game_id: Uuid,
    approval_id: Uuid,
    page: PageRef,
) -> ServiceResult<Approval> {
    let approval = Approval::pending(approval_id, game_id, Subject::Page(page), Utc::now());
    insert(state, &approval).await?;
    Ok(approval)
}

/// A game's approvals, newest first, optionally of one status.
pub async fn list(
    state: &Services,
    game_id: Uuid,
    status: Option<ApprovalStatus>,
) -> ServiceResult<Vec<Approval>> {
    let mut out: Vec<Approval> = Vec::new();
    for (_, bytes) in state.store.list(approvals_collection(game_id)).await? {
        let (a, _) = settle(state, decode(&bytes)?, bytes).await?;
        if status.is_none_or(|s| s == a.status) {
            out.push(a);
        }
    }
    out.sort_by_key(|a| std::cmp::Reverse(a.created_at));
    Ok(out)
}

/// One approval and its stored bytes (for compare-and-swap). Does not check the studio.
pub async fn get(state: &Services, approval_id: Uuid) -> ServiceResult<(Approval, Vec<u8>)> {
    let id = approval_id.to_string();
    let game_id = state
        .store
        .get(index(), &id)
        .await?
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.parse::<Uuid>().ok())
        .ok_or(ServiceError::NotFound("approval"))?;
    let bytes = state
        .store
        .get(approvals_collection(game_id), &id)
        .await?
        .ok_or(ServiceError::NotFound("approval"))?;
    settle(state, decode(&bytes)?, bytes).await
}

/// One approval of a studio, its stored bytes and its game's handle. An approval of another
/// studio's game answers the same 404 as an unknown one, so ids cannot be probed across
/// studios.
pub async fn get_for_studio(
    state: &Services,
    studio_id: &str,
    approval_id: Uuid,
) -> ServiceResult<(Approval, Vec<u8>, GameHandle)> {
    let (approval, bytes) = get(state, approval_id).await?;
    let handle = for_studio(state, studio_id, approval.game_id)
        .await
        .map_err(|e| match e {
            ServiceError::NotFound(_) => ServiceError::NotFound("approval"),
            other => other,
        })?;
    Ok((approval, bytes, handle))
}

/// The record as it stands now: a pending one past its expiry is stored as expired first
/// (compare-and-swap). When another node changed the record meanwhile, its version is read
/// back; that version is decided or expired, so it is final.
async fn settle(
    state: &Services,
    approval: Approval,
    stored: Vec<u8>,
) -> ServiceResult<(Approval, Vec<u8>)> {
    let after = chrono::Duration::seconds(i64::from(state.settings.offers.approval_expiry_s));
    let Some(expired) = approval.expire(Utc::now(), after) else {
        return Ok((approval, stored));
    };
    let coll = approvals_collection(approval.game_id);
    let id = approval.approval_id.to_string();
    let bytes = encode(&expired)?;
    if state
        .store
        .compare_and_swap(coll, &id, Some(&stored), bytes.clone())
        .await?
    {
        return Ok((expired, bytes));
    }
    let now = state
        .store
        .get(coll, &id)
        .await?
        .ok_or(ServiceError::NotFound("approval"))?;
    Ok((decode(&now)?, now))
}

/// Approves or rejects a pending approval; a decided one is a 409. Approving makes the
/// definition servable at once on every node, or publishes the page's version (stored with
/// the decision in one atomic step, then pushed to every node's clients) once the validator
/// passes it again against the catalogue of now: a version that no longer validates is a
/// [`ServiceError::PageInvalid`], and the approval stays pending. When the record changed
/// since it was read but is still pending (a simulation result was attached meanwhile), the
/// decision is taken again on the fresh record: only another decision or an expiry makes it
/// a 409.
pub async fn decide(
    state: &Services,
    handle: &GameHandle,
    approval: Approval,
    stored: Vec<u8>,
    verdict: Verdict,
    by: &ChangedBy,
) -> ServiceResult<Approval> {
    if let Verdict::Reject {
        reason: Some(reason),
    } = &verdict
        && reason.chars().count() > MAX_REASON_CHARS
    {
        return Err(ServiceError::invalid(
            "reason",
            format!("at most {MAX_REASON_CHARS} characters"),
        ));
    }
    let game = &handle.view().game;
    let audit = Audit::of_game(
        &game.studio_id,
        game.game_id,
        match verdict {
            Verdict::Approve => "approval.approve",
            Verdict::Reject { .. } => "approval.reject",
        },
        ObjectRef::new("approval", approval.approval_id),
        vec![Watched::new(
            approvals_collection(game.game_id),
            approval.approval_id,
        )],
    );
    let recorded = Recorded::new(&*state.store, by, audit)?;
    decide_now(
        state,
        (handle, &recorded),
        approval,
        stored,
        verdict,
        by.actor.name(),
    )
    .await
}

/// [`decide`]'s compare-and-swap loop; each attempt's write carries the decision's audit
/// record, so only the attempt that lands records it.
async fn decide_now(
    state: &Services,
    (handle, recorded): (&GameHandle, &Recorded<'_>),
    mut approval: Approval,
    mut stored: Vec<u8>,
    verdict: Verdict,
    by: &str,
) -> ServiceResult<Approval> {
    for _ in 0..CAS_ATTEMPTS {
        let next = approval
            .decide(verdict.clone(), by, Utc::now())
            .map_err(|e| ServiceError::Conflict(e.to_string()))?;
        let approved = next.status == ApprovalStatus::Approved;
        let decided = state
            .commit(handle, async || {
                let coll = approvals_collection(next.game_id);
                let id = next.approval_id.to_string();
                let published = match next.page {
                    Some(page) if approved => {
                        let content = published_page::content(state, next.game_id, page).await?;
                        // Under the game's write lock: the catalogue checked is the one the
                        // page is published against.
                        page_validation::require_valid(handle, &content).await?;
                        Some(content)
                    }
                    _ => None,
                };
                let swapped = match &published {
                    None => {
                        recorded
                            .compare_and_swap(coll, &id, Some(&stored), encode(&next)?)
                            .await?
                    }
                    Some(page) => {
                        let (pages, entries) = published_page::entry(next.game_id, page)?;
                        recorded
                            .put_all_versioned(VersionedWrite {
                                version: coll,
                                version_id: &id,
                                expected: Some(&stored),
                                new_version: encode(&next)?,
                                coll: pages,
                                entries,
                            })
                            .await?
                    }
                };
                if !swapped {
                    return Ok(Committed::unchanged(None));
                }
                let change = match (&next.offer, published) {
                    (Some(offer), _) if approved => {
                        Some(GameChange::Approved(offer.definition_key.clone()))
                    }
                    (_, Some(page)) => Some(GameChange::CustomPage(SharedPage::new(page))),
                    _ => None,
                };
                Ok(match change {
                    Some(change) => Committed::changed(Some(next.clone()), change),
                    None => Committed::unchanged(Some(next.clone())),
                })
            })
            .await?;
        if let Some(decided) = decided {
            return Ok(decided);
        }
        (approval, stored) = get(state, next.approval_id).await?;
    }
    Err(ServiceError::Conflict(
        "the approval kept changing while it was decided; retry".into(),
    ))
}

/// Stores a simulation result on an approval, whatever its state now (a decision taken
/// while the trials ran keeps the result that informed it). Compare-and-swap, retried
/// against a concurrent change of the record.
pub async fn attach_simulation(
    state: &Services,
    approval_id: Uuid,
    result: SimulationResult,
) -> ServiceResult<Approval> {
    for _ in 0..CAS_ATTEMPTS {
        let (mut approval, stored) = get(state, approval_id).await?;
        approval.simulation = Some(result.clone());
        let swapped = state
            .store
            .compare_and_swap(
                approvals_collection(approval.game_id),
                &approval_id.to_string(),
                Some(&stored),
                encode(&approval)?,
            )
            .await?;
        if swapped {
            return Ok(approval);
        }
    }
    Err(ServiceError::Conflict(
        "the approval kept changing while its simulation was stored; retry".into(),
    ))
}
