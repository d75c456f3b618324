//! Authoring runs: the record of one session of an authoring tool (an AI coding assistant
//! turning a screen into a custom page), its calls and their outcomes, and its limits.
//!
//! A run is opened with `POST .../custom-pages/runs {mode}` ([`open`]). The validate, draft
//! and preview calls name it in the `X-Authoring-Run` header; a call without the header
//! belongs to no run, is not recorded and is not limited. A call in a run is recorded with
//! who made it (`by`: a dashboard user's id or `authoring_key:<key_id>`, and `key_id`), its
//! kind and its outcome. Limits per run: [`MAX_VALIDATIONS`] validate calls (the first
//! validation and three fix attempts: the fifth is refused) and [`MAX_COMPARISONS`] visual
//! comparisons (the fourth is refused), each refusal `run_limit_reached`; at most
//! [`MAX_CALLS`] calls of any kind. A run opened in `cloud` mode refuses validate, draft and
//! preview with `run_not_confirmed` until a developer other than the member who approved the
//! run's authoring key confirms it ([`confirm`]). Refused calls are recorded too, with the
//! refusal's status and code.
//!
//! # Plugging a call into a run
//!
//! Every endpoint that takes the header does the same three steps (the draft endpoint in
//! `http::custom_pages` is the example):
//!
//! ```text
//! let ticket = runs::begin_call(services, game_id, &caller, run, CallKind::Validate).await?;
//! let result = /* the call itself */;
//! if let Some(ticket) = ticket {
//!     runs::finish_call(services, ticket, outcome).await;
//! }
//! ```
//!
//! - [`begin_call`] answers `Ok(None)` without a run (nothing to record, nothing limited);
//!   otherwise it checks the run (404 when it is not a run of this game, or is past its
//!   retention), the cloud confirmation (409 `run_not_confirmed`) and the limit of the kind
//!   (409 `run_limit_reached`), and reserves the call: the counter and the call's entry are
//!   written in one compare-and-swap on the run's record, so two concurrent calls on any
//!   nodes can never both take the last allowed attempt. A refusal is an `Err` to return
//!   as is.
//! - The call then runs; a reserved attempt counts whatever its outcome.
//! - [`finish_call`] stores the outcome ([`CallOutcome`]: the HTTP status, the error code of
//!   a refusal, and what the kind produced: `valid` and `blockers` for a validation,
//!   `page_id` and `version` for a draft, `preview_id` for a preview, `score` for a
//!   comparison). `http::runs::outcome` builds one from the call's result. Recording never
//!   changes the call's answer: a store failure there is logged, and the call keeps no
//!   outcome.
//!
//! # Storage and retention
//!
//! Per game, the collection `custom_page_runs` holds each run as one document (its calls
//! inside, at most [`MAX_CALLS`]). A run is kept [`RETENTION_DAYS`] days from its opening:
//! past that it reads as absent at once, and the hourly retention sweep
//! ([`retention::prune`](crate::service::workers::retention::prune)) deletes it ([`purge`]).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

pub use crate::service::refusals::{CallKind, RunRefusal, kind_name};
use crate::service::studio::callers::{Dashboard, GameCaller};
use crate::service::{ServiceError, ServiceResult, Services};
use crate::store::Collection;
use crate::store::codec::{decode, encode};

/// Validate calls one run takes: the first validation and three fix attempts.
pub const MAX_VALIDATIONS: u32 = 4;

/// Visual comparisons one run takes.
pub const MAX_COMPARISONS: u32 = 3;

/// Calls of any kind one run records; past it, every call naming the run is refused.
pub const MAX_CALLS: usize = 200;

/// Days a run and its calls are kept from its opening.
pub const RETENTION_DAYS: i64 = 30;

/// Compare-and-swap attempts against concurrent changes of one run before giving up.
const CAS_ATTEMPTS: usize = 16;

fn runs(game_id: Uuid) -> Collection {
    Collection::game(game_id, "custom_page_runs")
}

/// Where the tool runs, as the studio chose when opening the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunMode {
    /// On the studio's machine: calls are taken at once.
    Local,
    /// On a hosted assistant: calls are refused until a second studio member confirms.
    Cloud,
}

/// The outcome of a call in a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CallOutcome {
    /// The HTTP status the call answered.
    pub status: u16,
    /// The error code, when the call was refused or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// A validation's verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid: Option<bool>,
    /// A validation's number of blockers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockers: Option<u32>,
    /// The page a draft saved (or a preview showed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_id: Option<Uuid>,
    /// The version a draft saved (or a preview showed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    /// The preview a preview call queued, or a comparison was made against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview_id: Option<Uuid>,
    /// A comparison's score, from 0 (nothing alike) to 1 (identical).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// One call recorded in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RunCall {
    /// 1 for the run's first call, then one more per call.
    #[schema(minimum = 1)]
    pub seq: u32,
    /// What was called.
    pub kind: CallKind,
    /// When the call arrived.
    pub at: DateTime<Utc>,
    /// Who called: a dashboard user's id, or `authoring_key:<key_id>`.
    pub by: String,
    /// The authoring key that called, when a key did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<Uuid>,
    /// How it ended; absent while the call runs (or when it could not be recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<CallOutcome>,
}

