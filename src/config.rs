//! Typed, validated configuration.
//!
//! Layers, later wins: `config/default.toml` (compiled in, so the binary always has its
//! defaults), an optional `--config FILE`, a `.env` file, then `OFFER__<SECTION>__<KEY>`
//! environment variables. Every struct denies unknown fields, so a misspelt key stops the
//! start instead of being ignored.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use offer_domain::game::GenreTable;
use offer_domain::revenue_share::Plan;
use serde::Deserialize;

use crate::store::redis::target::RedisTarget;
use crate::store::sqlite::SyncMode;

/// The defaults, from the documented file.
const DEFAULT_TOML: &str = include_str!("../config/default.toml");
/// The shortest idempotency retention: a client retrying a money event within a month must
/// never count it twice.
pub const MIN_IDEMPOTENCY_RETENTION_DAYS: u32 = 30;
/// The genre calibration shipped with the engine.
const GENRES_TOML: &str = include_str!("../config/genres.toml");

/// The compiled-in plans table.
const PLANS_TOML: &str = include_str!("../config/plans.toml");

/// A configuration problem, reported as one line at start.
#[derive(Debug, thiserror::Error)]
#[error("configuration error: {0}")]
pub struct ConfigError(pub String);

/// The whole configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Listener and request handling.
    pub server: ServerSettings,
    /// Storage backend.
    pub store: StoreSettings,
    /// Credentials.
    pub auth: AuthSettings,
    /// Device sign-in of the authoring tool.
    pub device: DeviceSettings,
    /// The web dashboard: its sessions and sign-in limits.
    pub dashboard: DashboardSettings,
    /// Custom-page authoring: the preview builds.
    pub authoring: AuthoringSettings,
    /// Catalogue limits.
    pub catalogue: CatalogueSettings,
    /// Genre calibration source.
    pub calibration: CalibrationSettings,
    /// Offer serving.
    pub offers: OfferSettings,
    /// Players: how fast new ones may appear.
    pub players: PlayerSettings,
    /// WebSocket sessions.
    pub websocket: WebSocketSettings,
    /// The Prometheus endpoint.
    pub metrics: MetricsSettings,
    /// Economy figures.
    pub economy: EconomySettings,
    /// Revenue-share terms.
    pub billing: BillingSettings,
    /// Store receipts: Apple's root certificates and the public address of notifications.
    pub stores: StoresSettings,
    /// The audit trail: how long its records are kept.
    pub audit: AuditSettings,
}

/// `[audit]`: the audit trail.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSettings {
    /// Days a record is kept before the hourly sweep forgets it; at least 366, so a year of
    /// changes can always be read back.
    pub retention_days: u32,
}

/// `[stores]`: what receipt verification needs from the deployment.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoresSettings {
    /// PEM files of the Apple root certificates a StoreKit 2 signed transaction must chain
    /// to; each holds one or more certificates. Checked at start ([`Settings::app_store_roots`]).
    #[serde(default)]
    pub app_store_roots: Vec<PathBuf>,
    /// The engine's public address (`https://offers.example.com`), which the stores'
    /// notification URLs start with; empty: the scheme and host of
    /// `device.verification_uri`, the one public address the configuration has otherwise.
    #[serde(default)]
    pub public_base_url: String,
    /// Store signatures this node verifies at once, each on a thread of its own at the
    /// lowest CPU priority; 0 (the default): half the cores the process may run on, at least
    /// 1 ([`StoresSettings::verifiers`]).
    #[serde(default)]
    pub verify_workers: usize,
    /// Receipts that may wait for a verifier on this node (at least 1); a purchase arriving
    /// beyond that is answered 503 with `Retry-After`, so a flood of forged receipts cannot
    /// hold the threads the offer path needs.
    #[serde(default = "default_verify_queue")]
    pub verify_queue: usize,
}

