//! The studio's audit trail (admin): `GET /v1/studio/audit`, who changed what, when and
//! from where, newest first, a page at a time.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use offer_domain::audit::AuditEntry;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::callers::Dashboard;
use super::extract::ApiQuery;
use super::openapi::{AuthErrors, Invalid, NotFound, QueryError, Unavailable};
use crate::auth::Role;
use crate::error::ApiResult;
use crate::service::ServiceError;
use crate::service::audit::trail::{self, Filter};
use crate::service::game::games;
use crate::state::AppState;

/// The query of `GET /v1/studio/audit`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only this game's records (a game of another studio is a 404).
    pub game_id: Option<Uuid>,
    /// Only records made at or after this time (RFC 3339).
    pub since: Option<DateTime<Utc>>,
    /// The `next_cursor` of the previous page.
    #[param(pattern = r"^[0-9]{20}-[0-9a-f]{32}$", max_length = 53)]
    pub cursor: Option<String>,
}

/// A page of the audit trail.
#[derive(Debug, Serialize, ToSchema)]
pub struct AuditPage {
    /// Newest first, at most 100.
    pub entries: Vec<AuditEntry>,
    /// The cursor of the next page; absent on the last.
    pub next_cursor: Option<String>,
}

/// The caller's studio's audit trail (admin): every change a member, a key or the operator
/// made to the studio's games, keys, members and settings, with the fields before and after
/// (secrets redacted), newest first.
#[utoipa::path(get, path = "/v1/studio/audit", tag = "members", params(AuditQuery),
    responses((status = 200, description = "A page of the audit trail", body = AuditPage),
        AuthErrors, QueryError, Invalid, NotFound, Unavailable))]
pub async fn get_audit(
    State(state): State<AppState>,
    caller: Dashboard,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> ApiResult<Json<AuditPage>> {
    caller.require(Role::Admin)?;
    if let Some(cursor) = &q.cursor
        && !is_entry_id(cursor)
    {
        return Err(ServiceError::invalid("cursor", "the next_cursor of a previous page").into());
    }
    let (games, _) = games::list(&state.services, &caller.studio_id, None, usize::MAX).await?;
    let games: Vec<Uuid> = games.iter().map(|g| g.game_id).collect();
    let page = trail::read(
        &state.services,
        &caller.studio_id,
        &games,
        &Filter {
            game_id: q.game_id,
            since: q.since,
            cursor: q.cursor,
        },
    )
    .await?;
    Ok(Json(AuditPage {
        entries: page.entries,
        next_cursor: page.next_cursor,
    }))
}

/// Whether `text` has the shape of a record's id: 20 digits, `-`, 32 lower-case hex digits.
fn is_entry_id(text: &str) -> bool {
    let Some((micros, random)) = text.split_once('-') else {
        return false;
    };
    micros.len() == 20
        && micros.bytes().all(|b| b.is_ascii_digit())
        && random.len() == 32
        && random
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}
