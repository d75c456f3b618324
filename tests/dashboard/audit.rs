//! The audit trail page: a change made in the dashboard is recorded as the member's, through
//! the dashboard, and shows on the page with the filters applied; only admins read it.

use reqwest::StatusCode;

use super::browser::add_member;
use super::helpers::spawn_app;
use super::web::{get_page, post_form, sign_in};

#[tokio::test]
async fn a_dashboard_change_is_recorded_as_the_members_and_the_page_filters_it() {
    let app = spawn_app().await;
    let game = app.create_game().await;
    add_member(&app, "boss@studio-a.test", "admin").await;
    let boss = sign_in(&app, "boss@studio-a.test").await;
    let answer = post_form(
        &app,
        &format!("/dashboard/games/{game}/kill-switch"),
        Some(&boss.cookie),
        &[
            ("csrf", &boss.csrf),
            ("level", "2"),
            ("reason", "exploit"),
            ("confirmed", "yes"),
        ],
    )
    .await;
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);

    let records = app
        .get_json(format!("/v1/studio/audit?game_id={game}"))
        .await;
    let kill = &records["entries"][0];
    assert_eq!(kill["action"], "kill_switch.set", "{records}");
    assert_eq!(kill["via"], "dashboard");
    assert_eq!(kill["actor"]["id"], "boss@studio-a.test");

    let path = format!("/dashboard/games/{game}/audit");
    let page = get_page(&app, &path, &boss.cookie).await;
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.expect("page");
    assert!(page.contains("data-action=\"kill_switch.set\""), "{page}");
    assert!(page.contains("data-action=\"game.create\""), "{page}");
    let filtered = get_page(
        &app,
        &format!("{path}?action=kill_switch&since="),
        &boss.cookie,
    )
    .await
    .text()
    .await
    .expect("page");
    assert!(
        filtered.contains("data-action=\"kill_switch.set\""),
        "{filtered}"
    );
    assert!(
        !filtered.contains("data-action=\"game.create\""),
        "{filtered}"
    );
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1)).date_naive();
    let later = get_page(&app, &format!("{path}?since={tomorrow}"), &boss.cookie)
        .await
        .text()
        .await
        .expect("page");
    assert!(later.contains("No change recorded"), "{later}");

    add_member(&app, "viewer@studio-a.test", "viewer").await;
    let viewer = sign_in(&app, "viewer@studio-a.test").await;
    let refused = get_page(&app, &path, &viewer.cookie).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);

    // Signing in and out are the member's own changes, recorded without the session's
    // secrets.
    let out = post_form(
        &app,
        "/dashboard/sign-out",
        Some(&viewer.cookie),
        &[("csrf", &viewer.csrf)],
    )
    .await;
    assert_eq!(out.status(), StatusCode::SEE_OTHER);
    let studio = app.get_json("/v1/studio/audit").await;
    let of_viewer = |action: &str| {
        studio["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .filter(|e| e["action"] == action && e["actor"]["id"] == "viewer@studio-a.test")
            .count()
    };
    assert_eq!(of_viewer("member.sign_in"), 1, "{studio}");
    assert_eq!(of_viewer("member.sign_out"), 1, "{studio}");
    let text = studio.to_string();
    assert!(!text.contains(&viewer.csrf), "the CSRF token leaked");
    let cookie = viewer.cookie.split('=').nth(1).expect("cookie value");
    assert!(!text.contains(cookie), "the session id leaked");
}