impl StoresSettings {
    /// The verifier threads to start: `verify_workers`, or when 0, half the cores the
    /// process may run on (at least 1). Verifying an App Store chain takes several
    /// milliseconds of a core; at the lowest priority a verifier still shares its core's
    /// caches (and, on a machine whose cores are hyperthreads, its execution units) with the
    /// offer path, so a flood of forged receipts on as many verifiers as cores raised the
    /// offer path's p99 by half, on half as many by a quarter (`offer-load receipt-flood`).
    pub fn verifiers(&self) -> usize {
        if self.verify_workers > 0 {
            return self.verify_workers;
        }
        std::thread::available_parallelism()
            .map_or(1, |n| n.get() / 2)
            .max(1)
    }
}

/// A queue of 64 receipts: at 2 to 5 ms each, about a tenth of a second of waiting.
fn default_verify_queue() -> usize {
    64
}

/// The PEM armour of a certificate.
const PEM_BEGIN: &str = "-----BEGIN CERTIFICATE-----";
/// The end of a certificate's PEM armour.
const PEM_END: &str = "-----END CERTIFICATE-----";

/// `[billing]`: the operator's terms, never settable by a studio over the API.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BillingSettings {
    /// The share of uplift revenue, in percent, of a studio not listed in `rates`.
    pub default_rate_pct: f64,
    /// Each studio's contracted share of uplift revenue, in percent, by studio id.
    #[serde(default)]
    pub rates: std::collections::HashMap<String, f64>,
    /// The plans table; empty: the compiled-in `config/plans.toml`.
    pub plans_file: String,
    /// The monthly base fee in USD, on a plan priced by contract, of a studio not listed in
    /// `contract_fees_usd`.
    #[serde(default)]
    pub default_contract_fee_usd: f64,
    /// Each studio's contracted monthly base fee in USD on a plan priced by contract, by
    /// studio id.
    #[serde(default)]
    pub contract_fees_usd: std::collections::HashMap<String, f64>,
}

impl BillingSettings {
    /// The contracted rate of `studio_id`.
    pub fn rate_pct(&self, studio_id: &str) -> f64 {
        self.rates
            .get(studio_id)
            .copied()
            .unwrap_or(self.default_rate_pct)
    }

    /// The monthly base fee of `studio_id` on `plan`: the plan's own, or for a plan priced by
    /// contract the studio's contracted fee.
    pub fn base_fee_usd(&self, studio_id: &str, plan: Option<&Plan>) -> f64 {
        plan.and_then(|p| p.base_fee_usd).unwrap_or_else(|| {
            self.contract_fees_usd
                .get(studio_id)
                .copied()
                .unwrap_or(self.default_contract_fee_usd)
        })
    }
}

/// `[economy]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EconomySettings {
    /// How often each node recomputes the FSR quadrant of the games it serves.
    pub quadrant_interval_ms: u64,
    /// How long a node reuses a game's holdout comparison before computing it again: the
    /// comparison reads every player of the game, so reads that come in bursts (a dashboard
    /// refreshing, several staff looking) share one computation. 0 computes every read.
    pub figures_cache_ms: u64,
    /// How long a node keeps a game's derived per-player day caps before deriving them
    /// again from the players' day totals. 0 derives them for every money event (tests).
    pub day_caps_refresh_ms: u64,
    /// Share of simulation trials whose projected FSR must land in the healthy range for
    /// the simulation to pass.
    pub simulation_pass_threshold: f64,
}

/// `[metrics]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsSettings {
    /// Bearer token `/metrics` requires; empty: open on loopback only, closed otherwise.
    pub token: String,
}

