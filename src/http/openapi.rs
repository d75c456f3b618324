//! The OpenAPI document's fixed parts (title, security scheme, the error body) and the error
//! answers operations share, so each operation lists its error statuses by name instead of
//! repeating `(status = N, body = ErrorBody)` entries.
//!
//! Each set documents statuses the operations using it do answer, and only those:
//! - every authenticated operation can answer 401 (no, a malformed, an unknown, a revoked or
//!   an expired credential) and, where a credential of another kind or a lower role exists,
//!   403 ([`AuthErrors`]; [`Unauthenticated`] where every credential kind is taken);
//! - every JSON body can be malformed (400), larger than `server.max_body_bytes` (413), of
//!   the wrong content type (415) or invalid (422) ([`BodyErrors`], or [`BatchBodyErrors`]
//!   where a list has a largest size too);
//! - every operation that reaches the store (every one naming a game does, to load it) can
//!   answer 503 with `Retry-After` ([`Unavailable`]).
//!
//! Every operation takes the bearer credential, except the probes, which say so themselves.

use std::collections::BTreeMap;

use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, RefOr, Response, ResponseBuilder};
use utoipa::{IntoResponses, OpenApi};

use crate::error::{ErrorBody, ErrorDetail};

/// The document's fixed parts; paths and schemas are collected from the handlers.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Offer engine",
        description = "Real-time in-game offer engine: catalogue, offers, approvals, economy. The SDK's WebSocket (`GET /v1/sdk/ws`, SDK key as Bearer, subprotocols `svc.v1.json` and `svc.v1.msgpack`) is not a REST operation; docs/protocol.md in the repository describes it.\n\nSchemas state every bound a single field has (patterns, lengths, ranges, list sizes). Rules between fields, and rules that depend on the game's state (a currency the game has, an item that exists), cannot be written in JSON Schema: each schema's description lists them, and a request breaking one is refused with 422 naming the field."
    ),
    components(schemas(ErrorBody, ErrorDetail)),
    security(("bearer" = [])),
    modifiers(&BearerAuth)
)]
pub struct ApiDoc;

/// Adds the bearer security scheme every operation but the probes uses, and leaves out the
/// licence the document would otherwise take (empty) from the package.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        openapi.info.license = None;
        if let Some(components) = openapi.components.as_mut() {
            components.add_security_scheme(
                "bearer",
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .description(Some(
                            "A dashboard JWT (`offer-engine token`), an SDK key (`/v1/sdk/*`, item art) or an authoring key (catalogue reads, item art), as each operation says.",
                        ))
                        .build(),
                ),
            );
        }
    }
}

/// Error answers in the documented error shape, one per status. A 503 and a 429 carry
/// `Retry-After`.
fn errors(statuses: &[(u16, &str)]) -> BTreeMap<String, RefOr<Response>> {
    statuses
        .iter()
        .map(|(status, description)| {
            let content = ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("ErrorBody")))
                .build();
            let mut response = ResponseBuilder::new()
                .description(*description)
                .content("application/json", content);
            if *status == 503 || *status == 429 {
                response = response.header(
                    "Retry-After",
                    HeaderBuilder::new()
                        .schema(Some(
                            ObjectBuilder::new()
                                .schema_type(Type::Integer)
                                .minimum(Some(0)),
                        ))
                        .description(Some("Seconds to wait before retrying"))
                        .build(),
                );
            }
            (status.to_string(), RefOr::T(response.build()))
        })
        .collect()
}

