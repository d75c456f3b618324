//! The one SDK of the C ABI and the game's registered callbacks, behind one mutex. The lock is
//! never held while a game callback runs, so a callback may call back into the SDK.

use std::ffi::{c_char, c_void};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::payload::KINDS;
use crate::sdk::Sdk;

/// A game callback: the payload as NUL-terminated UTF-8 JSON, valid only during the call, and
/// the `user_data` given at registration. Each registration (`SVC_SetOn...`, or
/// `SVC_RegisterCallback` with the callback's name) writes one line to standard error under
/// the callback's `SVC_Dart_On...` name (`offer-sdk: registered SVC_Dart_OnSDKReady`, ...),
/// the device log.
#[allow(non_camel_case_types)]
pub type SVC_Callback = Option<extern "C" fn(json: *const c_char, user_data: *mut c_void)>;

/// One registered callback. `user_data` is kept as an address: the SDK never dereferences it,
/// only hands it back to the game on the game's own thread.
#[derive(Debug, Clone, Copy)]
pub struct Registered {
    /// The function.
    pub function: extern "C" fn(*const c_char, *mut c_void),
    /// The game's pointer, as an address.
    pub user_data: usize,
}

/// What the C ABI holds between calls.
#[derive(Debug)]
pub struct Global {
    /// The running SDK, between `SVC_Init` and `SVC_Shutdown`.
    pub sdk: Option<Sdk>,
    /// The registered callbacks, by [`super::payload::Kind::index`].
    pub callbacks: [Option<Registered>; KINDS],
    /// Whether the first frame (the first `SVC_Poll` with a running SDK) was logged.
    pub first_frame_logged: bool,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    sdk: None,
    callbacks: [None; KINDS],
    first_frame_logged: false,
});

/// The global state, locked (a panic while it was held leaves it usable: every field is
/// whole at every point).
pub fn lock() -> MutexGuard<'static, Global> {
    GLOBAL.lock().unwrap_or_else(PoisonError::into_inner)
}
