//! `receipt-flood`: the REST offer path (`POST /v1/sdk/offers/next`) alone, then under a
//! flood of forged purchase receipts (`POST /v1/sdk/events`), in one run.
//!
//! The engine verifies receipts on a bounded pool of blocking threads (`stores.verify_workers`
//! verifiers, `stores.verify_queue` waiting; beyond that a purchase is answered 503
//! `unavailable`), so that a flood of forged receipts holds those threads and never the ones
//! serving offers. This measures what the flood still costs the offer path.
//!
//! The engine runs as a child process trusting one extra App Store root: the root of a test
//! certificate authority shaped like Apple's, written to a PEM file in the logs folder and
//! named in a configuration file passed with `--config`. The game is set up over REST as a
//! studio would: its catalogue sells every item as an App Store product, its verification is
//! `enforce`, and its players (offer sessions and flood sessions alike) play on `ios`, so the
//! offer path serves what a store product sells, as such a game's does.
//!
//! The forgery is the costliest receipt that grants nothing: a StoreKit 2 transaction signed
//! by the trusted test authority, for the game's bundle, in production, but of a product no
//! item or bundle has. The engine checks all of it (the chain's two certificate signatures, one
//! of them P-384, the JWS signature, the validity windows, the bundle, the environment) before
//! it finds the product unknown, and in `enforce` refuses the purchase (`receipt_invalid`,
//! `unknown_product`) before anything is written. A receipt signed by an untrusted authority
//! is cheaper (refused as soon as its root is compared), and in `report` a refused receipt is
//! granted as the client reported it, so neither is used.
//!
//! Rounds alternate: offers alone (quiet), then the same offers while `--flood-clients`
//! keep-alive connections each send one forged purchase after another, as fast as the answers
//! come, counting 202 and 503 answers. One 202 answer per flood connection is checked to
//! refuse the purchase as above; any other answer fails the run.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use clap::Args;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper_util::rt::TokioIo;
use offer_receipts::AppleEnvironment;
use offer_receipts::test_support::{TestAppleCa, transaction_payload};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use uuid::Uuid;

use crate::catalogue::catalogue;
use crate::child::{Server, free_port};
use crate::drive::{self, End, Plan, Stats, Target};
use crate::figures::{median, ratio};
use crate::servers::{ENGINE_ENV, EngineArgs, secret};
use crate::setup::{admin_token, call, create_game, open_sessions_for, production_key};
use crate::target_line::{Bound, target_line};
use crate::{LoadArgs, SetupArgs, parse_duration};

/// The game's App Store bundle id.
const BUNDLE_ID: &str = "com.offerload.rpg";
/// The App Store product of the forged receipts: no item or bundle of the game sells it.
const UNSOLD_PRODUCT: &str = "com.offerload.not_sold";
/// The SDK path purchases are sent to.
const EVENTS_PATH: &str = "/v1/sdk/events";
/// Forged receipts per flood connection (distinct transactions), sent in turn.
const RECEIPTS_PER_CLIENT: usize = 8;
/// Most items one bulk upsert may carry.
const BULK_LIMIT: usize = 500;
/// Largest ratio flood/quiet of the offer path's p99 the pool is meant to keep.
const P99_TARGET: f64 = 1.3;