/// A run with its counters and calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Run {
    /// The run.
    pub run_id: Uuid,
    /// The game.
    pub game_id: Uuid,
    /// Local or cloud.
    pub mode: RunMode,
    /// When it was opened.
    pub created_at: DateTime<Utc>,
    /// When it is purged, with its calls: 30 days after its opening.
    pub expires_at: DateTime<Utc>,
    /// Who opened it: a dashboard user's id, or `authoring_key:<key_id>`.
    pub opened_by: String,
    /// The authoring key that opened it, when a key did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<Uuid>,
    /// The studio member who approved that key (issued it, or approved its device sign-in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_issued_by: Option<String>,
    /// When a cloud run was confirmed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_at: Option<DateTime<Utc>>,
    /// Who confirmed a cloud run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirmed_by: Option<String>,
    /// Validate calls taken (at most 4).
    pub validations: u32,
    /// Comparisons taken (at most 3).
    pub comparisons: u32,
    /// Every call, oldest first (at most 200).
    pub calls: Vec<RunCall>,
}

impl Run {
    /// The member who approved the run's authoring key (or, for a run a dashboard user
    /// opened, that user): the one member who cannot confirm it. `None` when the key's
    /// approver is not known.
    pub fn approver(&self) -> Option<&str> {
        match self.key_id {
            Some(_) => self.key_issued_by.as_deref(),
            None => Some(self.opened_by.as_str()),
        }
    }
}

/// A call reserved in a run by [`begin_call`], to be finished with [`finish_call`].
#[derive(Debug)]
#[must_use = "a reserved call keeps no outcome unless it is finished"]
pub struct RunTicket {
    game_id: Uuid,
    run_id: Uuid,
    seq: u32,
}

/// Who a caller is in a run's record: a dashboard user's id, or `authoring_key:<key_id>`.
pub fn who(caller: &GameCaller) -> String {
    match caller {
        GameCaller::Dashboard(user) => user.sub.clone(),
        GameCaller::Key(key) => format!("authoring_key:{}", key.key_id),
    }
}

fn key_of(caller: &GameCaller) -> Option<Uuid> {
    match caller {
        GameCaller::Dashboard(_) => None,
        GameCaller::Key(key) => Some(key.key_id),
    }
}

/// Opens a run of `game_id` (which the caller checked is the caller's).
pub async fn open(
    services: &Services,
    game_id: Uuid,
    caller: &GameCaller,
    mode: RunMode,
) -> ServiceResult<Run> {
    let now = Utc::now();
    let run = Run {
        run_id: Uuid::new_v4(),
        game_id,
        mode,
        created_at: now,
        expires_at: now + Duration::days(RETENTION_DAYS),
        opened_by: who(caller),
        key_id: key_of(caller),
        key_issued_by: match caller {
            GameCaller::Dashboard(_) => None,
            GameCaller::Key(key) => key.issued_by.clone(),
        },
        confirmed_at: None,
        confirmed_by: None,
        validations: 0,
        comparisons: 0,
        calls: Vec::new(),
    };
    services
        .store
        .insert_new(runs(game_id), &run.run_id.to_string(), encode(&run)?)
        .await?;
    Ok(run)
}

/// A run of `game_id` and its stored bytes; 404 when absent or past its retention.
async fn load(services: &Services, game_id: Uuid, run_id: Uuid) -> ServiceResult<(Run, Vec<u8>)> {
    let bytes = services
        .store
        .get(runs(game_id), &run_id.to_string())
        .await?
        .ok_or(ServiceError::NotFound("run"))?;
    let run: Run = decode(&bytes)?;
    if run.expires_at <= Utc::now() {
        return Err(ServiceError::NotFound("run"));
    }
    Ok((run, bytes))
}

/// One run of `game_id` with its calls; 404 when absent or past its retention.
pub async fn get(services: &Services, game_id: Uuid, run_id: Uuid) -> ServiceResult<Run> {
    Ok(load(services, game_id, run_id).await?.0)
}

/// The runs of `game_id` within their retention, newest first.
pub async fn list(services: &Services, game_id: Uuid) -> ServiceResult<Vec<Run>> {
    let now = Utc::now();
    let mut out = Vec::new();
    for (_, bytes) in services.store.list(runs(game_id)).await? {
        let run: Run = decode(&bytes)?;
        if run.expires_at > now {
            out.push(run);
        }
    }
    out.sort_by_key(|r| std::cmp::Reverse(r.created_at));
    Ok(out)
}

