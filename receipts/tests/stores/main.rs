//! The verifiers end to end, against test stand-ins for the stores: each refusal alone (one
//! property broken, everything else genuine), and the happy paths.

mod apple;
mod google;
mod notifications;
mod unity;

/// The test app's bundle id and package name.
const APP: &str = "com.studio.game";