/// Flags of `receipt-flood`.
#[derive(Debug, Args)]
pub struct FloodArgs {
    /// Offer connections and the duration of every run.
    #[command(flatten)]
    pub load: LoadArgs,
    /// The game's setup (offer sessions, catalogue size).
    #[command(flatten)]
    pub setup: SetupArgs,
    /// Unmeasured warm-up (offers and flood together) before the rounds.
    #[arg(long, default_value = "3s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Measured rounds; each round is one quiet run, then one run under the flood.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Flood connections, each with one forged purchase in flight at a time. Past
    /// `--verify-workers` + `--verify-queue` of them the pool refuses some with 503.
    #[arg(long, default_value_t = 16)]
    pub flood_clients: usize,
    /// The engine's `stores.verify_workers`: receipts verified at once; 0, the engine's
    /// default, is half the cores.
    #[arg(long, default_value_t = 0)]
    pub verify_workers: usize,
    /// The engine's `stores.verify_queue`: receipts that may wait for a verifier.
    #[arg(long, default_value_t = 64)]
    pub verify_queue: usize,
    /// The engine binary, the logs folder and the start timeout.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// What the setup made.
struct Game {
    /// The production SDK key.
    api_key: String,
    /// Sessions the offer path is driven over.
    offer_sessions: Vec<Uuid>,
    /// One session per flood connection.
    flood_sessions: Vec<Uuid>,
}

/// Runs `receipt-flood`.
pub async fn run(args: FloodArgs) -> Result<()> {
    if args.rounds == 0 || args.flood_clients == 0 {
        bail!("--rounds and --flood-clients must be at least 1");
    }
    let logs = args.engine.logs_dir()?;
    let ca = TestAppleCa::new();
    let secret = secret();
    let (mut engine, addr) = start_engine(&args, &ca, &secret, &logs).await?;
    let base = format!("http://{addr}");
    let started = Instant::now();
    let game = set_up(&base, &secret, &args)
        .await
        .with_context(|| format!("setting the engine up; {}", engine.log_tail()))?;
    eprintln!(
        "engine on {base} (pid {}), set up in {:.1} s: {} items sold on the App Store, \
         verification enforce, {} offer sessions, {} flood sessions; logs in {}",
        engine.pid(),
        started.elapsed().as_secs_f64(),
        args.setup.items,
        game.offer_sessions.len(),
        game.flood_sessions.len(),
        logs.display()
    );

    let flood = Arc::new(Flood::new(addr, &game, &ca)?);
    let refusal = probe(&base, &flood).await?;
    eprintln!("a forged purchase is refused: {refusal}");

    let plan = Arc::new(Plan::new(
        &Target::local(addr),
        &game.api_key,
        &game.offer_sessions,
    )?);
    let connections = args.load.connections;
    if !args.warmup.is_zero() {
        let (offers, flooded) = under_flood(&plan, connections, &flood, args.warmup).await?;
        eprintln!(
            "warm-up {:>9.0} rps, flood {:.0} purchases/s",
            offers.rps(),
            flooded.rate()
        );
    }

    let mut quiet = Vec::with_capacity(args.rounds);
    let mut flooded = Vec::with_capacity(args.rounds);
    for round in 1..=args.rounds {
        let alone = drive::run(&plan, connections, args.load.duration).await?;
        engine.check_alive()?;
        eprintln!("round {round} quiet {}", offers_line(&alone));
        if alone.ok == 0 {
            bail!("the engine served no offer: {}", alone.status_line());
        }
        quiet.push(alone);

        let (offers, flood_stats) =
            under_flood(&plan, connections, &flood, args.load.duration).await?;
        engine.check_alive()?;
        eprintln!(
            "round {round} flood {}; {}",
            offers_line(&offers),
            flood_stats.line()
        );
        flood_stats.check()?;
        flooded.push((offers, flood_stats));
    }
    print!("{}", report(&args, &quiet, &flooded, &logs));
    Ok(())
}

/// Starts the engine trusting `ca`'s root as an App Store root (a PEM file and a
/// configuration file naming it, both in `logs`), with the pool's flags, its store the SQLite
/// file `<logs>/engine.db`; waits until it answers.
async fn start_engine(
    args: &FloodArgs,
    ca: &TestAppleCa,
    secret: &str,
    logs: &Path,
) -> Result<(Server, SocketAddr)> {
    let bin = &args.engine.engine_bin;
    if !bin.is_file() {
        bail!(
            "no engine binary at {} (build it: cargo build --release -p offer-engine, \
             or pass --engine-bin)",
            bin.display()
        );
    }
    let root = logs.join("test-apple-root.pem");
    std::fs::write(&root, ca.root_pem()).with_context(|| format!("writing {}", root.display()))?;
    let config = logs.join("receipt-flood.toml");
    std::fs::write(&config, roots_config(&root))
        .with_context(|| format!("writing {}", config.display()))?;
    let addr = free_port()?;
    let mut cmd = Command::new(bin);
    cmd.arg("serve")
        .arg("--config")
        .arg(&config)
        .envs(ENGINE_ENV)
        .env("OFFER__SERVER__BIND", addr.to_string())
        .env("OFFER__AUTH__JWT_SECRET", secret)
        .env("OFFER__STORE__REDIS_URL", "")
        .env("OFFER__STORE__PATH", logs.join("engine.db"))
        .env(
            "OFFER__STORES__VERIFY_WORKERS",
            args.verify_workers.to_string(),
        )
        .env("OFFER__STORES__VERIFY_QUEUE", args.verify_queue.to_string());
    let mut engine = Server::spawn("engine", cmd, logs)?;
    engine
        .wait_ready(
            &format!("http://{addr}/healthz"),
            true,
            args.engine.start_timeout,
        )
        .await?;
    Ok((engine, addr))
}

/// The configuration file trusting the PEM file `root` as an extra App Store root. A list
/// cannot be given in an environment variable, so it goes through `--config`.
fn roots_config(root: &Path) -> String {
    format!(
        "[stores]\napp_store_roots = [{}]\n",
        Value::String(root.display().to_string())
    )
}

/// The App Store product selling `item_id`.
fn product_of(item_id: &str) -> String {
    format!("com.offerload.{item_id}")
}

/// Creates the game (every item sold as an App Store product), turns verification to
/// `enforce` with the App Store app, issues a production key and opens the sessions, all of
/// players on `ios`.
async fn set_up(base: &str, secret: &str, args: &FloodArgs) -> Result<Game> {
    let client = Client::builder()
        .build()
        .context("building the HTTP client")?;
    let token = admin_token(secret, "load-studio")?;
    let game_id = create_game(&client, base, &token, "Receipt flood RPG", &[]).await?;
    let items = catalogue(args.setup.items)
        .into_iter()
        .map(|item| {
            let mut value = serde_json::to_value(&item).context("an item as JSON")?;
            value["store_products"] = json!({"app_store": product_of(&item.item_id)});
            Ok(value)
        })
        .collect::<Result<Vec<_>>>()?;
    for chunk in items.chunks(BULK_LIMIT) {
        call(
            client
                .post(format!("{base}/v1/games/{game_id}/items/bulk"))
                .bearer_auth(&token)
                .json(&json!({ "items": chunk })),
            StatusCode::OK,
            "POST /v1/games/{game_id}/items/bulk",
        )
        .await?;
    }
    call(
        client
            .put(format!("{base}/v1/games/{game_id}/stores"))
            .bearer_auth(&token)
            .json(&json!({
                "verification": "enforce",
                "app_store": {"bundle_id": BUNDLE_ID},
            })),
        StatusCode::OK,
        "PUT /v1/games/{game_id}/stores",
    )
    .await?;
    let api_key = production_key(&client, base, &token, game_id).await?;
    let players = |prefix: &str, n: usize| -> Vec<(String, Value)> {
        (0..n)
            .map(|i| {
                let attributes = json!({"country": "US", "platform": "ios"});
                (format!("{prefix}{i}"), attributes)
            })
            .collect()
    };
    let offer_sessions =
        open_sessions_for(&client, base, &api_key, players("p", args.setup.sessions)).await?;
    let flood_sessions =
        open_sessions_for(&client, base, &api_key, players("f", args.flood_clients)).await?;
    Ok(Game {
        api_key,
        offer_sessions,
        flood_sessions,
    })
}

/// The forged purchases, built before the run: per flood connection, its session's bodies.
struct Flood {
    addr: SocketAddr,
    host: HeaderValue,
    auth: HeaderValue,
    /// `bodies[client]`: [`RECEIPTS_PER_CLIENT`] purchases of distinct transactions.
    bodies: Vec<Vec<Bytes>>,
}

impl Flood {
    /// The engine at `addr`; signs [`RECEIPTS_PER_CLIENT`] forged receipts per flood
    /// session of `game` with `ca`.
    fn new(addr: SocketAddr, game: &Game, ca: &TestAppleCa) -> Result<Self> {
        let claimed = catalogue(1)
            .pop()
            .context("the catalogue has no item to claim")?
            .item_id;
        let bodies = game
            .flood_sessions
            .iter()
            .enumerate()
            .map(|(client, session)| {
                (0..RECEIPTS_PER_CLIENT)
                    .map(|k| {
                        let n = client * RECEIPTS_PER_CLIENT + k;
                        forged_purchase(ca, *session, &claimed, n)
                    })
                    .collect()
            })
            .collect();
        Ok(Self {
            addr,
            host: HeaderValue::from_str(&addr.to_string()).context("address as a Host header")?,
            auth: HeaderValue::from_str(&format!("Bearer {}", game.api_key))
                .context("key as a header value")?,
            bodies,
        })
    }
}

/// The events call of `session` carrying one purchase claiming the item `claimed` for
/// nothing, with the `n`-th forged receipt: signed by `ca` for [`BUNDLE_ID`] in production, of
/// [`UNSOLD_PRODUCT`].
fn forged_purchase(ca: &TestAppleCa, session: Uuid, claimed: &str, n: usize) -> Bytes {
    let transaction_id = (3_000_000_000_000_000_u64 + n as u64).to_string();
    let payload = transaction_payload(
        BUNDLE_ID,
        UNSOLD_PRODUCT,
        &transaction_id,
        AppleEnvironment::Production,
        1,
    );
    let body = json!({
        "session_id": session,
        "events": [{
            "type": "purchase",
            "item_ids": [claimed],
            "price_cents": 0,
            "tx_id": format!("flood-{n}"),
            "receipt": {"store": "app_store", "signed_transaction": ca.sign(&payload)},
        }],
    });
    Bytes::from(body.to_string())
}

/// Whether an events answer refused its one purchase as a receipt of an unknown product
/// (and accepted nothing); the refusal's message when it did.
fn refused_as_unknown_product(body: &[u8]) -> Option<String> {
    let outcome: Value = serde_json::from_slice(body).ok()?;
    let [rejected] = outcome["rejected"].as_array()?.as_slice() else {
        return None;
    };
    let message = rejected["message"].as_str()?;
    (outcome["accepted"] == 0
        && rejected["code"] == "receipt_invalid"
        && message.contains("(unknown_product)"))
    .then(|| message.to_owned())
}

/// Sends one forged purchase before the rounds: it must be answered 202 and refused as a
/// receipt of an unknown product, so every check ran and nothing was granted. The refusal.
async fn probe(base: &str, flood: &Flood) -> Result<String> {
    let body = flood
        .bodies
        .first()
        .and_then(|bodies| bodies.first())
        .context("no forged purchase to send")?;
    let answer = call(
        Client::new()
            .post(format!("{base}{EVENTS_PATH}"))
            .header(AUTHORIZATION, flood.auth.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body.clone()),
        StatusCode::ACCEPTED,
        "POST /v1/sdk/events (a forged purchase)",
    )
    .await?;
    refused_as_unknown_product(answer.to_string().as_bytes()).with_context(|| {
        format!("a forged purchase was not refused as a receipt of an unknown product: {answer}")
    })
}

/// What the flood connections saw.
#[derive(Debug, Default)]
struct FloodStats {
    /// `202` answers.
    accepted: u64,
    /// `503` answers: the pool was full.
    unavailable: u64,
    /// Other statuses.
    other: BTreeMap<u16, u64>,
    /// Checked `202` answers that did not refuse the purchase as a receipt of an unknown
    /// product.
    not_refused: u64,
    /// Transport errors.
    errors: u64,
    /// The first transport error or unexpected answer, for the report.
    first_error: Option<String>,
    /// From the flood's start to its stop.
    elapsed: Duration,
}

impl FloodStats {
    /// Adds a connection's counters.
    fn merge(&mut self, other: FloodStats) {
        self.accepted += other.accepted;
        self.unavailable += other.unavailable;
        for (status, n) in other.other {
            *self.other.entry(status).or_default() += n;
        }
        self.not_refused += other.not_refused;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }

