//! A game client in Rust on the offer SDK: the same small game as the C, C++ and C# examples.
//! It starts the SDK, asks for an offer at the player's first loss, buys it (a `purchase`, plus
//! a `currency_earned` with source `purchase` for each currency pack), waits for the inventory
//! and balance updates it brings, and hides its store when the kill switch turns offers off.
//! The callbacks are drained once a frame from the main loop.
//!
//! ```text
//! cargo run -p offer-sdk --example game -- BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID
//! ```
//!
//! Exits 0 once the kill switch has turned offers off, 1 when init fails, 2 when nothing
//! happens for two minutes, 3 when no offer comes.
//!
//! With `OFFER_PLAYER_TOKEN_FILE` set, it is a game whose studio signs its players' tokens
//! (player identity `required`): that file stands in for the studio's backend. The game reads
//! its player's token from it at launch (`player_id_source: jwt`: the token's `sub` is the
//! player id) and again whenever the SDK asks for a new one.
//!
//! With `--measure SECONDS` after the arguments it measures the SDK instead: once the session
//! is ready it keeps it live for that long (a frame every 16 ms, an offer request every 5 s)
//! and prints the process's resident memory at the start and the end and the CPU time it
//! used meanwhile, read from `/proc/self/status` and `/proc/self/stat` (Linux).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use offer_sdk::{InitOptions, Sdk, SdkCallback, SdkEvent};

/// This game's currency packs: item id to (currency, amount). A game knows its own store.
const PACKS: [(&str, &str, i64); 1] = [("gems_500", "gems", 500)];

/// One frame of the game loop.
const FRAME: Duration = Duration::from_millis(16);

/// What the game remembers between frames.
#[derive(Debug, Default)]
struct Game {
    bought: bool,
    waiting_inventory: bool,
    waiting_balance: bool,
    settled: bool,
    done: bool,
    exit_code: i32,
}

impl Game {
    fn check_settled(&mut self) {
        if self.bought && !self.settled && !self.waiting_inventory && !self.waiting_balance {
            self.settled = true;
            println!("purchase settled");
        }
    }

    /// Buys `offer`: a `purchase` of its items, and a `currency_earned` per currency pack.
    fn buy(&mut self, sdk: &Sdk, offer: &serde_json::Value) {
        let offer_id = offer["offer_id"].as_str().unwrap_or_default().to_owned();
        let packs: BTreeMap<&str, (&str, i64)> = PACKS
            .iter()
            .map(|&(item, currency, amount)| (item, (currency, amount)))
            .collect();
        let mut item_ids = Vec::new();
        for item in offer["items"].as_array().into_iter().flatten() {
            let Some(item_id) = item["item_id"].as_str() else {
                continue;
            };
            item_ids.push(item_id.to_owned());
            if let Some(&(currency, amount)) = packs.get(item_id) {
                let tracked = sdk.track(SdkEvent::CurrencyEarned {
                    currency_id: currency.into(),
                    amount,
                    source: Some("purchase".into()),
                    tx_id: format!("pack-{item_id}-{offer_id}"),
                    ts: None,
                });
                // The engine pushes the new balance to the player's sockets.
                println!("track currency_earned {}", outcome(&tracked));
                self.waiting_balance = true;
            } else {
                self.waiting_inventory = true;
            }
        }
        let tracked = sdk.track(SdkEvent::Purchase {
            offer_id: offer_id.parse().ok(),
            item_ids,
            price_cents: offer["price_cents"].as_i64().unwrap_or_default(),
            tx_id: format!("buy-{offer_id}"),
            ts: None,
            receipt: None,
        });
        println!("track purchase {}", outcome(&tracked));
        self.bought = true;
        println!("bought {offer_id}");
        self.check_settled();
    }

    /// Reacts to one callback.
    fn on(&mut self, sdk: &Sdk, callback: SdkCallback) {
        match callback {
            SdkCallback::Ready { inventory, .. } => {
                println!("ready {} items held", inventory.len());
                // The player just lost for the first time: a moment for an offer.
                sdk.request_offer("first_loss");
            }
            SdkCallback::Offer(offer) => {
                println!("offer {offer}");
                if !self.bought {
                    self.buy(sdk, &offer);
                }
            }
            SdkCallback::NoOffer { outcome } => {
                println!("no offer {outcome}");
                if !self.bought {
                    self.done = true;
                    self.exit_code = 3;
                }
            }
            SdkCallback::Balance {
                currency_id,
                balance,
            } => {
                println!("balance {{\"balance\":{balance},\"currency_id\":\"{currency_id}\"}}");
                if self.bought {
                    self.waiting_balance = false;
                    self.check_settled();
                }
            }
            SdkCallback::Inventory(items) => {
                let held: Vec<String> = items
                    .iter()
                    .map(|i| format!("\"{}\" x{}", i.item_id, i.quantity))
                    .collect();
                println!("inventory {}", held.join(", "));
                if self.bought {
                    self.waiting_inventory = false;
                    self.check_settled();
                }
            }
            SdkCallback::KillSwitch(kill_switch) => {
                println!(
                    "kill switch {}",
                    serde_json::to_string(&kill_switch).unwrap_or_default()
                );
                if kill_switch.level.as_u8() >= 2 {
                    println!("offers are off: store hidden");
                    self.done = true;
                    self.exit_code = 0;
                }
            }
            SdkCallback::Config { config_version, .. } => println!("config {config_version}"),
            SdkCallback::PlayerTokenNeeded { reason, .. } => {
                println!("player token needed {reason}");
                // A game asks its backend; here the backend is a file.
                if let Some(token) = backend_token() {
                    let set = sdk.set_player_token(&token).map_err(|e| e.to_string());
                    println!("set player token {}", set.err().as_deref().unwrap_or("ok"));
                }
            }
            SdkCallback::Error { code, message } => println!("sdk error {code}: {message}"),
        }
    }
}

