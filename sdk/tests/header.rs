//! `sdk/include/offer_sdk.h` is what cbindgen makes of the C ABI now: the test regenerates it
//! and fails when the committed header differs, so the header never drifts from the code.

use std::path::Path;
use std::process::Command;

#[test]
fn the_committed_header_is_what_cbindgen_generates() {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = sdk.parent().expect("the SDK is a workspace member");
    let fresh = std::env::temp_dir().join(format!("offer_sdk-{}.h", uuid::Uuid::new_v4()));
    let output = Command::new("cbindgen")
        .current_dir(root)
        .args([
            "--config",
            "sdk/cbindgen.toml",
            "--crate",
            "offer-sdk",
            "--quiet",
            "--output",
        ])
        .arg(&fresh)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run cbindgen ({e}): install it with `cargo install cbindgen --locked`")
        });
    assert!(
        output.status.success(),
        "cbindgen failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let generated = std::fs::read_to_string(&fresh).expect("the generated header");
    let _ = std::fs::remove_file(&fresh);
    let committed =
        std::fs::read_to_string(sdk.join("include/offer_sdk.h")).expect("the committed header");
    assert!(
        generated == committed,
        "sdk/include/offer_sdk.h is out of date: regenerate it with\n  \
         cbindgen --config sdk/cbindgen.toml --crate offer-sdk --output sdk/include/offer_sdk.h\n\
         from the workspace root"
    );
}