/// `[server]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Listen address.
    pub bind: SocketAddr,
    /// Drain deadline on SIGTERM.
    pub shutdown_grace_s: u64,
    /// Actor shards; 0 = one per core.
    pub shards: usize,
    /// Largest REST body.
    pub max_body_bytes: usize,
    /// Most client connections open at once (capped by the open-file limit at start).
    pub max_connections: usize,
    /// Connections past `max_connections` kept for the probes, `/metrics`, the dashboard and
    /// the studio's API, each serving one request, so a node full of sockets still answers
    /// its operators and its liveness probe.
    pub reserved_connections: usize,
    /// Time to receive a whole request head.
    pub header_timeout_ms: u64,
    /// Time to receive a whole request body after its head.
    pub body_timeout_ms: u64,
    /// Time a kept-alive connection may wait for its next request, or stall an answer.
    pub idle_timeout_ms: u64,
    /// Largest request head (request line and headers).
    pub max_header_bytes: usize,
}

/// `[store]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreSettings {
    /// The embedded store's SQLite file (its folder is created on first start), or
    /// `:memory:` for a store that keeps nothing on exit.
    pub path: PathBuf,
    /// When the embedded store's acknowledged writes are on disk.
    pub sync: SyncMode,
    /// How long the embedded store remembers a money event's `tx_id`, counted from when the
    /// engine received it; a retry after that counts again.
    pub idempotency_retention_days: u32,
    /// How many days the embedded store keeps raw ledger lines, counted from when the engine
    /// received them; 0 keeps them forever. Day aggregates and per-player sums are kept
    /// regardless.
    pub ledger_retention_days: u32,
    /// Empty for the embedded store; otherwise one Redis or a Redis Cluster, in one of the
    /// forms of [`RedisTarget`].
    pub redis_url: String,
    /// Redis key prefix.
    pub key_prefix: String,
    /// Per-call deadline.
    pub timeout_ms: u64,
}

impl StoreSettings {
    /// The value of `path` that keeps the embedded store in memory.
    pub const IN_MEMORY: &str = ":memory:";

    /// Whether the embedded store keeps nothing on disk.
    pub fn in_memory(&self) -> bool {
        self.path.as_os_str() == Self::IN_MEMORY
    }
}

/// `[auth]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    /// HS256 secret; empty = the development secret of `dev_secret_file`.
    pub jwt_secret: String,
    /// Required `iss`.
    pub jwt_issuer: String,
    /// Required `aud`.
    pub jwt_audience: String,
    /// SDK and authoring key prefix.
    pub key_prefix: String,
    /// Authoring key lifetime.
    pub authoring_key_ttl_days: i64,
    /// Studio of the printed development token.
    pub dev_studio: String,
    /// Where a development run keeps its generated secret (when `jwt_secret` is empty).
    pub dev_secret_file: std::path::PathBuf,
}

/// `[device]`: device sign-in (RFC 8628) of the authoring tool, and its rate limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceSettings {
    /// How long a user code can be approved and its device code polled, in seconds.
    pub code_ttl_s: std::num::NonZeroU32,
    /// The least seconds between two polls of one device code at first.
    pub poll_interval_s: std::num::NonZeroU32,
    /// The dashboard page where a person enters the user code (`verification_uri`).
    pub verification_uri: String,
    /// Sign-ins started per client IP address per minute.
    pub starts_per_ip_per_minute: std::num::NonZeroU32,
    /// Polls per client IP address per minute.
    pub polls_per_ip_per_minute: std::num::NonZeroU32,
    /// Approvals and denials (right or wrong user code) per dashboard user per minute.
    pub attempts_per_user_per_minute: std::num::NonZeroU32,
    /// Approvals and denials per minute on one node, every user together.
    pub attempts_per_minute: std::num::NonZeroU32,
}

/// `[dashboard]`: sign-in sessions of the web dashboard and the limits on signing in.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DashboardSettings {
    /// How long a dashboard session lasts after sign-in, in minutes.
    pub session_ttl_minutes: std::num::NonZeroU32,
    /// Mark the session cookie `Secure` (set it when the dashboard is served over https).
    pub secure_cookie: bool,
    /// Sign-in attempts per client IP address per minute.
    pub sign_ins_per_ip_per_minute: std::num::NonZeroU32,
    /// Sign-in attempts per client IP address and email address pair per minute.
    pub sign_ins_per_ip_and_email_per_minute: std::num::NonZeroU32,
    /// Sign-in attempts per email address per hour, from every address together.
    pub sign_ins_per_email_per_hour: std::num::NonZeroU32,
}