/// The player's token from the studio's backend, which this example reads from the file
/// `OFFER_PLAYER_TOKEN_FILE` names; `None` for a game without signed player identity.
fn backend_token() -> Option<String> {
    let path = std::env::var_os("OFFER_PLAYER_TOKEN_FILE")?;
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_owned())
}

/// `ok`, or the refusal.
fn outcome(tracked: &Result<(), offer_sdk::TrackError>) -> String {
    match tracked {
        Ok(()) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

/// The process's resident memory in KiB (`VmRSS` of `/proc/self/status`).
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The CPU time the process used so far, user and system, in clock ticks (`/proc/self/stat`
/// fields 14 and 15, counted after the command name, which may hold spaces).
fn cpu_ticks() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = stat.get(stat.rfind(')')? + 2..)?;
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // `after_name` starts at field 3 (the state): fields 14 and 15 are at 11 and 12.
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

/// Clock ticks per second (`getconf CLK_TCK`; 100 on Linux when it cannot be asked).
fn ticks_per_second() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(100)
}

/// Keeps the ready session live for `span` and prints what the process used meanwhile.
fn measure(sdk: &Sdk, game: &mut Game, span: Duration) {
    let (rss_start, cpu_start) = (rss_kib(), cpu_ticks());
    let started = Instant::now();
    let mut next_request = started;
    while started.elapsed() < span {
        if Instant::now() >= next_request {
            sdk.request_offer("boss_raid");
            next_request += Duration::from_secs(5);
        }
        while let Some(callback) = sdk.poll() {
            // Only the offers are bought from: the measurement keeps the session as it is.
            if matches!(callback, SdkCallback::Error { .. }) {
                game.on(sdk, callback);
            }
        }
        std::thread::sleep(FRAME);
    }
    let (rss_end, cpu_end) = (rss_kib(), cpu_ticks());
    let ticks = cpu_end.zip(cpu_start).map(|(end, start)| end - start);
    println!(
        "measure: {:.0} s live; rss start {} KiB, end {} KiB; cpu {:.2} s",
        started.elapsed().as_secs_f64(),
        rss_start.map_or("?".into(), |v| v.to_string()),
        rss_end.map_or("?".into(), |v| v.to_string()),
        ticks.map_or(f64::NAN, |t| t as f64 / ticks_per_second() as f64),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (base_url, game_id, key, data_dir, player_id, span) = match args.as_slice() {
        [base, game, key, dir, player] => (base, game, key, dir, player, None),
        [base, game, key, dir, player, flag, secs] if flag == "--measure" => {
            let Ok(secs) = secs.parse() else {
                eprintln!("--measure takes a number of seconds");
                std::process::exit(1);
            };
            (
                base,
                game,
                key,
                dir,
                player,
                Some(Duration::from_secs(secs)),
            )
        }
        _ => {
            eprintln!(
                "usage: game BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID [--measure SECONDS]"
            );
            std::process::exit(1);
        }
    };
    // The game's svc_config.json, shipped with the build; written here so the example runs
    // from any folder.
    let token = backend_token();
    let source = if token.is_some() { "jwt" } else { "custom" };
    let written = std::fs::create_dir_all(data_dir).and_then(|()| {
        std::fs::write(
            Path::new(data_dir).join("svc_config.json"),
            format!(r#"{{"auto_login": true, "player_id_source": "{source}"}}"#),
        )
    });
    if let Err(e) = written {
        eprintln!("cannot write svc_config.json in {data_dir}: {e}");
        std::process::exit(1);
    }
    let config = serde_json::json!({"api_key": key, "game_id": game_id,
                                    "environment": "production", "base_url": base_url})
    .to_string();
    let mut options = InitOptions::new(data_dir, data_dir);
    options.player_token = token;
    let sdk = match Sdk::init(&config, Some(player_id.clone()), None, options) {
        Ok(sdk) => sdk,
        Err(e) => {
            println!("init failed: {e}");
            std::process::exit(1);
        }
    };
    println!("init ok");
    let mut game = Game {
        exit_code: 2,
        ..Game::default()
    };
    if let Some(span) = span {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Some(SdkCallback::Ready { .. }) = sdk.wait(Duration::from_millis(200)) {
                measure(&sdk, &mut game, span);
                return;
            }
        }
        println!("no ready to measure from within a minute");
        std::process::exit(2);
    }
    // The frame loop: callbacks are drained here, on the game's thread.
    let deadline = Instant::now() + Duration::from_secs(120);
    while !game.done && Instant::now() < deadline {
        while let Some(callback) = sdk.poll() {
            game.on(&sdk, callback);
        }
        std::thread::sleep(FRAME);
    }
    drop(sdk);
    println!("shutdown ok");
    std::process::exit(game.exit_code);
}
