//! The state every HTTP handler and WebSocket task receives: the services, the credential
//! checks, the metrics and the WebSocket hub. Nothing below the transport takes it: services
//! receive [`Services`] only.

use std::ops::Deref;
use std::sync::Arc;

use axum::extract::FromRef;

use crate::metrics::Metrics;
use crate::service::Services;
use crate::service::studio::keys::AuthService;
use crate::throttle::device::Throttle;
use crate::throttle::new_players::NewPlayers;
use crate::throttle::sign_in::SignInThrottle;
use crate::ws::WsContext;
use crate::ws::hub::Hub;

/// Cheap to clone: one `Arc` around everything.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

/// What [`AppState`] holds.
pub struct Inner {
    /// The use cases.
    pub services: Services,
    /// Credential checks and this node's key cache.
    pub auth: Arc<AuthService>,
    /// Request counters and histograms.
    pub metrics: Metrics,
    /// What only sockets need: the shutdown signal and the configuration last announced.
    pub hub: Arc<Hub>,
    /// This node's rate limits of device sign-in.
    pub throttle: Throttle,
    /// This node's rate limits of dashboard sign-in.
    pub sign_ins: SignInThrottle,
    /// This node's limit on new player ids per SDK key.
    pub new_players: Arc<NewPlayers>,
}

impl AppState {
    /// Wraps the parts.
    pub fn new(services: Services, auth: AuthService, metrics: Metrics) -> Self {
        let throttle = Throttle::new(&services.settings.device);
        let sign_ins = SignInThrottle::new(&services.settings.dashboard);
        let new_players = Arc::new(NewPlayers::new(&services.settings.players));
        Self(Arc::new(Inner {
            new_players,
            throttle,
            sign_ins,
            services,
            auth: Arc::new(auth),
            metrics,
            hub: Arc::new(Hub::default()),
        }))
    }
}

impl Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

/// Lets the credential extractors find the [`AuthService`] in this state.
impl FromRef<AppState> for Arc<AuthService> {
    fn from_ref(state: &AppState) -> Self {
        state.auth.clone()
    }
}

/// The part of the state the WebSocket gateway works with.
impl FromRef<AppState> for WsContext {
    fn from_ref(state: &AppState) -> Self {
        Self {
            services: state.services.clone(),
            auth: state.auth.clone(),
            hub: state.hub.clone(),
            connections: state.metrics.connections().clone(),
            new_players: state.new_players.clone(),
        }
    }
}