/// `[authoring]`: the custom-page preview builds of this node.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthoringSettings {
    /// Previews built at once on this node, each on a blocking thread; 0 for half the
    /// cores (at least one), so renders never take every core from the offer path.
    pub preview_workers: usize,
    /// Previews waiting for a worker on this node; past it, a request is refused with 503.
    pub preview_queue: std::num::NonZeroUsize,
    /// Previews one game may have queued or building on this node; past it, 429.
    pub preview_per_game: std::num::NonZeroUsize,
    /// Previews one authoring key (or dashboard user) may have queued or building on this
    /// node; past it, 429.
    pub preview_per_key: std::num::NonZeroUsize,
    /// Longest one render (one phone size) of a preview may run, in milliseconds.
    pub preview_render_ms: std::num::NonZeroU64,
    /// Most memory one render may allocate, in MiB.
    pub preview_memory_mb: std::num::NonZeroU64,
    /// How long a preview's screenshots are served after its build, in seconds.
    pub screenshot_ttl_s: std::num::NonZeroU64,
}

/// `[catalogue]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueSettings {
    /// Largest asset upload.
    pub max_asset_bytes: usize,
    /// Largest width and height of uploaded art, in pixels.
    pub max_image_side_px: u32,
}

/// `[calibration]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationSettings {
    /// Path of a genres file; empty = the compiled-in copy.
    pub genres_file: String,
}

/// `[offers]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfferSettings {
    /// Offer validity in seconds.
    pub ttl_s: u32,
    /// Idle lifetime of a session without a socket.
    pub session_idle_s: u64,
    /// Decisions kept per node for inspection.
    pub decision_log_capacity: usize,
    /// How often each node adds what the L1 model learned to the store's shared totals and
    /// reads them back, in milliseconds.
    pub model_sync_ms: u64,
    /// Seconds a pending approval waits for a decision before it expires.
    pub approval_expiry_s: u32,
    /// How long the store keeps a decision record for every node to show.
    pub decision_ttl_s: u64,
    /// Decisions waiting to be written to the store, at most; past it a decision is shown
    /// by its own node only.
    pub decision_outbox: usize,
    /// In Shadow mode, the silent L1/L2 pick is computed and recorded for one decision in
    /// this many, drawn at random: it is never served, and the L1 sampling it needs would
    /// otherwise be most of every decision's cost. 1 records every decision's pick.
    pub shadow_every: std::num::NonZeroU32,
    /// Seeds the L1 learner's exploration, for reproducible simulations (the arena, tests):
    /// with it, a process that decides one offer at a time draws the same numbers every run.
    /// Absent in production: each thread's sampler is seeded from the OS.
    #[serde(default)]
    pub sampler_seed: Option<u64>,
}

/// `[players]`: the limit on new player ids.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerSettings {
    /// New player ids one SDK key may open sessions for per minute on one node (and the
    /// burst): a script holding the shipped key cannot mint players faster.
    pub new_per_minute_per_key: std::num::NonZeroU32,
}

/// `[websocket]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSocketSettings {
    /// Outbound queue length per session.
    pub outbound_queue: usize,
    /// Socket read buffer.
    pub read_buffer_bytes: usize,
    /// Socket write buffer.
    pub write_buffer_bytes: usize,
    /// Largest frame.
    pub max_frame_bytes: usize,
    /// Ping interval.
    pub ping_interval_s: u64,
    /// Silence before close.
    pub idle_timeout_s: u64,
    /// Time a new socket has to send `hello` before it is closed.
    pub hello_timeout_s: u64,
    /// Most sockets open at once from one client address (an IPv6 client's /64 counts as
    /// one address), so one client cannot take every connection of the node.
    pub max_sockets_per_address: usize,
    /// Most sockets open at once with one SDK key, so one game's key (public in every copy
    /// of the game) cannot take every connection of the node from the other games.
    pub max_sockets_per_key: usize,
}

