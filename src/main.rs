//! `offer-engine`: the service binary. Thin on purpose: parsing, logging, then
//! [`offer_engine::startup::run`].

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;
use offer_engine::cli::{Cli, Command, MemberCommand, ServeArgs, mint_token};
use offer_engine::config::Settings;

/// mimalloc: the offer path makes small, short-lived allocations on every request, and a
/// profile under load showed glibc's allocator taking about 13% of the CPU there. The
/// `system-allocator` feature keeps the system's, for heap profilers that watch `malloc`.
///
/// It is built without its transparent-huge-page advice (`no_thp`): mimalloc otherwise
/// asks the kernel for 2 MiB pages over its regions, and every huge page a few live
/// allocations touch stays resident whole. With 10,000 idle WebSocket sessions that was a
/// fifth of the engine's memory (7.65 against 6.5 KiB a session), for no measurable gain on
/// the offer path.
#[cfg(not(feature = "system-allocator"))]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        Some(Command::Member {
            action:
                MemberCommand::Add {
                    studio,
                    email,
                    role,
                    config,
                },
        }) => match offer_engine::member_add::run(config.as_deref(), &studio, &email, role) {
            Ok(member) => {
                println!(
                    "added {} ({:?}) to studio `{}`: sign in at /dashboard",
                    member.email, member.role, member.studio_id
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(&e),
        },
        Some(Command::ExportLedger {
            game,
            since,
            env,
            config,
        }) => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            match offer_engine::export::run(config.as_deref(), game, env, since, &mut out) {
                Ok(_) => ExitCode::SUCCESS,
                Err(e) => fail(&e),
            }
        }
        Some(Command::Serve(args)) => serve(args),
        None => serve(cli.serve),
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    // Colour only for a person at a terminal, never into a log file.
    tracing_subscriber::fmt()
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut settings = match Settings::load(args.config.as_deref()) {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    if let Some(bind) = args.bind {
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
