//! The SDK surface (`/v1/sdk/*`, SDK key only): status, sessions, events and offers.
//!
//! The offer request follows fixed steps in order: 1 the key (extractor), 2 the
//! session and player, then the decision (kill switch, holdout, frequency caps, L1 to L4,
//! L5) in [`crate::service::play::offers::serve`].

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use offer_actors::GameHandle;
use offer_actors::game::ItemJson;
use offer_domain::economy::Quadrant;
use offer_domain::game::Mode;
use offer_domain::offer::{KillSwitch, ServedOffer};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use super::callers::SdkCaller;
use super::extract::{ApiJson, ApiPath};
use super::offer_json;
use super::openapi::{
    AuthErrors, BatchBodyErrors, BodyErrors, Conflict, NewPlayerRateLimited, NotFound,
    SdkAuthErrors, Unavailable,
};
use crate::error::{ApiError, ApiResult};
use crate::service::ServiceError;
use crate::service::play::decision_log::Served;
use offer_domain::custom_page::{PublishedPage, SharedPage};
use offer_wire::event::SdkEvent;
use offer_wire::socket::TriggerContext;

use crate::service::access;
use crate::service::game::player_auth;
use crate::service::play::events::{self, BatchOutcome, Sender};
use crate::service::play::offers::serve;
use crate::service::play::sessions::{self, OpenSession, Opened, open_session};
use crate::state::AppState;

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
    /// FSR quadrant of the game's production economy; while `HYPER_INFL` the AI levels
    /// (L1 and L2) are suppressed.
    pub quadrant: Quadrant,
    /// Server clock.
    pub server_time: DateTime<Utc>,
    /// The published custom page (the version a studio member approved, with its template
    /// and bindings), or null when none was ever published.
    #[schema(value_type = Option<PublishedPage>)]
    pub custom_page: Option<SharedPage>,
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

/// `POST /v1/sdk/events` body. The whole batch is checked before any event is applied: a
/// money event naming a currency the game does not have, or an event whose `ts` is 24 hours
/// or more away from the server's clock, refuses the batch with 422.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EventBatch {
    /// The session, opened with `POST /v1/sdk/sessions` by this key's game and environment.
    pub session_id: Uuid,
    /// At most 100 events (more is a 413).
    #[schema(max_items = 100)]
    pub events: Vec<SdkEvent>,
    /// The session's player's token, needed on every call when the game requires player
    /// identity (the session id alone proves nothing); ignored otherwise.
    #[serde(default)]
    pub player_token: Option<String>,
}

/// `POST /v1/sdk/offers/next` body.
#[derive(Debug, Deserialize, ToSchema)]
pub struct OfferRequest {
    /// The session, opened with `POST /v1/sdk/sessions` by this key's game and environment.
    pub session_id: Uuid,
    /// The moment.
    pub trigger_context: TriggerContext,
    /// The session's player's token, needed on every call when the game requires player
    /// identity (the session id alone proves nothing); ignored otherwise.
    #[serde(default)]
    pub player_token: Option<String>,
}

/// The SDK's game: the key's own; any other id is a 404.
async fn sdk_game(state: &AppState, caller: &SdkCaller) -> ApiResult<GameHandle> {
    Ok(access::load(&state.services, caller.key.game_id).await?)
}

/// Kill switch, mode, configuration version and FSR quadrant at SDK start (the key's own
/// game; any other id is a 404).
#[utoipa::path(get, path = "/v1/sdk/status/{game_id}", tag = "sdk",
    operation_id = "get_sdk_status",
    params(("game_id" = Uuid, Path)),
    responses((status = 200, description = "The game's status", body = SdkStatus),
        AuthErrors, NotFound, Unavailable))]
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
        quadrant: view.snapshot.quadrant(),
        server_time: Utc::now(),
        custom_page: view.custom_page.clone(),
    }))
}