/// Applies `change` to a run with compare-and-swap, reading it again after a concurrent
/// change; `change` decides on the fresh record each time (an `Err` ends the loop).
async fn update<T>(
    services: &Services,
    game_id: Uuid,
    run_id: Uuid,
    mut change: impl FnMut(&mut Run) -> ServiceResult<T>,
) -> ServiceResult<(T, Run)> {
    for _ in 0..CAS_ATTEMPTS {
        let (mut run, stored) = load(services, game_id, run_id).await?;
        let value = change(&mut run)?;
        if services
            .store
            .compare_and_swap(
                runs(game_id),
                &run_id.to_string(),
                Some(&stored),
                encode(&run)?,
            )
            .await?
        {
            return Ok((value, run));
        }
    }
    Err(ServiceError::Conflict(
        "the run kept changing while it was recorded: retry".into(),
    ))
}

/// Confirms a cloud run of `game_id` (the caller checked the user is a developer of the
/// game's studio). The member who approved the run's key cannot confirm it (403
/// `second_member_required`), nor, for a run a dashboard user opened, that user; a local run
/// or one already confirmed is a 409.
pub async fn confirm(
    services: &Services,
    game_id: Uuid,
    run_id: Uuid,
    user: &Dashboard,
) -> ServiceResult<Run> {
    let ((), run) = update(services, game_id, run_id, |run| {
        if run.mode != RunMode::Cloud {
            return Err(ServiceError::Conflict(
                "a local run needs no confirmation".into(),
            ));
        }
        if run.confirmed_at.is_some() {
            return Err(ServiceError::Conflict(
                "the run is already confirmed".into(),
            ));
        }
        match run.approver() {
            None => return Err(ServiceError::Run(RunRefusal::ApproverUnknown)),
            Some(approver) if approver == user.sub => {
                return Err(ServiceError::Run(RunRefusal::SameMember));
            }
            Some(_) => {}
        }
        run.confirmed_at = Some(Utc::now());
        run.confirmed_by = Some(user.sub.clone());
        Ok(())
    })
    .await?;
    Ok(run)
}

/// Why a run refuses a call of `kind` now, if it does.
fn refusal(run: &Run, kind: CallKind) -> Option<RunRefusal> {
    if run.mode == RunMode::Cloud
        && run.confirmed_at.is_none()
        && matches!(
            kind,
            CallKind::Validate | CallKind::Draft | CallKind::Preview
        )
    {
        return Some(RunRefusal::NotConfirmed);
    }
    let (taken, max) = match kind {
        CallKind::Validate => (run.validations, MAX_VALIDATIONS),
        CallKind::Comparison => (run.comparisons, MAX_COMPARISONS),
        CallKind::Draft | CallKind::Preview => return None,
    };
    (taken >= max).then_some(RunRefusal::LimitReached {
        kind: Some(kind),
        max,
    })
}

/// Starts a call of `kind` in the run the request names (`run`), if it names one: see the
/// module documentation. `Ok(None)` without a run; a refusal (404 for a run that is not this
/// game's, 409 `run_not_confirmed`, 409 `run_limit_reached`) is recorded in the run and
/// returned as the call's answer.
pub async fn begin_call(
    services: &Services,
    game_id: Uuid,
    caller: &GameCaller,
    run: Option<Uuid>,
    kind: CallKind,
) -> ServiceResult<Option<RunTicket>> {
    let Some(run_id) = run else {
        return Ok(None);
    };
    let (refused, run) = update(services, game_id, run_id, |run| {
        if run.calls.len() >= MAX_CALLS {
            return Err(ServiceError::Run(RunRefusal::LimitReached {
                kind: None,
                max: u32::try_from(MAX_CALLS).unwrap_or(u32::MAX),
            }));
        }
        let refused = refusal(run, kind);
        match (refused, kind) {
            (None, CallKind::Validate) => run.validations += 1,
            (None, CallKind::Comparison) => run.comparisons += 1,
            _ => {}
        }
        let seq = u32::try_from(run.calls.len() + 1).unwrap_or(u32::MAX);
        run.calls.push(RunCall {
            seq,
            kind,
            at: Utc::now(),
            by: who(caller),
            key_id: key_of(caller),
            outcome: refused.map(|r| CallOutcome {
                status: 409,
                code: Some(r.code().to_owned()),
                ..CallOutcome::default()
            }),
        });
        Ok(refused)
    })
    .await?;
    if let Some(refused) = refused {
        return Err(ServiceError::Run(refused));
    }
    let seq = run.calls.last().map_or(0, |c| c.seq);
    Ok(Some(RunTicket {
        game_id,
        run_id,
        seq,
    }))
}