impl Settings {
    /// Loads every layer. `file` is the `--config` argument.
    pub fn load(file: Option<&Path>) -> Result<Self, ConfigError> {
        // A missing .env is normal; a malformed one is an error worth reporting.
        match dotenvy::dotenv() {
            Ok(_) => {}
            Err(e) if e.not_found() => {}
            Err(e) => return Err(ConfigError(format!(".env: {e}"))),
        }
        let mut builder = config::Config::builder().add_source(config::File::from_str(
            DEFAULT_TOML,
            config::FileFormat::Toml,
        ));
        if let Some(path) = file {
            builder = builder.add_source(config::File::from(path).required(true));
        }
        builder = builder.add_source(
            config::Environment::with_prefix("OFFER")
                .prefix_separator("__")
                .separator("__")
                .try_parsing(true),
        );
        let settings: Settings = builder
            .build()
            .and_then(config::Config::try_deserialize)
            .map_err(|e| ConfigError(e.to_string()))?;
        settings.validate()?;
        Ok(settings)
    }

    /// Cross-field checks serde cannot express.
    fn validate(&self) -> Result<(), ConfigError> {
        if self.offers.model_sync_ms < 100 {
            return Err(ConfigError(
                "offers.model_sync_ms must be at least 100".into(),
            ));
        }
        if self.audit.retention_days < 366 {
            return Err(ConfigError(
                "audit.retention_days must be at least 366 (a year of changes)".into(),
            ));
        }
        if self.offers.approval_expiry_s == 0 {
            return Err(ConfigError(
                "offers.approval_expiry_s must be at least 1".into(),
            ));
        }
        let p = &self.auth.key_prefix;
        if !(2..=16).contains(&p.len())
            || !p
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        {
            return Err(ConfigError(format!(
                "auth.key_prefix `{p}` must match [a-z0-9]{{2,16}}"
            )));
        }
        if !self.auth.jwt_secret.is_empty() && self.auth.jwt_secret.len() < 32 {
            return Err(ConfigError(
                "auth.jwt_secret must be at least 32 bytes (or empty for a development run)".into(),
            ));
        }
        let a = &self.authoring;
        if a.preview_workers > 256
            || a.preview_queue.get() > 100_000
            || a.screenshot_ttl_s.get() > 31_536_000
        {
            return Err(ConfigError(
                "authoring.preview_workers must be at most 256, authoring.preview_queue at most \
                 100000 and authoring.screenshot_ttl_s at most 31536000 (a year)"
                    .into(),
            ));
        }
        if a.preview_per_game.get() > 100_000
            || a.preview_per_key.get() > 100_000
            || a.preview_render_ms.get() > 60_000
            || a.preview_memory_mb.get() > 4096
        {
            return Err(ConfigError(
                "authoring.preview_per_game and authoring.preview_per_key must be at most \
                 100000, authoring.preview_render_ms at most 60000 and \
                 authoring.preview_memory_mb at most 4096"
                    .into(),
            ));
        }
        if self.dashboard.session_ttl_minutes.get() > 43_200 {
            return Err(ConfigError(
                "dashboard.session_ttl_minutes must be at most 43200 (30 days)".into(),
            ));
        }
        if self.auth.authoring_key_ttl_days <= 0 {
            return Err(ConfigError(
                "auth.authoring_key_ttl_days must be positive".into(),
            ));
        }
        if !(100..=86_400_000).contains(&self.economy.quadrant_interval_ms) {
            return Err(ConfigError(
                "economy.quadrant_interval_ms must be between 100 and 86400000 (one day)".into(),
            ));
        }
        if self.economy.figures_cache_ms > 3_600_000 {
            return Err(ConfigError(
                "economy.figures_cache_ms must be at most 3600000 (one hour)".into(),
            ));
        }
        if self.economy.day_caps_refresh_ms > 86_400_000 {
            return Err(ConfigError(
                "economy.day_caps_refresh_ms must be at most 86400000 (one day)".into(),
            ));
        }
        if !(0.0..=1.0).contains(&self.economy.simulation_pass_threshold) {
            return Err(ConfigError(
                "economy.simulation_pass_threshold must be between 0 and 1".into(),
            ));
        }
        if self.store.timeout_ms == 0 || self.store.timeout_ms > 2000 {
            return Err(ConfigError(
                "store.timeout_ms must be between 1 and 2000 (every answer comes within 2 s)"
                    .into(),
            ));
        }
        if self.store.idempotency_retention_days < MIN_IDEMPOTENCY_RETENTION_DAYS {
            return Err(ConfigError(format!(
                "store.idempotency_retention_days must be at least \
                 {MIN_IDEMPOTENCY_RETENTION_DAYS} (a client retrying a money event later would \
                 count it twice)"
            )));
        }
        let ledger_days = self.store.ledger_retention_days;
        if ledger_days != 0 && ledger_days < self.store.idempotency_retention_days {
            return Err(ConfigError(
                "store.ledger_retention_days must be 0 (keep forever) or at least \
                 store.idempotency_retention_days (an idempotency record points at its ledger \
                 line)"
                    .into(),
            ));
        }
        if self.offers.decision_ttl_s == 0 || self.offers.decision_outbox == 0 {
            return Err(ConfigError(
                "offers.decision_ttl_s and offers.decision_outbox must be positive".into(),
            ));
        }
        if self.store.path.as_os_str().is_empty() {
            return Err(ConfigError(
                "store.path must name a file (or be `:memory:` to keep nothing on exit)".into(),
            ));
        }
        if !self.store.redis_url.is_empty() {
            RedisTarget::parse(&self.store.redis_url)
                .map_err(|err| ConfigError(format!("store.redis_url: {err}")))?;
        }
        if self.store.key_prefix.contains(['{', '}']) {
            return Err(ConfigError(
                "store.key_prefix must not contain `{` or `}`: the braces of a Redis key pick \
                 its cluster hash slot, and a game's keys must follow its own id"
                    .into(),
            ));
        }
        let server = &self.server;
        if server.max_connections == 0
            || server.reserved_connections == 0
            || server.header_timeout_ms == 0
            || server.body_timeout_ms == 0
            || server.idle_timeout_ms == 0
        {
            return Err(ConfigError(
                "server.max_connections, reserved_connections, header_timeout_ms, body_timeout_ms and idle_timeout_ms must be positive"
                    .into(),
            ));
        }
        if server.max_header_bytes < 8192 {
            return Err(ConfigError(
                "server.max_header_bytes must be at least 8192".into(),
            ));
        }
        if self.websocket.max_sockets_per_address == 0 || self.websocket.max_sockets_per_key == 0 {
            return Err(ConfigError(
                "websocket.max_sockets_per_address and max_sockets_per_key must be positive".into(),
            ));
        }
        if self.websocket.outbound_queue == 0 || self.websocket.max_frame_bytes < 1024 {
            return Err(ConfigError(
                "websocket.outbound_queue must be positive and websocket.max_frame_bytes at least 1024"
                    .into(),
            ));
        }
        let rates =
            std::iter::once(&self.billing.default_rate_pct).chain(self.billing.rates.values());
        for rate in rates {
            if !(0.0..=100.0).contains(rate) {
                return Err(ConfigError(
                    "billing rates must be percentages from 0 to 100".into(),
                ));
            }
        }
        let fees = std::iter::once(&self.billing.default_contract_fee_usd)
            .chain(self.billing.contract_fees_usd.values());
        for fee in fees {
            if !(fee.is_finite() && *fee >= 0.0) {
                return Err(ConfigError(
                    "billing contract fees must be amounts in USD of 0 or more".into(),
                ));
            }
        }
        self.plans()?;
        self.app_store_roots()?;
        let base = &self.stores.public_base_url;
        if !base.is_empty()
            && (!(base.starts_with("https://") || base.starts_with("http://"))
                || base.contains(['?', '#']))
        {
            return Err(ConfigError(
                "stores.public_base_url must be an http(s) address without a query or fragment \
                 (or empty)"
                    .into(),
            ));
        }
        self.genres().map(|_| ())
    }

