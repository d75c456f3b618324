//! The load driver: many keep-alive HTTP/1.1 connections, one task and one request in flight
//! each, posting `POST /v1/sdk/offers/next` round-robin over the sessions with the trigger
//! event rotating over `session_start`, `currency_low`, `first_loss` and `boss_raid`.
//!
//! Request bodies are built once before the run, so the client spends its share of the
//! machine's two cores on HTTP only. Every connection keeps its own counters and histogram;
//! they are merged when the run ends. Latency is from sending the request to having read the
//! whole response body, in microseconds.
//!
//! A run is closed-loop (each connection sends its next request as soon as the last answer
//! is read: the maximum rate) or paced ([`Pace`]: each connection's requests are scheduled
//! at a fixed rate, as wrk2 does). A paced request that could not be sent on time because
//! the previous answer was late is timed from its scheduled send time, so the wait it spent
//! queued behind a slow answer counts (no coordinated omission); one sent on time is timed
//! from its send, so the client's own timer resolution is not charged to the server.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use hdrhistogram::Histogram;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper_util::rt::TokioIo;
use serde::Deserialize;
use serde::de::IgnoredAny;
use tokio::net::TcpStream;
use uuid::Uuid;

/// The trigger events the driver rotates over.
pub const EVENTS: [&str; 4] = ["session_start", "currency_low", "first_loss", "boss_raid"];

/// The offer endpoint's path.
pub const OFFER_PATH: &str = "/v1/sdk/offers/next";

/// Highest latency the histogram holds (60 s, in microseconds); longer ones are clamped.
const MAX_LATENCY_US: u64 = 60_000_000;

/// An `http://host:port` target.
#[derive(Debug, Clone)]
pub struct Target {
    authority: String,
}

impl Target {
    /// Parses `http://host:port` (a trailing slash is allowed; https is not supported).
    pub fn parse(url: &str) -> Result<Self> {
        let Some(rest) = url.strip_prefix("http://") else {
            bail!("target `{url}` must start with http://");
        };
        let authority = rest.trim_end_matches('/');
        if authority.is_empty() || authority.contains('/') {
            bail!("target `{url}` must be http://host:port with no path");
        }
        Ok(Self {
            authority: authority.to_owned(),
        })
    }

    /// The target of a local socket address.
    pub fn local(addr: SocketAddr) -> Self {
        Self {
            authority: addr.to_string(),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "http://{}", self.authority)
    }
}

/// Everything a run needs, prepared up front: the address, the headers, every body.
#[derive(Debug)]
pub struct Plan {
    addr: SocketAddr,
    host: HeaderValue,
    auth: HeaderValue,
    sessions: usize,
    /// `bodies[session * EVENTS.len() + event]`.
    bodies: Vec<Bytes>,
}

impl Plan {
    /// Resolves the target and builds every request body (sessions x events).
    pub fn new(target: &Target, key: &str, sessions: &[Uuid]) -> Result<Self> {
        if sessions.is_empty() {
            bail!("no sessions to drive");
        }
        let addr = std::net::ToSocketAddrs::to_socket_addrs(&target.authority)
            .with_context(|| format!("resolving {target}"))?
            .next()
            .with_context(|| format!("{target} resolves to no address"))?;
        let host = HeaderValue::from_str(&target.authority).context("target as a Host header")?;
        let auth =
            HeaderValue::from_str(&format!("Bearer {key}")).context("key as a header value")?;
        let bodies = sessions
            .iter()
            .flat_map(|session| {
                EVENTS.iter().map(move |event| {
                    let body = serde_json::json!({
                        "session_id": session,
                        "trigger_context": {"event_type": event},
                    });
                    Bytes::from(body.to_string())
                })
            })
            .collect();
        Ok(Self {
            addr,
            host,
            auth,
            sessions: sessions.len(),
            bodies,
        })
    }

