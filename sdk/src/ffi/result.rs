//! The C ABI's result codes (`SVC_Result`): 0 is success, every failure a documented negative
//! value, so a game checks `SVC_Init(...) != SVC_OK` as it would any engine's init call.

use crate::error::{InitError, TrackError};

/// The result of a C ABI call: [`SVC_OK`] (0) or one of the negative `SVC_ERR_...` codes.
#[allow(non_camel_case_types)]
pub type SVC_Result = i32;

/// Success.
pub const SVC_OK: SVC_Result = 0;
/// A required pointer argument was null.
pub const SVC_ERR_NULL_ARGUMENT: SVC_Result = -1;
/// A string argument was not valid UTF-8.
pub const SVC_ERR_INVALID_UTF8: SVC_Result = -2;
/// The configuration JSON was not valid JSON of the expected shape.
pub const SVC_ERR_INVALID_CONFIG: SVC_Result = -3;
/// `api_key` is not an SDK key (`_live_sk_` or `_test_sk_`).
pub const SVC_ERR_NOT_AN_SDK_KEY: SVC_Result = -4;
/// The key's kind and `environment` disagree (a sandbox key with `production`, or the reverse).
pub const SVC_ERR_ENVIRONMENT_MISMATCH: SVC_Result = -5;
/// `base_url` is not an `http://` or `https://` URL.
pub const SVC_ERR_BASE_URL: SVC_Result = -6;
/// `svc_config.json` is missing from the data directory or malformed.
pub const SVC_ERR_SVC_CONFIG: SVC_Result = -7;
/// The player id could not be resolved (the configured source needs an input not passed).
pub const SVC_ERR_PLAYER_ID: SVC_Result = -8;
/// The data directory could not be made or used.
pub const SVC_ERR_DATA_DIR: SVC_Result = -9;
/// The SDK's background thread could not be started.
pub const SVC_ERR_THREAD: SVC_Result = -10;
/// The call needs `SVC_Init` to have succeeded first.
pub const SVC_ERR_NOT_INITIALISED: SVC_Result = -11;
/// `SVC_Init` was called while an SDK is running (call `SVC_Shutdown` first).
pub const SVC_ERR_ALREADY_INITIALISED: SVC_Result = -12;
/// The event JSON of `SVC_Track` is not a known event of the expected shape.
pub const SVC_ERR_INVALID_EVENT: SVC_Result = -13;
/// The kill switch is at level 3 (SDK off): the event was not queued.
pub const SVC_ERR_SDK_OFF: SVC_Result = -14;
/// `SVC_Login` was called when a player is already logged in (a session has one player).
pub const SVC_ERR_ALREADY_LOGGED_IN: SVC_Result = -15;
/// The SDK failed inside (a panic, caught at the boundary rather than unwinding into C).
pub const SVC_ERR_INTERNAL: SVC_Result = -16;
/// The event of `SVC_Track`, as JSON, is longer than the engine takes in one request
/// (2 MiB less the 65 bytes around a batch's events and the 8,210 kept for the player token):
/// it could never be sent, so it was not queued.
pub const SVC_ERR_EVENT_TOO_LARGE: SVC_Result = -17;
/// The money event of `SVC_Track` was not queued: the queue holds its most money events
/// (100,000) waiting for the engine, a long outage. Money events are never evicted; keep the
/// event and track it later. (Past 1,000 queued events, a new event evicts the oldest
/// non-money event instead.)
pub const SVC_ERR_QUEUE_FULL: SVC_Result = -18;
/// The player token is missing (`player_id_source: jwt` without `player_token`), does not read
/// (not a JWT whose payload has a string `sub`, or longer than 8 KiB), or names another player
/// than the session's; or, from `SVC_RequestOffer`, the engine refused the SDK's token and no
/// socket is up: give a new one with `SVC_SetPlayerToken`.
pub const SVC_ERR_PLAYER_TOKEN: SVC_Result = -19;
/// `SVC_RegisterCallback` was given a name that is none of the `SVC_Dart_On...` constants.
pub const SVC_ERR_UNKNOWN_CALLBACK: SVC_Result = -20;

/// The code for an init refusal.
pub(super) fn of_init(error: &InitError) -> SVC_Result {
    match error {
        InitError::Config(_) => SVC_ERR_INVALID_CONFIG,
        InitError::NotAnSdkKey => SVC_ERR_NOT_AN_SDK_KEY,
        InitError::EnvironmentMismatch { .. } => SVC_ERR_ENVIRONMENT_MISMATCH,
        InitError::BaseUrl(_) => SVC_ERR_BASE_URL,
        InitError::SvcConfig { .. } => SVC_ERR_SVC_CONFIG,
        InitError::MissingPlayerInput { .. } => SVC_ERR_PLAYER_ID,
        InitError::PlayerToken(_) => SVC_ERR_PLAYER_TOKEN,
        InitError::DataDir { .. } => SVC_ERR_DATA_DIR,
        InitError::Thread(_) => SVC_ERR_THREAD,
    }
}

/// The code for a refused event.
pub(super) fn of_track(error: &TrackError) -> SVC_Result {
    match error {
        TrackError::SdkOff => SVC_ERR_SDK_OFF,
        TrackError::TooLarge { .. } => SVC_ERR_EVENT_TOO_LARGE,
        TrackError::QueueFull { .. } => SVC_ERR_QUEUE_FULL,
        TrackError::Unencodable(_) => SVC_ERR_INVALID_EVENT,
    }
}
