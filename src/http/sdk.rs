//! The SDK surface (`/v1/sdk/*`, SDK key only): status, sessions, events and offers.
//!
//! The offer request follows the contract's steps in order: 1 the key (extractor), 2 the
//! session and player, then the decision (kill switch, holdout, frequency caps, L1 to L4,
//! L5) in [`crate::offers::serve`].

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use offer_actors::game::ItemJson;
use offer_actors::{GameHandle, SessionHandle};
use offer_domain::game::{Game, Mode};
use offer_domain::offer::{KillSwitch, ServedOffer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::ToSchema;
use uuid::Uuid;

use super::extract::{ApiJson, ApiPath};
use crate::auth::SdkCaller;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::events::{self, SdkEvent};
use crate::offers::{Served, serve};
use crate::repo::{games, sessions};
use crate::state::AppState;
use crate::store::Environment;

/// Kill-switch level from which the SDK is off: events and sessions are refused.
pub const KILL_SDK_OFF: u8 = 3;

/// `GET /v1/sdk/status/{game_id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct SdkStatus {
    /// The game.
    pub game_id: Uuid,
    /// Kill switch.
    pub kill_switch: KillSwitch,
    /// Operating mode.
    pub mode: Mode,
    /// Version of the game's live configuration.
    pub config_version: u64,
    /// Server clock.
    pub server_time: DateTime<Utc>,
}

/// `POST /v1/sdk/sessions` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenSession {
    /// Client-chosen UUID.
    pub session_id: Uuid,
    /// The studio's player id.
    pub player_id: String,
    /// country, platform, app_version, level, ...
    #[serde(default)]
    #[schema(value_type = Object)]
    pub attributes: serde_json::Map<String, serde_json::Value>,
}

/// `POST /v1/sdk/sessions` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct SessionOpened {
    /// The session.
    pub session_id: Uuid,
    /// The player.
    pub player_id: String,
    /// Operating mode.
    pub mode: Mode,
    /// Kill switch.
    pub kill_switch: KillSwitch,
    /// Configuration version.
    pub config_version: u64,
}

/// `POST /v1/sdk/events` body.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EventBatch {
    /// The session.
    pub session_id: Uuid,
    /// At most 100 events.
    pub events: Vec<SdkEvent>,
}

/// `POST /v1/sdk/events` answer.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventsAccepted {
    /// Events applied (a replayed `tx_id` counts as accepted: it is idempotent).
    pub accepted: usize,
    /// Events refused, e.g. a spend above the balance.
    pub rejected: Vec<events::Rejected>,
}

/// `trigger_context`. Other fields the game sends with it are accepted and ignored.
#[derive(Debug, Deserialize, ToSchema)]
pub struct TriggerContext {
    /// The trigger, e.g. `session_start`, `currency_low`, `boss_raid`.
    pub event_type: String,
}

/// `POST /v1/sdk/offers/next` body.
#[derive(Debug, Deserialize, ToSchema)]
pub struct OfferRequest {
    /// The session.
    pub session_id: Uuid,
    /// The moment.
    pub trigger_context: TriggerContext,
}

/// The SDK's game: the key's own; any other id is a 404.
async fn sdk_game(state: &AppState, caller: &SdkCaller) -> ApiResult<GameHandle> {
    games::load(state, caller.key.game_id).await
}

/// Kill switch, mode and configuration version at SDK start.
#[utoipa::path(get, path = "/v1/sdk/status/{game_id}", tag = "sdk",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, body = SdkStatus), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn status(
    State(state): State<AppState>,
    caller: SdkCaller,
    ApiPath(game_id): ApiPath<Uuid>,
) -> ApiResult<Json<SdkStatus>> {
    caller.check_game(game_id)?;
    let view = sdk_game(&state, &caller).await?.view();
    Ok(Json(SdkStatus {
        game_id,
        kill_switch: view.kill_switch.clone(),
        mode: view.game.mode,
        config_version: view.version,
        server_time: Utc::now(),
    }))
}