    /// The body of the `k`-th request overall: session `k mod n`, and an event that moves on
    /// by one each request and each pass over the sessions, so every session sees every event.
    fn body(&self, k: usize) -> &Bytes {
        let session = k % self.sessions;
        let event = (k + k / self.sessions) % EVENTS.len();
        &self.bodies[session * EVENTS.len() + event]
    }
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Stats {
    /// `200` answers (offers).
    pub ok: u64,
    /// `204` answers (no offer).
    pub no_offer: u64,
    /// `Offer-Outcome` header values of the `204` answers.
    pub outcomes: BTreeMap<String, u64>,
    /// Other statuses.
    pub other: BTreeMap<u16, u64>,
    /// `200` answers whose body was not an offer (one body per connection is checked).
    pub invalid: u64,
    /// Transport errors (refused, reset, closed mid-request).
    pub errors: u64,
    /// The first transport error, for the report.
    pub first_error: Option<String>,
    /// Latency of every answered request, in microseconds.
    pub latency_us: Histogram<u64>,
    /// Wall time of the run, from the start until the last connection stopped.
    pub elapsed: Duration,
}

impl Stats {
    /// Empty counters.
    pub fn new() -> Result<Self> {
        Ok(Self {
            ok: 0,
            no_offer: 0,
            outcomes: BTreeMap::new(),
            other: BTreeMap::new(),
            invalid: 0,
            errors: 0,
            first_error: None,
            latency_us: Histogram::new_with_bounds(1, MAX_LATENCY_US, 3)
                .context("creating the latency histogram")?,
            elapsed: Duration::ZERO,
        })
    }

    /// Adds another run's (or connection's) counters; wall times add up too.
    pub fn merge(&mut self, other: &Stats) -> Result<()> {
        self.ok += other.ok;
        self.no_offer += other.no_offer;
        for (k, v) in &other.outcomes {
            *self.outcomes.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.other {
            *self.other.entry(*k).or_default() += v;
        }
        self.invalid += other.invalid;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
        self.latency_us
            .add(&other.latency_us)
            .context("merging latency histograms")?;
        self.elapsed += other.elapsed;
        Ok(())
    }

    /// Requests that got an HTTP answer.
    pub fn answered(&self) -> u64 {
        self.ok + self.no_offer + self.other.values().sum::<u64>()
    }

    /// Answered requests per second of wall time.
    pub fn rps(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.answered() as f64 / secs
        } else {
            0.0
        }
    }

    /// A latency quantile in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        self.latency_us.value_at_quantile(q) as f64 / 1000.0
    }

    /// Share of answered requests in percent.
    pub fn share(&self, n: u64) -> f64 {
        let answered = self.answered();
        if answered == 0 {
            0.0
        } else {
            100.0 * n as f64 / answered as f64
        }
    }

    /// The status and error counts on one line.
    pub fn status_line(&self) -> String {
        let mut line = format!(
            "200 {} ({:.1}%), 204 {} ({:.1}%)",
            self.ok,
            self.share(self.ok),
            self.no_offer,
            self.share(self.no_offer)
        );
        if !self.outcomes.is_empty() {
            let outcomes: Vec<String> = self
                .outcomes
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            line.push_str(&format!(" [{}]", outcomes.join(", ")));
        }
        for (status, n) in &self.other {
            line.push_str(&format!(", {status} {n}"));
        }
        if self.invalid > 0 {
            line.push_str(&format!(", {} invalid offer bodies", self.invalid));
        }
        if self.errors > 0 {
            line.push_str(&format!(", {} transport errors", self.errors));
            if let Some(e) = &self.first_error {
                line.push_str(&format!(" (first: {e})"));
            }
        }
        line
    }

