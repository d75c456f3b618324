//! The dashboard's tests: in headless Chromium driven over WebDriver (`console`), and over
//! plain HTTP for what a browser hides (`security`: CSRF, cookie flags, rate limits, headers,
//! a viewer's refused writes). Every test spawns the real engine with the harness of the HTTP
//! suite, shared here by path.
//!
//! The browser tests need Debian's `chromium` and `chromium-driver`; without them they fail
//! with the command that installs them.

#[allow(dead_code)]
#[path = "../api/fixtures.rs"]
mod fixtures;
#[allow(dead_code)]
#[path = "../api/helpers.rs"]
mod helpers;
#[allow(dead_code)]
#[path = "../api/history.rs"]
mod history;
#[allow(dead_code)]
#[path = "../api/http.rs"]
mod http;
#[allow(dead_code)]
#[path = "../api/redis_harness.rs"]
mod redis_harness;
#[allow(dead_code)]
#[path = "../api/ws_client.rs"]
mod ws_client;

mod audit;
mod browser;
mod console;
mod custom_pages;
mod economy_caps;
mod erasure;
mod experiments;
mod item_art;
mod members;
mod model;
mod offers;
mod revenue;
mod security;
mod statement_lines;
mod web;