/// Validates session attributes: bounded, and country/platform well formed.
fn check_attributes(attrs: &serde_json::Map<String, serde_json::Value>) -> ApiResult<()> {
    if attrs.len() > 32 {
        return Err(ApiError::invalid("attributes", "at most 32 attributes"));
    }
    if serde_json::to_vec(attrs).map_or(usize::MAX, |v| v.len()) > 4096 {
        return Err(ApiError::invalid("attributes", "at most 4 KiB"));
    }
    if let Some(c) = attrs.get("country")
        && !c
            .as_str()
            .is_some_and(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_alphabetic()))
    {
        return Err(ApiError::invalid(
            "attributes.country",
            "an ISO 3166-1 alpha-2 code",
        ));
    }
    if let Some(p) = attrs.get("platform")
        && !p.as_str().is_some_and(|p| !p.is_empty() && p.len() <= 32)
    {
        return Err(ApiError::invalid(
            "attributes.platform",
            "a string of at most 32 characters",
        ));
    }
    Ok(())
}

/// Opens (or resumes) a session and fires `session_start`.
pub async fn open_session(
    state: &AppState,
    caller: &SdkCaller,
    body: OpenSession,
) -> ApiResult<(SessionHandle, bool, GameHandle)> {
    if body.player_id.trim().is_empty() || body.player_id.len() > 128 {
        return Err(ApiError::invalid(
            "player_id",
            "between 1 and 128 characters",
        ));
    }
    check_attributes(&body.attributes)?;
    let game = sdk_game(state, caller).await?;
    if game.view().kill_switch.level >= KILL_SDK_OFF {
        return Err(ApiError::SdkDisabled);
    }
    let (session, created) = sessions::open(
        state,
        caller.key.game_id,
        caller.env,
        sessions::SessionRecord {
            session_id: body.session_id,
            player_id: body.player_id,
            attributes: body.attributes,
            created_at: Utc::now(),
        },
    )
    .await?;
    mark_launched(state, &game, caller.env).await?;
    Ok((session, created, game))
}

/// Records the game's launch at its first `session_start` of the environment; the holdout
/// share is fixed from then on (it is a constant of the engine, so nothing can change it).
async fn mark_launched(state: &AppState, game: &GameHandle, env: Environment) -> ApiResult<()> {
    let current: Game = game.view().game.clone();
    let unset = match env {
        Environment::Production => current.launched_at.is_none(),
        Environment::Sandbox => current.sandbox_launched_at.is_none(),
    };
    if !unset {
        return Ok(());
    }
    let now = Some(Utc::now());
    games::update(state, game, |g| {
        Ok(match env {
            Environment::Production if g.launched_at.is_none() => {
                g.launched_at = now;
                true
            }
            Environment::Sandbox if g.sandbox_launched_at.is_none() => {
                g.sandbox_launched_at = now;
                true
            }
            _ => false,
        })
    })
    .await
    .map(|_| ())
}

/// Opens a session (`session_start`).
#[utoipa::path(post, path = "/v1/sdk/sessions", tag = "sdk", request_body = OpenSession,
    responses((status = 201, body = SessionOpened), (status = 200, body = SessionOpened),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 409, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn sessions_open(
    State(state): State<AppState>,
    caller: SdkCaller,
    ApiJson(body): ApiJson<OpenSession>,
) -> ApiResult<(StatusCode, Json<SessionOpened>)> {
    let (session, created, game) = open_session(&state, &caller, body).await?;
    let view = game.view();
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((
        status,
        Json(SessionOpened {
            session_id: session.info().session_id,
            player_id: session.info().player_id.clone(),
            mode: view.game.mode,
            kill_switch: view.kill_switch.clone(),
            config_version: view.version,
        }),
    ))
}

/// Telemetry and money events.
#[utoipa::path(post, path = "/v1/sdk/events", tag = "sdk", request_body = EventBatch,
    responses((status = 202, body = EventsAccepted), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody),
        (status = 404, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody), (status = 503, body = ErrorBody)))]