    /// Purchases answered.
    fn answered(&self) -> u64 {
        self.accepted + self.unavailable + self.other.values().sum::<u64>()
    }

    /// Purchases answered per second.
    fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.answered() as f64 / secs
        } else {
            0.0
        }
    }

    /// Share of the answers that were 503, in percent.
    fn unavailable_pct(&self) -> f64 {
        let answered = self.answered();
        if answered == 0 {
            0.0
        } else {
            100.0 * self.unavailable as f64 / answered as f64
        }
    }

    /// Rate and answers on one line.
    fn line(&self) -> String {
        let mut line = format!(
            "flood {:.0} purchases/s: 202 {}, 503 {} ({:.1}%)",
            self.rate(),
            self.accepted,
            self.unavailable,
            self.unavailable_pct()
        );
        for (status, n) in &self.other {
            line.push_str(&format!(", {status} {n}"));
        }
        if self.errors > 0 {
            line.push_str(&format!(", {} transport errors", self.errors));
        }
        line
    }

    /// Fails when a flood answer was neither a refusal nor a 503, or none came at all.
    fn check(&self) -> Result<()> {
        if self.not_refused > 0 || !self.other.is_empty() {
            bail!(
                "the flood got answers other than a refused purchase or 503: {}; first: {}",
                self.line(),
                self.first_error.as_deref().unwrap_or("-")
            );
        }
        if self.answered() == 0 {
            bail!(
                "no flood purchase was answered ({}); first error: {}",
                self.line(),
                self.first_error.as_deref().unwrap_or("-")
            );
        }
        Ok(())
    }

    fn error(&mut self, e: impl std::fmt::Display) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(e.to_string());
        }
    }
}

