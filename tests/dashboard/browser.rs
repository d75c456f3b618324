//! A headless Chromium for one test: `chromedriver` on a free port, a WebDriver session with
//! `fantoccini`, a member signed in, and a screenshot of each page saved under
//! `target/dashboard-screenshots/` as the test's artefact.

use std::net::TcpListener;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use super::helpers::TestApp;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// Only to avoid hangs: the longest wait for chromedriver to listen.
const DRIVER_START: Duration = Duration::from_secs(30);

/// Only to avoid hangs: the longest wait for a click to bring the next page.
const NAVIGATION: Duration = Duration::from_secs(30);

/// One browser, closed with the test.
pub struct Browser {
    /// The WebDriver session.
    pub client: Client,
    /// The engine's base address, `http://127.0.0.1:PORT`.
    pub base: String,
    driver: Child,
}

impl Drop for Browser {
    /// Kills chromedriver with every process it started: Chromium and its helpers share
    /// chromedriver's process group ([`open`] gives it one of its own). Killing chromedriver
    /// alone left Chromium's utility processes running after every test.
    fn drop(&mut self) {
        if let Ok(id) = i32::try_from(self.driver.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(id),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Fails the test, naming the install command, when a browser part is missing.
fn require(path: &str) {
    assert!(
        Path::new(path).exists(),
        "{path} is missing: the dashboard's browser tests need Debian's chromium and \
         chromium-driver. Install them with: apt-get install -y chromium chromium-driver"
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// Starts chromedriver and a headless Chromium session against `app`.
pub async fn open(app: &TestApp) -> Browser {
    require(CHROMIUM);
    require(CHROMEDRIVER);
    let port = free_port();
    let driver = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        // A process group of its own, which the Chromium it starts joins: one signal on
        // drop ends them all.
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < DRIVER_START,
            "chromedriver did not listen"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let caps = json!({
        "goog:chromeOptions": {
            "binary": CHROMIUM,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000"]
        }
    });
    let serde_json::Value::Object(caps) = caps else {
        unreachable!("an object literal")
    };
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a WebDriver session of headless chromium");
    Browser {
        client,
        base: format!("http://{}", app.addr),
        driver,
    }
}

/// Where the screenshots go: `target/dashboard-screenshots/`.
fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
        PathBuf::from,
    );
    let dir = target.join("dashboard-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot folder");
    dir
}

impl Browser {
    /// Opens a dashboard path.
    pub async fn go(&self, path: &str) {
        self.client
            .goto(&format!("{}{path}", self.base))
            .await
            .expect("navigates");
    }

    /// Saves a PNG of the current page as `name.png`.
    pub async fn shot(&self, name: &str) {
        let png = self.client.screenshot().await.expect("screenshot");
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        std::fs::write(screenshot_dir().join(format!("{name}.png")), png).expect("saved");
    }

    /// The element `css`.
    pub async fn el(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no `{css}` on the page: {e}"))
    }

    /// Whether the page has an element `css`.
    pub async fn has(&self, css: &str) -> bool {
        !self
            .client
            .find_all(Locator::Css(css))
            .await
            .expect("find")
            .is_empty()
    }

    /// Types `text` into the field `css`, replacing what it held.
    pub async fn fill(&self, css: &str, text: &str) {
        let field = self.el(css).await;
        field.clear().await.expect("clear");
        field.send_keys(text).await.expect("type");
    }

    /// Clicks the element `css` (a link or a submit button) and waits until the next page
    /// replaced this one: until the old document's root element is gone.
    pub async fn click(&self, css: &str) {
        let old = self.el("html").await;
        self.el(css).await.click().await.expect("click");
        let started = Instant::now();
        while old.attr("lang").await.is_ok() {
            assert!(
                started.elapsed() < NAVIGATION,
                "no new page after clicking `{css}`"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The whole page's visible text.
    pub async fn text(&self) -> String {
        self.el("body").await.text().await.expect("text")
    }

    /// The current path.
    pub async fn path(&self) -> String {
        self.client
            .current_url()
            .await
            .expect("url")
            .path()
            .to_owned()
    }

    /// Signs in through the form.
    pub async fn sign_in(&self, email: &str, password: &str) {
        self.go("/dashboard/sign-in").await;
        self.fill("#email", email).await;
        self.fill("#password", password).await;
        self.click("form button[type=submit]").await;
    }
}

/// A password every test member has.
pub const PASSWORD: &str = "a long test password";

/// Adds a member to the admin token's studio (`studio-a`) through the REST API.
pub async fn add_member(app: &TestApp, email: &str, role: &str) {
    add_member_as(app, &app.admin, email, role).await;
}

/// Adds a member with an admin token of the member's studio.
pub async fn add_member_as(app: &TestApp, admin_token: &str, email: &str, role: &str) {
    app.post(
        "/v1/studio/members",
        json!({"email": email, "password": PASSWORD, "role": role}),
    )
    .token(admin_token)
    .expect(reqwest::StatusCode::CREATED)
    .await;
}
