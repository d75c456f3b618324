//! `offer-engine`: the service binary. Thin on purpose: parsing, logging, then
//! [`offer_engine::startup::run`].

use std::process::ExitCode;

use clap::Parser;
use offer_engine::cli::{Cli, Command, mint_token};
use offer_engine::config::Settings;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Token {
            studio,
            role,
            ttl,
            sub,
            config,
        }) => match mint_token(config.as_deref(), &studio, role, ttl, &sub) {
            Ok(token) => {
                println!("{token}");
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Some(Command::Serve { bind, config }) => serve(bind, config),
        None => serve(None, None),
    }
}

fn serve(bind: Option<std::net::SocketAddr>, config: Option<std::path::PathBuf>) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut settings = match Settings::load(config.as_deref()) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if let Some(bind) = bind {
        settings.server.bind = bind;
    }
    match offer_engine::startup::run(settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("offer-engine: {e}");
    ExitCode::FAILURE
}