/// Drives the offer path for `duration` while every flood connection sends forged
/// purchases; stops the flood when the offers are done.
async fn under_flood(
    plan: &Arc<Plan>,
    connections: usize,
    flood: &Arc<Flood>,
    duration: Duration,
) -> Result<(Stats, FloodStats)> {
    let stop = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let clients: Vec<_> = (0..flood.bodies.len())
        .map(|client| {
            let (flood, stop) = (Arc::clone(flood), Arc::clone(&stop));
            tokio::spawn(async move { flood_connection(&flood, client, &stop).await })
        })
        .collect();
    let offers = drive::run(plan, connections, duration).await;
    stop.store(true, Ordering::Release);
    let elapsed = start.elapsed();
    let mut total = FloodStats::default();
    for client in clients {
        total.merge(client.await.context("a flood connection failed")?);
    }
    total.elapsed = elapsed;
    Ok((offers?, total))
}

/// One flood connection: its forged purchases in turn, each sent as soon as the last is
/// answered, until `stop`; reconnects (counting an error) when the connection fails.
async fn flood_connection(flood: &Flood, client: usize, stop: &AtomicBool) -> FloodStats {
    let mut stats = FloodStats::default();
    let bodies = &flood.bodies[client];
    let mut k = 0usize;
    let mut checked = false;
    while !stop.load(Ordering::Acquire) {
        let stream = match TcpStream::connect(flood.addr).await {
            Ok(stream) => stream,
            Err(e) => {
                stats.error(format_args!("connect {}: {e}", flood.addr));
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        if let Err(e) = stream.set_nodelay(true) {
            stats.error(format_args!("setting TCP_NODELAY: {e}"));
        }
        let (mut sender, conn) =
            match hyper::client::conn::http1::handshake(TokioIo::new(stream)).await {
                Ok(pair) => pair,
                Err(e) => {
                    stats.error(e);
                    continue;
                }
            };
        let work = async {
            while !stop.load(Ordering::Acquire) {
                sender.ready().await?;
                let request = Request::post(EVENTS_PATH)
                    .header(HOST, flood.host.clone())
                    .header(AUTHORIZATION, flood.auth.clone())
                    .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                    .body(Full::new(bodies[k % bodies.len()].clone()))?;
                k += 1;
                let response = sender.send_request(request).await?;
                let status = response.status().as_u16();
                let body = response.into_body().collect().await?.to_bytes();
                match status {
                    202 => {
                        stats.accepted += 1;
                        if !checked {
                            checked = true;
                            if refused_as_unknown_product(&body).is_none() {
                                stats.not_refused += 1;
                                stats.error(format_args!("202 {}", String::from_utf8_lossy(&body)));
                            }
                        }
                    }
                    503 => stats.unavailable += 1,
                    other => {
                        *stats.other.entry(other).or_default() += 1;
                        stats.error(format_args!("{other} {}", String::from_utf8_lossy(&body)));
                    }
                }
            }
            anyhow::Ok(())
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
    stats
}

/// A run of the offer path on one line.
fn offers_line(stats: &Stats) -> String {
    format!(
        "{:>9.0} rps  p50 {:.3} ms  p99 {:.3} ms  {}",
        stats.rps(),
        stats.quantile_ms(0.5),
        stats.quantile_ms(0.99),
        stats.status_line()
    )
}

/// The medians over the rounds of a side's rps, p50 and p99.
fn medians(runs: &[&Stats]) -> [f64; 3] {
    let of = |f: &dyn Fn(&Stats) -> f64| median(&runs.iter().map(|s| f(s)).collect::<Vec<_>>());
    [
        of(&Stats::rps),
        of(&|s| s.quantile_ms(0.5)),
        of(&|s| s.quantile_ms(0.99)),
    ]
}

/// The table printed last: each side's medians and per-round p99, the flood's rate and 503
/// share, and the ratio of the median p99s against its target.
fn report(
    args: &FloodArgs,
    quiet: &[Stats],
    flooded: &[(Stats, FloodStats)],
    logs: &Path,
) -> String {
    let quiet: Vec<&Stats> = quiet.iter().collect();
    let under: Vec<&Stats> = flooded.iter().map(|(offers, _)| offers).collect();
    let rates: Vec<f64> = flooded.iter().map(|(_, f)| f.rate()).collect();
    let shares: Vec<f64> = flooded.iter().map(|(_, f)| f.unavailable_pct()).collect();
    let mut out = format!(
        "\nPOST /v1/sdk/offers/next, {} connections, {} ios sessions, {} rounds of {:?} \
         (quiet and flood alternating, {:?} warm-up); flood: {} connections of POST \
         /v1/sdk/events, one forged purchase each in flight (App Store receipt signed by a \
         trusted test root, of a product no item sells; enforce refuses it unknown_product); \
         verifiers {} + queue {}; logs in {}\n",
        args.load.connections,
        args.setup.sessions,
        args.rounds,
        args.load.duration,
        args.warmup,
        args.flood_clients,
        match args.verify_workers {
            0 => "the engine's default (half the cores)".to_owned(),
            n => n.to_string(),
        },
        args.verify_queue,
        logs.display()
    );
    out.push_str(&format!(
        "{:<6} {:>10} {:>12} {:>12} {:>16} {:>10}  {}\n",
        "side",
        "rps(med)",
        "p50 ms(med)",
        "p99 ms(med)",
        "purchases/s(med)",
        "503(med)",
        "p99 ms per round"
    ));
    let mut p99 = [0.0; 2];
    for (i, (name, runs)) in [("quiet", &quiet), ("flood", &under)]
        .into_iter()
        .enumerate()
    {
        let [rps, p50, side_p99] = medians(runs);
        p99[i] = side_p99;
        let rounds: Vec<String> = runs
            .iter()
            .map(|s| format!("{:.3}", s.quantile_ms(0.99)))
            .collect();
        let (rate, share) = if i == 0 {
            ("-".to_owned(), "-".to_owned())
        } else {
            (
                format!("{:.0}", median(&rates)),
                format!("{:.1}%", median(&shares)),
            )
        };
        out.push_str(&format!(
            "{name:<6} {rps:>10.0} {p50:>12.3} {side_p99:>12.3} {rate:>16} {share:>10}  {}\n",
            rounds.join(" ")
        ));
    }
    let r = ratio(p99[1], p99[0]);
    out.push_str(&target_line(
        "flood/quiet",
        &format!("p99 x{r:.2}"),
        r,
        Bound::AtMost(P99_TARGET),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use offer_receipts::{AppleExpect, AppleRoots, ReceiptError, verify_apple_transaction};

    /// The JWS of a forged purchase body.
    fn jws_of(body: &[u8]) -> String {
        let value: Value = serde_json::from_slice(body).expect("json");
        value["events"][0]["receipt"]["signed_transaction"]
            .as_str()
            .expect("a signed transaction")
            .to_owned()
    }

    #[test]
    fn a_forged_receipt_passes_every_signature_check_and_names_an_unsold_product() {
        let ca = TestAppleCa::new();
        let session = Uuid::new_v4();
        let body = forged_purchase(&ca, session, "sword", 3);
        let value: Value = serde_json::from_slice(&body).expect("json");
        assert_eq!(value["session_id"], session.to_string());
        assert_eq!(value["events"][0]["type"], "purchase");
        assert_eq!(value["events"][0]["tx_id"], "flood-3");
        assert_eq!(value["events"][0]["item_ids"], json!(["sword"]));

        let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root");
        let expect = AppleExpect {
            bundle_id: BUNDLE_ID,
            app_apple_id: None,
        };
        let transaction =
            verify_apple_transaction(&jws_of(&body), &roots, &expect).expect("verifies");
        assert_eq!(transaction.product_id, UNSOLD_PRODUCT);
        assert_eq!(transaction.environment, AppleEnvironment::Production);
        assert!(
            catalogue(200)
                .iter()
                .all(|item| product_of(&item.item_id) != UNSOLD_PRODUCT)
        );

        // Without the test root it is refused as soon as its root is compared.
        let refused = verify_apple_transaction(&jws_of(&body), &AppleRoots::apple(), &expect);
        assert!(matches!(refused, Err(ReceiptError::UntrustedRoot)));
    }

    #[test]
    fn only_a_refusal_of_an_unknown_product_counts_as_refused() {
        let refused = br#"{"accepted": 0, "rejected": [{"index": 0, "code": "receipt_invalid",
            "message": "receipt refused (unknown_product): no item"}]}"#;
        assert_eq!(
            refused_as_unknown_product(refused).as_deref(),
            Some("receipt refused (unknown_product): no item")
        );
        let signature = br#"{"accepted": 0, "rejected": [{"index": 0,
            "code": "receipt_invalid", "message": "receipt refused (signature)"}]}"#;
        assert_eq!(refused_as_unknown_product(signature), None);
        assert_eq!(
            refused_as_unknown_product(br#"{"accepted": 1, "rejected": []}"#),
            None
        );
        assert_eq!(refused_as_unknown_product(b"not json"), None);
    }

    #[test]
    fn the_engine_reads_the_test_root_from_the_configuration_file() {
        let ca = TestAppleCa::new();
        let dir = std::env::temp_dir().join(format!("offer-load-flood-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("a scratch folder");
        let root = dir.join("test \"root\".pem");
        std::fs::write(&root, ca.root_pem()).expect("the root's PEM");
        let config = dir.join("receipt-flood.toml");
        std::fs::write(&config, roots_config(&root)).expect("the configuration");
        let settings = offer_engine::config::Settings::load(Some(&config)).expect("loads");
        assert_eq!(settings.stores.app_store_roots, [root]);
        let trusted = settings.app_store_roots().expect("reads the root");
        let roots = AppleRoots::with_extra_pem(&ca.root_pem()).expect("the test root");
        assert_eq!(trusted.len(), 1);
        assert_eq!(roots.roots_der().last(), Some(&trusted[0]));
        std::fs::remove_dir_all(&dir).expect("cleans up");
    }
}