    /// The DER bytes of every certificate of `stores.app_store_roots`, in file order: each
    /// file must be readable and hold at least one PEM `CERTIFICATE` whose body is base64 of
    /// a DER structure. Validated at start, so a later call fails only if a file changed.
    pub fn app_store_roots(&self) -> Result<Vec<Vec<u8>>, ConfigError> {
        let mut certificates = Vec::new();
        for path in &self.stores.app_store_roots {
            let fail = |why: &str| {
                ConfigError(format!(
                    "stores.app_store_roots `{}`: {why}",
                    path.display()
                ))
            };
            let text = std::fs::read_to_string(path).map_err(|e| fail(&e.to_string()))?;
            let found = pem_certificates(&text).map_err(|why| fail(&why))?;
            if found.is_empty() {
                return Err(fail("no PEM CERTIFICATE in the file"));
            }
            certificates.extend(found);
        }
        Ok(certificates)
    }

    /// The engine's public address, without a trailing slash: `stores.public_base_url`, or
    /// the scheme and host of `device.verification_uri`.
    pub fn public_base_url(&self) -> &str {
        let base = if self.stores.public_base_url.is_empty() {
            let uri = &self.device.verification_uri;
            let host_from = uri.find("://").map_or(0, |i| i + 3);
            uri[host_from..]
                .find('/')
                .map_or(uri.as_str(), |end| &uri[..host_from + end])
        } else {
            &self.stores.public_base_url
        };
        base.trim_end_matches('/')
    }