/// Declares a named set of error answers.
macro_rules! error_set {
    ($(#[$doc:meta])* $name:ident: $(($status:literal, $description:literal)),+ $(,)?) => {
        $(#[$doc])*
        pub struct $name;

        impl IntoResponses for $name {
            fn responses() -> BTreeMap<String, RefOr<Response>> {
                errors(&[$(($status, $description)),+])
            }
        }
    };
}

error_set!(
    /// 401 and 403: a missing or bad credential, or one of the wrong kind or role.
    AuthErrors: (401, "missing, malformed, unknown, revoked or expired credential"),
    (403, "a credential of the wrong kind, or a role that does not allow this")
);
error_set!(
    /// 401 and 403 of the SDK routes that a kill switch at level 3 closes.
    SdkAuthErrors: (401, "missing, malformed, unknown, revoked or expired credential"),
    (403, "a credential other than an SDK key, or the game's kill switch at level 3 (code sdk_disabled)")
);
error_set!(
    /// 401 alone: routes that take every credential kind can refuse only a bad one.
    Unauthenticated: (401, "missing, malformed, unknown, revoked or expired credential")
);
error_set!(
    /// 400, 413, 415 and 422: a JSON body that is malformed, too large, not JSON, or invalid.
    BodyErrors: (400, "malformed JSON: a syntax error, data after the document, or a top level other than the operation takes"),
    (413, "the body exceeds server.max_body_bytes"),
    (415, "the body is not sent as application/json"),
    (422, "validation failed; details.errors lists every field error")
);
error_set!(
    /// [`BodyErrors`] for a body carrying a list with a largest size, which is a 413 too.
    BatchBodyErrors: (400, "malformed JSON: a syntax error, data after the document, or a top level other than the operation takes"),
    (413, "the body exceeds server.max_body_bytes, or its list has more entries than one call takes"),
    (415, "the body is not sent as application/json"),
    (422, "validation failed; details.errors lists every field error")
);
error_set!(
    /// What a store's notification can be refused with: its body, its query, and its proof.
    NotificationErrors: (400, "malformed JSON, or a malformed query string"),
    (401, "the notification does not prove it is the store's for this game: a signature, certificate chain, app, package or token that does not check out, or a game without that store's settings (code notification_invalid)"),
    (413, "the body exceeds server.max_body_bytes"),
    (415, "the body is not sent as application/json"),
    (422, "validation failed (a body without its signedPayload, a Pub/Sub message that does not read); details.errors lists every field error")
);
error_set!(
    /// 400: a query string the operation cannot read.
    QueryError: (400, "malformed query string: an unknown parameter, a value of the wrong type, or one outside its documented range")
);
error_set!(
    /// 404: absent, or another studio's.
    NotFound: (404, "not found, or not the caller's studio's (a malformed id names nothing, so it is a 404 too)")
);
error_set!(
    /// 409: the request contradicts the current state.
    Conflict: (409, "conflicts with the current state")
);
error_set!(
    /// 413: an upload larger than the library takes.
    UploadTooLarge: (413, "the upload exceeds catalogue.max_asset_bytes")
);
error_set!(
    /// 422: a value the operation refuses (operations without a JSON body).
    Invalid: (422, "validation failed; details.errors lists every field error")
);
error_set!(
    /// 503: the store is down or slow; retry after `Retry-After` seconds.
    Unavailable: (503, "a dependency is unavailable; retry after Retry-After seconds")
);
error_set!(
    /// 429 of a preview request: the game or the caller has its share of the node's
    /// preview queue queued or building already; retry after `Retry-After` seconds.
    PreviewShareFull: (429, "this game or caller already has its share of the node's preview queue queued or building (code preview_share_full); retry after Retry-After seconds")
);
error_set!(
    /// 503 of a preview request: this node's build queue is full, or the store is down or
    /// slow; retry after `Retry-After` seconds.
    PreviewUnavailable: (503, "this node's preview queue is full (code preview_queue_full), or a dependency is unavailable (code unavailable); retry after Retry-After seconds")
);
error_set!(
    /// [`BodyErrors`] for a custom-page draft, whose template and bindings have sizes of
    /// their own, a 413 too.
    DraftBodyErrors: (400, "malformed JSON: a syntax error, data after the document, or a top level other than the operation takes"),
    (413, "the body exceeds server.max_body_bytes, the template 65536 bytes or the bindings 16384 bytes of JSON"),
    (415, "the body is not sent as application/json"),
    (422, "validation failed; details.errors lists every field error")
);
error_set!(
    /// 429 of a session open for a new player id past its SDK key's budget of new players.
    NewPlayerRateLimited: (429, "the SDK key opened sessions for as many new player ids this minute as players.new_per_minute_per_key allows on this node (code new_player_rate_limited); retry after Retry-After seconds")
);
error_set!(
    /// 429: a rate limit of device sign-in; retry after `Retry-After` seconds.
    RateLimited: (429, "too many attempts (code rate_limited); retry after Retry-After seconds")
);
error_set!(
    /// The body errors of the device sign-in poll, whose 400 also carries the refusals of
    /// RFC 8628.
    SignInPollErrors: (400, "no key to hand out, with the code saying why: authorization_pending (poll again after the interval), slow_down (polled too soon: details.interval is the new interval in seconds), access_denied (a dashboard user denied it), expired_token (past its lifetime, or its key was already handed out), invalid_grant (an unknown device code); or malformed JSON (bad_request)"),
    (413, "the body exceeds server.max_body_bytes"),
    (415, "the body is not sent as application/json"),
    (422, "validation failed; details.errors lists every field error")
);
error_set!(
    /// 415: an upload whose content is not of a kind the operation takes.
    MediaError: (415, "the content is not a whole PNG, JPEG or WebP image")
);

error_set!(
    /// [`BodyErrors`] of a publish request, whose page must fit one WebSocket frame, a 413
    /// too.
    PublishBodyErrors: (400, "malformed JSON: a syntax error, data after the document, or a top level other than the operation takes"),
    (413, "the body exceeds server.max_body_bytes, or the version's page, as JSON, exceeds websocket.max_frame_bytes less 256 bytes"),
    (415, "the body is not sent as application/json"),
    (422, "validation failed (details.errors lists every field error); or code page_invalid: the version does not pass the custom-page validator, details is its answer (valid, blockers, warnings) and nothing is queued")
);
error_set!(
    /// 422 of an approval whose custom page no longer passes the validator.
    PageRefused: (422, "code page_invalid: the custom page's version does not pass the validator against the catalogue of now; details is its answer (valid, blockers, warnings), and the approval stays pending")
);
error_set!(
    /// 409 of the calls an authoring run counts: the state's conflicts and the run's refusals.
    RunConflict: (409, "conflicts with the current state; in an authoring run, code run_not_confirmed (a cloud run not confirmed yet) or run_limit_reached (details.limit names the limit: validate, comparison or calls; details.max its size)")
);
error_set!(
    /// 401 and 403 of confirming a cloud run, whose 403 also refuses the member who approved
    /// the run's authoring key.
    RunRefused: (401, "missing, malformed, unknown, revoked or expired credential"),
    (403, "a credential of the wrong kind, or a role that does not allow this; or code second_member_required: the member who approved the run's authoring key (or opened the run) cannot confirm it")
);