/// Records the outcome of a call [`begin_call`] reserved. Never fails the call: a store
/// failure is logged and the call keeps no outcome.
pub async fn finish_call(services: &Services, ticket: RunTicket, outcome: CallOutcome) {
    let RunTicket {
        game_id,
        run_id,
        seq,
    } = ticket;
    let recorded = update(services, game_id, run_id, |run| {
        if let Some(call) = run.calls.iter_mut().find(|c| c.seq == seq) {
            call.outcome = Some(outcome.clone());
        }
        Ok(())
    })
    .await;
    if let Err(e) = recorded {
        tracing::warn!(%run_id, seq, error = %e, "a run call's outcome was not recorded");
    }
}

/// A visual comparison the tool reports: its score and what it compared.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// From 0 (nothing alike) to 1 (identical).
    pub score: f64,
    /// The preview compared, if the tool names it.
    pub preview_id: Option<Uuid>,
}

/// Records a visual comparison in run `run_id` of `game_id`: one of its
/// [`MAX_COMPARISONS`] (the next is refused with `run_limit_reached`). A score outside 0 to
/// 1 is a 422. Returns the run as it stands after it.
pub async fn compare(
    services: &Services,
    game_id: Uuid,
    caller: &GameCaller,
    run_id: Uuid,
    comparison: Comparison,
) -> ServiceResult<Run> {
    if !(0.0..=1.0).contains(&comparison.score) {
        return Err(ServiceError::invalid("score", "between 0 and 1"));
    }
    let ticket = begin_call(
        services,
        game_id,
        caller,
        Some(run_id),
        CallKind::Comparison,
    )
    .await?
    .ok_or_else(|| ServiceError::Internal("a named run gave no ticket".into()))?;
    let outcome = CallOutcome {
        status: 201,
        score: Some(comparison.score),
        preview_id: comparison.preview_id,
        ..CallOutcome::default()
    };
    finish_call(services, ticket, outcome).await;
    get(services, game_id, run_id).await
}

/// Deletes the runs of `game_id` past their retention; how many.
pub async fn purge(services: &Services, game_id: Uuid) -> ServiceResult<usize> {
    let now = Utc::now();
    let mut purged = 0;
    for (id, bytes) in services.store.list(runs(game_id)).await? {
        let run: Run = decode(&bytes)?;
        if run.expires_at <= now && services.store.delete(runs(game_id), &id).await? {
            purged += 1;
        }
    }
    Ok(purged)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Role;
    use crate::service::test_support::with_services;

    fn developer() -> GameCaller {
        GameCaller::Dashboard(Dashboard {
            sub: "dev".into(),
            studio_id: "studio".into(),
            role: Role::Developer,
        })
    }

    #[test]
    fn concurrent_validations_never_pass_the_limit_and_the_fifth_is_refused() {
        with_services(async |services| {
            let game_id = Uuid::new_v4();
            let caller = developer();
            let run = open(&services, game_id, &caller, RunMode::Local)
                .await
                .expect("run");
            let attempts = (0..8).map(|_| {
                begin_call(
                    &services,
                    game_id,
                    &caller,
                    Some(run.run_id),
                    CallKind::Validate,
                )
            });
            let mut taken = 0;
            let mut refused = 0;
            for result in futures::future::join_all(attempts).await {
                match result {
                    Ok(Some(ticket)) => {
                        let outcome = CallOutcome {
                            status: 200,
                            valid: Some(false),
                            blockers: Some(2),
                            ..CallOutcome::default()
                        };
                        finish_call(&services, ticket, outcome).await;
                        taken += 1;
                    }
                    Err(ServiceError::Run(RunRefusal::LimitReached {
                        kind: Some(CallKind::Validate),
                        max: MAX_VALIDATIONS,
                    })) => refused += 1,
                    other => panic!("unexpected {other:?}"),
                }
            }
            assert_eq!((taken, refused), (4, 4));
            let after = get(&services, game_id, run.run_id).await.expect("run");
            assert_eq!(after.validations, MAX_VALIDATIONS);
            assert_eq!(after.calls.len(), 8);
            let finished = after
                .calls
                .iter()
                .filter(|c| c.outcome.as_ref().is_some_and(|o| o.blockers == Some(2)))
                .count();
            assert_eq!(finished, 4);
            // Drafts are recorded in the same run but never limited.
            let draft = begin_call(
                &services,
                game_id,
                &caller,
                Some(run.run_id),
                CallKind::Draft,
            )
            .await
            .expect("a draft is not limited");
            assert!(draft.is_some());
            // Without a run nothing is recorded nor limited.
            let none = begin_call(&services, game_id, &caller, None, CallKind::Validate)
                .await
                .expect("no run");
            assert!(none.is_none());
        });
    }
}