    /// The plans table, validated: at least one plan, limits rising, only the last unlimited.
    pub fn plans(&self) -> Result<Vec<Plan>, ConfigError> {
        #[derive(Deserialize)]
        struct PlansFile {
            plans: Vec<Plan>,
        }
        let text = if self.billing.plans_file.is_empty() {
            PLANS_TOML.to_owned()
        } else {
            std::fs::read_to_string(&self.billing.plans_file).map_err(|e| {
                ConfigError(format!(
                    "billing.plans_file `{}`: {e}",
                    self.billing.plans_file
                ))
            })?
        };
        let file: PlansFile = config::Config::builder()
            .add_source(config::File::from_str(&text, config::FileFormat::Toml))
            .build()
            .and_then(config::Config::try_deserialize)
            .map_err(|e| ConfigError(format!("plans: {e}")))?;
        let limits: Vec<Option<u64>> = file.plans.iter().map(|p| p.max_monthly_players).collect();
        let rising = limits
            .windows(2)
            .all(|w| matches!(w, [Some(a), Some(b)] if a < b) || matches!(w, [Some(_), None]));
        if limits.is_empty() || !rising {
            return Err(ConfigError(
                "plans: at least one plan, limits rising, only the last without a limit".into(),
            ));
        }
        if file
            .plans
            .iter()
            .filter_map(|p| p.base_fee_usd)
            .any(|fee| !(fee.is_finite() && fee >= 0.0))
        {
            return Err(ConfigError(
                "plans: a base_fee_usd is an amount in USD of 0 or more".into(),
            ));
        }
        Ok(file.plans)
    }