pub async fn post_events(
    State(state): State<AppState>,
    caller: SdkCaller,
    ApiJson(body): ApiJson<EventBatch>,
) -> ApiResult<(StatusCode, Json<EventsAccepted>)> {
    if body.events.len() > 100 {
        return Err(ApiError::PayloadTooLarge(
            "at most 100 events per call".into(),
        ));
    }
    let game = sdk_game(&state, &caller).await?;
    events::validate_all(&game.view().game, &body.events)?;
    if game.view().kill_switch.level >= KILL_SDK_OFF {
        return Err(ApiError::SdkDisabled);
    }
    let session =
        sessions::resolve(&state, caller.key.game_id, caller.env, body.session_id).await?;
    let mut accepted = 0;
    let mut rejected = Vec::new();
    for (index, event) in body.events.iter().enumerate() {
        match events::apply(&state, &game, &session, caller.env, event).await? {
            events::Applied::Accepted(_) => accepted += 1,
            events::Applied::Rejected(code, message) => rejected.push(events::Rejected {
                index,
                code,
                message,
            }),
        }
    }
    Ok((
        StatusCode::ACCEPTED,
        Json(EventsAccepted { accepted, rejected }),
    ))
}

/// The next offer for a session and trigger, or 204 with `Offer-Outcome`.
#[utoipa::path(post, path = "/v1/sdk/offers/next", tag = "sdk", request_body = OfferRequest,
    responses((status = 200, body = ServedOffer),
        (status = 204, description = "No offer; the Offer-Outcome header says why (kill_switch, holdout, frequency_capped, suppressed)"),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 415, body = ErrorBody), (status = 422, body = ErrorBody),
        (status = 503, body = ErrorBody)))]
pub async fn next_offer(
    State(state): State<AppState>,
    caller: SdkCaller,
    ApiJson(body): ApiJson<OfferRequest>,
) -> ApiResult<Response> {
    let event_type = body.trigger_context.event_type.as_str();
    if !offer_domain::validation::is_snake_case(event_type, 64) {
        return Err(ApiError::invalid(
            "trigger_context.event_type",
            "a snake_case event name",
        ));
    }
    let game = sdk_game(&state, &caller).await?;
    let session =
        sessions::resolve(&state, caller.key.game_id, caller.env, body.session_id).await?;
    session.touch();
    Ok(match serve(&state, &game, &session, event_type) {
        Served::Offer(offer) => offer_response(&game.view().item_json, &offer),
        Served::NoOffer(reason, id) => no_offer(reason.as_str(), id),
    })
}

/// The offer as JSON, its items written from the game's pre-rendered item records (the
/// same JSON the catalogue returns), so no item is serialised per request.
fn offer_response(rendered: &ItemJson, offer: &ServedOffer) -> Response {
    #[derive(Serialize)]
    struct Body<'a> {
        offer_id: Uuid,
        fallback_level: u8,
        items: Vec<ItemRecord<'a>>,
        price_usd: f64,
        price_cents: i64,
        expires_at: DateTime<Utc>,
        #[serde(skip_serializing_if = "Option::is_none")]
        experiment: Option<&'a offer_domain::offer::ExperimentRef>,
    }
    #[derive(Serialize)]
    #[serde(untagged)]
    enum ItemRecord<'a> {
        Rendered(&'a RawValue),
        Live(&'a offer_domain::catalogue::Item),
    }
    let body = Body {
        offer_id: offer.offer_id,
        fallback_level: offer.fallback_level,
        items: offer
            .items
            .iter()
            .map(|item| match rendered.get(&item.item_id) {
                Some(json) => ItemRecord::Rendered(json),
                None => ItemRecord::Live(item),
            })
            .collect(),
        price_usd: offer.price_usd,
        price_cents: offer.price_cents,
        expires_at: offer.expires_at,
        experiment: offer.experiment.as_ref(),
    };
    Json(body).into_response()
}

fn no_offer(outcome: &'static str, decision_id: Uuid) -> Response {
    let mut r = StatusCode::NO_CONTENT.into_response();
    r.headers_mut().insert(
        HeaderName::from_static("offer-outcome"),
        HeaderValue::from_static(outcome),
    );
    if let Ok(v) = HeaderValue::from_str(&decision_id.to_string()) {
        r.headers_mut()
            .insert(HeaderName::from_static("decision-id"), v);
    }
    r
}