/// Opens a session (`session_start`); opening it again for the same player resumes it (200),
/// and a `session_id` of another player is a 409.
#[utoipa::path(post, path = "/v1/sdk/sessions", tag = "sdk", request_body = OpenSession,
    responses(
        (status = 201, description = "The session, opened", body = SessionOpened, links(
            ("PostEvents" = (operation_id = "post_events",
                request_body = json!({"session_id": "$response.body#/session_id"}),
                description = "Send the session's events")),
            ("NextOffer" = (operation_id = "next_offer",
                request_body = json!({"session_id": "$response.body#/session_id"}),
                description = "Ask for the session's next offer")),
        )),
        (status = 200, description = "The session, resumed", body = SessionOpened, links(
            ("PostEvents" = (operation_id = "post_events",
                request_body = json!({"session_id": "$response.body#/session_id"}),
                description = "Send the session's events")),
            ("NextOffer" = (operation_id = "next_offer",
                request_body = json!({"session_id": "$response.body#/session_id"}),
                description = "Ask for the session's next offer")),
        )),
        SdkAuthErrors, BodyErrors, Conflict, NewPlayerRateLimited, Unavailable))]
pub async fn sessions_open(
    State(state): State<AppState>,
    caller: SdkCaller,
    ApiJson(body): ApiJson<OpenSession>,
) -> ApiResult<(StatusCode, Json<SessionOpened>)> {
    let Opened {
        session,
        created,
        game,
    } = open_session(
        &state.services,
        caller.key.game_id,
        caller.env,
        body,
        || state.new_players.admit(caller.key.key_id),
    )
    .await?;
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

/// Telemetry and money events of a session; a refused money event (a spend above the balance,
/// a reused `tx_id`) is reported in the answer and does not stop the rest.
#[utoipa::path(post, path = "/v1/sdk/events", tag = "sdk", request_body = EventBatch,
    responses((status = 202, description = "What was applied and what was refused", body = BatchOutcome),
        SdkAuthErrors, BatchBodyErrors, NotFound, Unavailable))]
pub async fn post_events(
    State(state): State<AppState>,
    caller: SdkCaller,
    ApiJson(body): ApiJson<EventBatch>,
) -> ApiResult<(StatusCode, Json<BatchOutcome>)> {
    let game = sdk_game(&state, &caller).await?;
    let applied = events::receive(
        &state.services,
        &game,
        caller.env,
        Sender::Rest {
            session_id: body.session_id,
            player_token: body.player_token.as_deref(),
        },
        &body.events,
    )
    .await?;
    Ok((StatusCode::ACCEPTED, Json(BatchOutcome::from(applied))))
}

/// The next offer for a session and trigger, or 204 with `Offer-Outcome`.
#[utoipa::path(post, path = "/v1/sdk/offers/next", tag = "sdk", request_body = OfferRequest,
    responses((status = 200, description = "The offer", body = ServedOffer),
        (status = 204, description = "No offer; the Offer-Outcome header says why", headers(
            ("Offer-Outcome" = String, description = "Why no offer: kill_switch, holdout, frequency_capped or suppressed"),
            ("Decision-Id" = Uuid, description = "The decision, readable at GET /v1/games/{game_id}/offers/{offer_id}"),
        )),
        AuthErrors, BodyErrors, NotFound, Unavailable))]
pub async fn next_offer(
    State(state): State<AppState>,
    caller: SdkCaller,
    ApiJson(body): ApiJson<OfferRequest>,
) -> ApiResult<Response> {
    if !body.trigger_context.is_valid() {
        return Err(ApiError::Service(ServiceError::invalid(
            "trigger_context.event_type",
            "a snake_case event name",
        )));
    }
    let game = sdk_game(&state, &caller).await?;
    let session = sessions::resolve(
        &state.services,
        caller.key.game_id,
        caller.env,
        body.session_id,
    )
    .await?;
    player_auth::prove_session(&game, &session, body.player_token.as_deref())?;
    session.touch();
    let event_type = body.trigger_context.event_type.as_str();
    Ok(match serve(&state.services, &game, &session, event_type) {
        Served::Offer(offer) => offer_response(&game.view().item_json, &offer),
        Served::NoOffer(reason, id) => no_offer(reason.as_str(), id),
    })
}

/// The offer as JSON (`application/json`, as `Json` answers), its items written from the
/// game's pre-rendered item records (the same JSON the catalogue returns), so no item is
/// serialised per request.
fn offer_response(rendered: &ItemJson, offer: &ServedOffer) -> Response {
    match offer_json::write(rendered, offer) {
        Ok(body) => (
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            body,
        )
            .into_response(),
        Err(e) => {
            ApiError::Service(ServiceError::Internal(format!("offer JSON: {e}"))).into_response()
        }
    }
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