    /// The genre calibration table, validated (min < max, both positive).
    pub fn genres(&self) -> Result<GenreTable, ConfigError> {
        let text = if self.calibration.genres_file.is_empty() {
            GENRES_TOML.to_owned()
        } else {
            std::fs::read_to_string(&self.calibration.genres_file).map_err(|e| {
                ConfigError(format!(
                    "calibration.genres_file `{}`: {e}",
                    self.calibration.genres_file
                ))
            })?
        };
        let table: GenreTable =
            toml_table(&text).map_err(|e| ConfigError(format!("genres: {e}")))?;
        for (name, g) in &table {
            if !(g.healthy_fsr_min > 0.0 && g.healthy_fsr_min < g.healthy_fsr_max) {
                return Err(ConfigError(format!(
                    "genre `{name}`: healthy_fsr_min must be positive and below healthy_fsr_max"
                )));
            }
        }
        if table.is_empty() {
            return Err(ConfigError("genres: the calibration table is empty".into()));
        }
        Ok(table)
    }
}

/// The DER bodies of the PEM certificates in `text`; `Err` for armour that does not close or
/// a body that is not base64 of a DER structure.
fn pem_certificates(text: &str) -> Result<Vec<Vec<u8>>, String> {
    use base64::Engine;
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(PEM_BEGIN) {
        let after = &rest[start + PEM_BEGIN.len()..];
        let end = after
            .find(PEM_END)
            .ok_or_else(|| "a PEM CERTIFICATE is not closed".to_owned())?;
        let body: String = after[..end]
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body)
            .map_err(|e| format!("a PEM CERTIFICATE body is not base64: {e}"))?;
        // A certificate is a DER SEQUENCE.
        if der.first() != Some(&0x30) {
            return Err("a PEM CERTIFICATE body is not a DER certificate".into());
        }
        out.push(der);
        rest = &after[end + PEM_END.len()..];
    }
    Ok(out)
}

fn toml_table(text: &str) -> Result<GenreTable, config::ConfigError> {
    config::Config::builder()
        .add_source(config::File::from_str(text, config::FileFormat::Toml))
        .build()?
        .try_deserialize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_store_roots_are_pem_certificates() {
        // The armour around any DER SEQUENCE passes; the lead's receipts crate parses it.
        let pem = format!("{PEM_BEGIN}\nMAMCAQE=\n{PEM_END}\n{PEM_BEGIN}\nMAA=\n{PEM_END}\n");
        assert_eq!(
            pem_certificates(&pem),
            Ok(vec![vec![0x30, 3, 2, 1, 1], vec![0x30, 0]])
        );
        assert_eq!(pem_certificates("no armour"), Ok(vec![]));
        assert!(pem_certificates(&format!("{PEM_BEGIN}\nMAA=\n")).is_err());
        assert!(pem_certificates(&format!("{PEM_BEGIN}\n!!\n{PEM_END}")).is_err());
        assert!(pem_certificates(&format!("{PEM_BEGIN}\nAQID\n{PEM_END}")).is_err());

        let dir = std::env::temp_dir().join(format!("offer-roots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder");
        let good = dir.join("root.pem");
        std::fs::write(&good, &pem).expect("write");
        let mut settings = Settings::load(None).expect("defaults");
        settings.stores.app_store_roots = vec![good];
        assert_eq!(settings.app_store_roots().expect("reads").len(), 2);
        settings
            .stores
            .app_store_roots
            .push(dir.join("missing.pem"));
        assert!(
            settings.validate().is_err(),
            "a missing file stops the start"
        );
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn the_public_base_url_defaults_to_the_dashboards_origin() {
        let mut settings = Settings::load(None).expect("defaults");
        settings.device.verification_uri = "https://offers.example.com/dashboard/device".into();
        assert_eq!(settings.public_base_url(), "https://offers.example.com");
        settings.stores.public_base_url = "https://api.example.com/".into();
        assert_eq!(settings.public_base_url(), "https://api.example.com");
    }
}
