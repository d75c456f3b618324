//! The operator CLI: `offer-engine serve` (the default) and `offer-engine token`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::auth::{JwtCodec, Role};
use crate::config::{ConfigError, Settings};

/// Command line of the `offer-engine` binary.
#[derive(Debug, Parser)]
#[command(
    name = "offer-engine",
    version,
    about = "Real-time in-game offer engine"
)]
pub struct Cli {
    /// What to do (default: serve).
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service.
    Serve {
        /// Listen address (overrides server.bind).
        #[arg(long)]
        bind: Option<SocketAddr>,
        /// Extra configuration file (TOML).
        #[arg(long)]
        config: Option<PathBuf>,
    },
    /// Print a dashboard JWT signed with the configured secret (OFFER__AUTH__JWT_SECRET).
    Token {
        /// Studio the token acts for.
        #[arg(long)]
        studio: String,
        /// viewer, developer or admin.
        #[arg(long)]
        role: Role,
        /// Lifetime, for example 30m, 1h, 7d.
        #[arg(long, default_value = "1h", value_parser = parse_ttl)]
        ttl: chrono::Duration,
        /// Subject (user id).
        #[arg(long, default_value = "operator")]
        sub: String,
        /// Extra configuration file (TOML).
        #[arg(long)]
        config: Option<PathBuf>,
    },
}

/// Parses `90s`, `30m`, `1h`, `7d`.
pub fn parse_ttl(s: &str) -> Result<chrono::Duration, String> {
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: i64 = num.parse().map_err(|_| format!("bad duration `{s}`"))?;
    let d = match unit {
        "s" => chrono::Duration::seconds(n),
        "m" => chrono::Duration::minutes(n),
        "h" | "" => chrono::Duration::hours(n),
        "d" => chrono::Duration::days(n),
        _ => return Err(format!("bad duration unit in `{s}` (s, m, h, d)")),
    };
    if n <= 0 || n > 100_000 {
        return Err(format!("duration `{s}` out of range"));
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
    if settings.auth.jwt_secret.is_empty() {
        return Err(ConfigError(
            "auth.jwt_secret is empty: set OFFER__AUTH__JWT_SECRET to the server's secret".into(),
        ));
    }
    let codec = JwtCodec::new(
        settings.auth.jwt_secret.as_bytes(),
        &settings.auth.jwt_issuer,
        &settings.auth.jwt_audience,
    );
    codec
        .mint(sub, studio, role, ttl)
        .map_err(|e| ConfigError(e.to_string()))
}