    /// Prints a run's report (the `offers` subcommand).
    pub fn print_report(&self, label: &str) {
        println!(
            "{label}: {} answered in {:.2} s = {:.0} rps",
            self.answered(),
            self.elapsed.as_secs_f64(),
            self.rps()
        );
        println!("  {}", self.status_line());
        println!(
            "  latency ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
            self.quantile_ms(0.50),
            self.quantile_ms(0.90),
            self.quantile_ms(0.99),
            self.quantile_ms(0.999),
            self.latency_us.max() as f64 / 1000.0
        );
    }

    fn error(&mut self, e: impl fmt::Display) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(e.to_string());
        }
    }
}

/// The part of an offer checked once per connection.
#[derive(Deserialize)]
struct OfferCheck {
    #[serde(rename = "offer_id")]
    _offer_id: Uuid,
    fallback_level: u8,
    items: Vec<IgnoredAny>,
    #[serde(rename = "price_cents")]
    _price_cents: i64,
}

fn is_offer(body: &[u8]) -> bool {
    serde_json::from_slice::<OfferCheck>(body)
        .is_ok_and(|o| (1..=4).contains(&o.fallback_level) && !o.items.is_empty())
}

/// A fixed request rate, spread evenly over the connections.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    /// Requests per second over all connections.
    pub rps: f64,
}

/// When a connection sends its requests.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    /// The first request's scheduled send time.
    first: Instant,
    /// Time between two requests of this connection; `None` is closed-loop.
    interval: Option<Duration>,
}

impl Schedule {
    /// The scheduled send time of this connection's `n`-th request (closed-loop: none).
    fn at(&self, n: u32) -> Option<Instant> {
        self.interval.map(|i| self.first + i * n)
    }
}

/// Drives the plan with `connections` connections for `duration` and merges what they saw
/// (closed-loop: the maximum rate).
pub async fn run(plan: &Arc<Plan>, connections: usize, duration: Duration) -> Result<Stats> {
    drive(plan, connections, duration, None).await
}

/// Drives the plan at a fixed rate for `duration` (see [`Pace`]).
pub async fn run_paced(
    plan: &Arc<Plan>,
    connections: usize,
    duration: Duration,
    pace: Pace,
) -> Result<Stats> {
    if !(pace.rps.is_finite() && pace.rps > 0.0) {
        bail!("a paced run needs a positive rate, not {}", pace.rps);
    }
    drive(plan, connections, duration, Some(pace)).await
}

async fn drive(
    plan: &Arc<Plan>,
    connections: usize,
    duration: Duration,
    pace: Option<Pace>,
) -> Result<Stats> {
    if connections == 0 {
        bail!("--connections must be at least 1");
    }
    let start = Instant::now();
    let deadline = start + duration;
    // Each connection sends every `connections / rps` seconds; their first sends are
    // staggered over one interval, so the requests arrive evenly rather than in waves.
    let interval = pace.map(|p| Duration::from_secs_f64(connections as f64 / p.rps));
    let tasks: Vec<_> = (0..connections)
        .map(|c| {
            let plan = Arc::clone(plan);
            let schedule = Schedule {
                first: start
                    + interval.map_or(Duration::ZERO, |i| i * c as u32 / connections as u32),
                interval,
            };
            tokio::spawn(async move { connection(&plan, c, connections, deadline, schedule).await })
        })
        .collect();
    let mut total = Stats::new()?;
    for task in tasks {
        let stats = task.await.context("a connection task failed")??;
        total.merge(&stats)?;
    }
    total.elapsed = start.elapsed();
    Ok(total)
}

/// How a connection's work ended.
pub(crate) enum End {
    /// The work is over (the deadline passed, or the caller stopped it).
    Done,
    /// The request loop failed; reconnect.
    Failed(anyhow::Error),
    /// The server closed the connection; reconnect.
    Closed(Option<hyper::Error>),
}

impl End {
    /// Whether the connection's work is over; otherwise the failure goes to `count` (the
    /// caller's error count) and the caller connects again.
    pub(crate) fn finished(self, mut count: impl FnMut(&dyn fmt::Display)) -> bool {
        match self {
            End::Done => return true,
            End::Failed(e) => count(&format_args!("{e:#}")),
            End::Closed(Some(e)) => count(&e),
            End::Closed(None) => count(&"server closed the connection"),
        }
        false
    }
}

