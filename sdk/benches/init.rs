//! How long `Sdk::init` keeps the caller: it checks the configuration, reads `svc_config.json`
//! and the cached state and starts the SDK's thread, and must return well within a frame
//! (under 1 ms). The engine's address is a port nothing listens on: init never waits on the
//! network, so what happens there does not change the figure. Only the call is timed; the SDK
//! is dropped (its thread joined) outside the measurement.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use offer_sdk::{InitOptions, Sdk};

fn init(c: &mut Criterion) {
    let root = std::env::temp_dir().join(format!("offer-sdk-bench-{}", std::process::id()));
    std::fs::create_dir_all(&root).expect("bench folder");
    std::fs::write(
        root.join("svc_config.json"),
        r#"{"auto_login": true, "player_id_source": "custom"}"#,
    )
    .expect("svc_config.json");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let config = format!(
        r#"{{"api_key": "ofr_live_sk_bench", "game_id": "6f9c2d1e-4b7a-4c2e-9d3f-1a2b3c4d5e6f",
             "environment": "production", "base_url": "http://127.0.0.1:{port}"}}"#
    );
    c.bench_function("Sdk::init returns to the caller", |b| {
        b.iter_custom(|iterations| {
            let mut spent = Duration::ZERO;
            for _ in 0..iterations {
                let start = Instant::now();
                let sdk = Sdk::init(
                    &config,
                    Some("player_0".into()),
                    None,
                    InitOptions::new(&root, &root),
                )
                .expect("init");
                spent += start.elapsed();
                drop(sdk);
            }
            spent
        });
    });
    let _ = std::fs::remove_dir_all(&root);
}

criterion_group! {
    name = benches;
    // Few, short samples: each iteration also starts and joins a thread outside the timing.
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(2));
    targets = init
}
criterion_main!(benches);
