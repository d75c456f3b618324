//! The operator CLI: `offer-engine serve` (the default), `offer-engine token`,
//! `offer-engine member add` and `offer-engine export-ledger`.

use std::net::SocketAddr;
use std::path::PathBuf;

use chrono::NaiveDate;
use clap::{Parser, Subcommand};
use offer_domain::environment::Environment;
use uuid::Uuid;

use crate::auth::{JwtCodec, Role, dev_secret};
use crate::config::{ConfigError, Settings};
use offer_wire::jwt::MAX_TOKEN_TTL_DAYS;

/// Command line of the `offer-engine` binary.
#[derive(Debug, Parser)]
#[command(
    name = "offer-engine",
    version,
    about = "Real-time in-game offer engine",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; without a command the engine serves, and `serve`'s options are accepted
    /// here too (`offer-engine --bind 0.0.0.0:8080`).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// The options of `serve`, when no command is given.
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Options of the service.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Listen address (overrides server.bind).
    #[arg(long)]
    pub bind: Option<SocketAddr>,
    /// Extra configuration file (TOML).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service (the default).
    Serve(ServeArgs),
    /// Print a dashboard JWT signed with the server's secret: OFFER__AUTH__JWT_SECRET, or in
    /// development mode the secret a development server keeps in this folder.
    Token {
        /// Studio the token acts for.
        #[arg(long)]
        studio: String,
        /// viewer, developer or admin.
        #[arg(long)]
        role: Role,
        /// Lifetime with its unit: 90s, 30m, 1h or 7d (a number alone is refused).
        #[arg(long, default_value = "1h", value_parser = parse_ttl)]
        ttl: chrono::Duration,
        /// Subject (user id).
        #[arg(long, default_value = "operator")]
        sub: String,
        /// Extra configuration file (TOML).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Studio members, who sign in to the dashboard.
    Member {
        /// What to do.
        #[command(subcommand)]
        action: MemberCommand,
    },
    /// Print a game's raw ledger lines as NDJSON (one JSON entry per line, in append order)
    /// from the configured store, beside running engines: export them before
    /// store.ledger_retention_days deletes them.
    ExportLedger {
        /// The game.
        #[arg(long)]
        game: Uuid,
        /// First UTC day to export (YYYY-MM-DD), by event time.
        #[arg(long)]
        since: NaiveDate,
        /// production or sandbox.
        #[arg(long, default_value = "production", value_parser = parse_environment)]
        env: Environment,
        /// Extra configuration file (TOML).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

/// Subcommands of `member`.
#[derive(Debug, Subcommand)]
pub enum MemberCommand {
    /// Add a member to a studio, written straight to the configured store (the way to make a
    /// studio's first admin; stop an engine that owns the store file first). The password is
    /// read from OFFER_MEMBER_PASSWORD, or else from the first line of standard input.
    Add {
        /// The member's studio.
        #[arg(long)]
        studio: String,
        /// The member's email, its sign-in name.
        #[arg(long)]
        email: String,
        /// viewer, developer or admin.
        #[arg(long)]
        role: Role,
        /// Extra configuration file (TOML).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

/// Reads `production` or `sandbox`.
pub fn parse_environment(s: &str) -> Result<Environment, String> {
    match s {
        "production" => Ok(Environment::Production),
        "sandbox" => Ok(Environment::Sandbox),
        _ => Err(format!(
            "`{s}` is not an environment: production or sandbox"
        )),
    }
}

/// Parses `90s`, `30m`, `1h`, `7d`; a number without a unit is refused rather than guessed.
pub fn parse_ttl(s: &str) -> Result<chrono::Duration, String> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: i64 = num
        .parse()
        .ok()
        .filter(|n| *n <= 1_000_000_000)
        .ok_or_else(|| format!("bad duration `{s}`"))?;
    let d = match unit {
        "s" => chrono::Duration::seconds(n),
        "m" => chrono::Duration::minutes(n),
        "h" => chrono::Duration::hours(n),
        "d" => chrono::Duration::days(n),
        "" => return Err(format!("`{s}` needs a unit: s, m, h or d (for example 1h)")),
        _ => return Err(format!("bad duration unit in `{s}` (s, m, h, d)")),
    };
    if n <= 0 || d > chrono::Duration::days(MAX_TOKEN_TTL_DAYS) {
        return Err(format!(
            "duration `{s}` out of range: above 0 and at most {MAX_TOKEN_TTL_DAYS}d"
        ));
    }
    Ok(d)
}

/// Mints a token for the `token` subcommand.
pub fn mint_token(
    config: Option<&std::path::Path>,
    studio: &str,
    role: Role,
    ttl: chrono::Duration,
    sub: &str,
) -> Result<String, ConfigError> {
    let settings = Settings::load(config)?;
    let secret = if settings.auth.jwt_secret.is_empty() {
        dev_secret::load(&settings.auth.dev_secret_file).map_err(|e| ConfigError(e.to_string()))?
    } else {
        settings.auth.jwt_secret.into_bytes()
    };
    let codec = JwtCodec::new(
        &secret,
        &settings.auth.jwt_issuer,
        &settings.auth.jwt_audience,
    );
    codec
        .mint(sub, studio, role, ttl)
        .map_err(|e| ConfigError(e.to_string()))
}