/// One connection: requests `first`, `first + stride`, ... until the deadline, at the
/// schedule's times when it has them; reconnects (counting an error) when the server closes
/// or resets it.
async fn connection(
    plan: &Plan,
    first: usize,
    stride: usize,
    deadline: Instant,
    schedule: Schedule,
) -> Result<Stats> {
    let mut stats = Stats::new()?;
    let mut k = first;
    let mut n: u32 = 0;
    let mut checked = false;
    while Instant::now() < deadline {
        let stream = match TcpStream::connect(plan.addr).await {
            Ok(stream) => stream,
            Err(e) => {
                stats.error(format_args!("connect {}: {e}", plan.addr));
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        stream.set_nodelay(true).context("setting TCP_NODELAY")?;
        let (mut sender, conn) =
            match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
                Ok(pair) => pair,
                Err(e) => {
                    stats.error(e);
                    continue;
                }
            };
        let work = async {
            let mut previous_done = Instant::now();
            loop {
                if Instant::now() >= deadline {
                    return Ok::<(), anyhow::Error>(());
                }
                let scheduled = schedule.at(n);
                n = n.saturating_add(1);
                if let Some(at) = scheduled {
                    if at >= deadline {
                        return Ok(());
                    }
                    tokio::time::sleep_until(at.into()).await;
                }
                sender.ready().await?;
                let request = Request::post(OFFER_PATH)
                    .header(HOST, plan.host.clone())
                    .header(AUTHORIZATION, plan.auth.clone())
                    .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                    .body(Full::new(plan.body(k).clone()))
                    .context("building a request")?;
                k += stride;
                let now = Instant::now();
                // On time: timed from the send. Late (the previous answer came after this
                // request's slot): timed from the slot, so the queueing counts.
                let sent = match scheduled {
                    Some(at) if at < previous_done => at,
                    _ => now,
                };
                let response = sender.send_request(request).await?;
                let status = response.status().as_u16();
                let outcome = (status == 204)
                    .then(|| response.headers().get("offer-outcome").cloned())
                    .flatten();
                let body = response.into_body().collect().await?.to_bytes();
                previous_done = Instant::now();
                let us = u64::try_from(previous_done.duration_since(sent).as_micros())
                    .unwrap_or(MAX_LATENCY_US);
                stats
                    .latency_us
                    .saturating_record(us.clamp(1, MAX_LATENCY_US));
                match status {
                    200 => {
                        stats.ok += 1;
                        if !checked {
                            checked = true;
                            if !is_offer(&body) {
                                stats.invalid += 1;
                            }
                        }
                    }
                    204 => {
                        stats.no_offer += 1;
                        let name = outcome
                            .as_ref()
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or("(none)");
                        match stats.outcomes.get_mut(name) {
                            Some(n) => *n += 1,
                            None => {
                                stats.outcomes.insert(name.to_owned(), 1);
                            }
                        }
                    }
                    other => *stats.other.entry(other).or_default() += 1,
                }
            }
        };
        let end = tokio::select! {
            biased;
            closed = conn => End::Closed(closed.err()),
            result = work => match result {
                Ok(()) => End::Done,
                Err(e) => End::Failed(e),
            },
        };
        if end.finished(|e| stats.error(e)) {
            break;
        }
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        let t = Target::parse("http://127.0.0.1:8080/").expect("valid");
        assert_eq!(t.to_string(), "http://127.0.0.1:8080");
        assert!(Target::parse("https://x:1").is_err());
        assert!(Target::parse("http://x:1/v1").is_err());
    }

    #[test]
    fn every_session_sees_every_event() {
        let sessions: Vec<Uuid> = (0..8).map(|_| Uuid::new_v4()).collect();
        let target = Target::parse("http://127.0.0.1:9").expect("valid");
        let plan = Plan::new(&target, "k", &sessions).expect("plan");
        let mut seen = std::collections::HashSet::new();
        for k in 0..(8 * 4) {
            seen.insert(plan.body(k).clone());
        }
        assert_eq!(seen.len(), 32);
        // Consecutive requests go to different sessions.
        assert_ne!(plan.body(0), plan.body(1));
        let v: serde_json::Value = serde_json::from_slice(plan.body(5)).expect("json");
        assert_eq!(v["session_id"], sessions[5].to_string());
        assert!(EVENTS.contains(&v["trigger_context"]["event_type"].as_str().expect("event")));
    }

    #[test]
    fn offer_bodies_are_checked() {
        let body = serde_json::to_vec(&serde_json::json!({
            "offer_id": Uuid::new_v4(), "fallback_level": 4, "items": [{"item_id": "a"}],
            "price_usd": 1.0, "price_cents": 100, "expires_at": "2026-01-01T00:00:00Z"
        }))
        .expect("json");
        assert!(is_offer(&body));
        assert!(!is_offer(b"{}"));
        assert!(!is_offer(br#"{"offer_id":"x"}"#));
    }

    #[test]
    fn stats_merge_and_rates() {
        let mut a = Stats::new().expect("stats");
        a.ok = 90;
        a.no_offer = 10;
        a.latency_us.record(1000).expect("record");
        a.elapsed = Duration::from_secs(1);
        let mut b = Stats::new().expect("stats");
        b.other.insert(404, 5);
        b.latency_us.record(3000).expect("record");
        a.merge(&b).expect("merge");
        assert_eq!(a.answered(), 105);
        assert!((a.rps() - 105.0).abs() < 1e-9);
        assert!((a.share(90) - 100.0 * 90.0 / 105.0).abs() < 1e-9);
        assert!(a.quantile_ms(0.99) >= 2.9);
        assert!(a.status_line().contains("404 5"));
    }

    /// The baseline server on a free loopback port and a plan of ten sessions against it.
    async fn baseline_and_plan() -> (tokio::task::JoinHandle<()>, Arc<Plan>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let server = tokio::spawn(async move {
            axum::serve(listener, crate::baseline::router())
                .await
                .expect("serve");
        });
        let sessions: Vec<Uuid> = (0..10).map(|_| Uuid::new_v4()).collect();
        let plan = Arc::new(Plan::new(&Target::local(addr), "key", &sessions).expect("plan"));
        (server, plan)
    }

    #[tokio::test]
    async fn drives_the_baseline() {
        let (server, plan) = baseline_and_plan().await;
        let stats = run(&plan, 4, Duration::from_millis(300))
            .await
            .expect("run");
        server.abort();
        assert!(stats.ok > 10, "{}", stats.status_line());
        assert_eq!(stats.answered(), stats.ok, "{}", stats.status_line());
        assert_eq!(stats.invalid, 0);
        assert_eq!(stats.errors, 0, "{:?}", stats.first_error);
        assert_eq!(stats.latency_us.len(), stats.ok);
    }

    #[tokio::test]
    async fn a_paced_run_never_sends_more_than_its_schedule() {
        let (server, plan) = baseline_and_plan().await;
        // 4 connections at 8 rps: one request per connection every 500 ms, so at most 2
        // slots each fall inside 1 s, however fast the server answers.
        let stats = run_paced(&plan, 4, Duration::from_secs(1), Pace { rps: 8.0 })
            .await
            .expect("run");
        server.abort();
        assert!(stats.ok > 0, "{}", stats.status_line());
        assert!(stats.answered() <= 8, "{}", stats.status_line());
        assert_eq!(stats.errors, 0, "{:?}", stats.first_error);
        assert!(
            run_paced(&plan, 4, Duration::from_millis(10), Pace { rps: 0.0 })
                .await
                .is_err()
        );
    }
}
