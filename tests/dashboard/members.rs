//! Studio members through the REST API: an admin adds and lists them, a taken email is a
//! conflict, a non-admin is refused, and revoking a member's sessions signs every browser of
//! the member out at once.

use reqwest::StatusCode;
use reqwest::header::LOCATION;
use serde_json::json;

use super::browser::add_member;
use super::helpers::{Role, spawn_app};
use super::web::{get_page, sign_in};

#[tokio::test]
async fn an_admin_adds_lists_and_signs_members_out() {
    let app = spawn_app().await;
    add_member(&app, "Dev@Studio-A.test", "developer").await;
    // The same email in any case, in any studio, is taken.
    app.post(
        "/v1/studio/members",
        json!({"email": "dev@studio-a.test", "password": "another password", "role": "viewer"}),
    )
    .token(&app.token("studio-b", Role::Admin))
    .expect_error(StatusCode::CONFLICT, "conflict")
    .await;
    app.post(
        "/v1/studio/members",
        json!({"email": "x@studio-a.test", "password": "short", "role": "viewer"}),
    )
    .expect_error(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed")
    .await;
    app.post(
        "/v1/studio/members",
        json!({"email": "y@studio-a.test", "password": "long enough password", "role": "viewer"}),
    )
    .token(&app.token("studio-a", Role::Developer))
    .expect_error(StatusCode::FORBIDDEN, "forbidden")
    .await;
    let listed = app.get_json("/v1/studio/members").await;
    let members = listed["members"].as_array().expect("members");
    assert_eq!(members.len(), 1);
    assert_eq!(members[0]["email"], "dev@studio-a.test");
    assert_eq!(members[0]["role"], "developer");
    assert!(members[0].get("password_hash").is_none());
    // Another studio sees none of them.
    let theirs = app
        .get("/v1/studio/members")
        .token(&app.token("studio-b", Role::Admin))
        .expect(StatusCode::OK)
        .await;
    assert_eq!(theirs["members"].as_array().expect("members").len(), 0);

    let one = sign_in(&app, "dev@studio-a.test").await;
    let two = sign_in(&app, "dev@studio-a.test").await;
    let member_id = members[0]["member_id"].as_str().expect("id");
    app.delete(format!("/v1/studio/members/{member_id}/sessions"))
        .token(&app.token("studio-b", Role::Admin))
        .expect_error(StatusCode::NOT_FOUND, "not_found")
        .await;
    assert_eq!(
        get_page(&app, "/dashboard/games", &one.cookie)
            .await
            .status(),
        StatusCode::OK
    );
    app.delete(format!("/v1/studio/members/{member_id}/sessions"))
        .expect(StatusCode::NO_CONTENT)
        .await;
    for s in [one, two] {
        let page = get_page(&app, "/dashboard/games", &s.cookie).await;
        assert_eq!(page.status(), StatusCode::SEE_OTHER);
        assert_eq!(page.headers()[LOCATION], "/dashboard/sign-in");
    }
    // A new sign-in works again.
    let three = sign_in(&app, "dev@studio-a.test").await;
    assert_eq!(
        get_page(&app, "/dashboard/games", &three.cookie)
            .await
            .status(),
        StatusCode::OK
    );
}

/// The engine binary of this build.
const BIN: &str = env!("CARGO_BIN_EXE_offer-engine");

#[tokio::test]
async fn the_first_admin_is_added_with_the_cli_and_signs_in() {
    let mut settings = super::helpers::settings(super::helpers::Backend::Embedded);
    let db = settings.store.path.clone();
    let cli = |email: &str, stdin: &str, env_password: Option<&str>| {
        let mut c = std::process::Command::new(BIN);
        for (k, _) in std::env::vars() {
            if k.starts_with("OFFER") {
                c.env_remove(k);
            }
        }
        c.env("OFFER__STORE__PATH", &db)
            .args([
                "member", "add", "--studio", "studio-a", "--email", email, "--role", "admin",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(pw) = env_password {
            c.env("OFFER_MEMBER_PASSWORD", pw);
        }
        let mut child = c.spawn().expect("the CLI runs");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
            .expect("write the password");
        child.wait_with_output().expect("the CLI ends")
    };
    // The password from standard input.
    let added = cli(
        "ada@studio-a.test",
        &format!("{}\n", super::browser::PASSWORD),
        None,
    );
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    assert!(String::from_utf8_lossy(&added.stdout).contains("ada@studio-a.test"));
    // The same email again is refused in the API's words; so is a short password.
    let again = cli("ada@studio-a.test", "another long password\n", None);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    let short = cli("bob@studio-a.test", "", Some("short"));
    assert!(!short.status.success());
    assert!(String::from_utf8_lossy(&short.stderr).contains("password"));
    // The password from the environment.
    let env = cli("cy@studio-a.test", "", Some("from the environment"));
    assert!(
        env.status.success(),
        "{}",
        String::from_utf8_lossy(&env.stderr)
    );

    // The engine on that file signs the admin in.
    settings.store.path = db;
    let app = super::helpers::spawn_with(settings).await;
    let s = sign_in(&app, "ada@studio-a.test").await;
    assert_eq!(
        get_page(&app, "/dashboard/games", &s.cookie).await.status(),
        StatusCode::OK
    );
    let listed = app.get_json("/v1/studio/members").await;
    assert_eq!(listed["members"].as_array().expect("members").len(), 2);
}
