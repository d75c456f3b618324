/*
 * The C ABI's answers to bad input, called from C as a game would: prints one line per case,
 * `NAME CODE`, for tests/c_abi.rs to check against the documented codes.
 * Usage: bad_inputs DATA_DIR (a folder holding svc_config.json) UNUSED_BASE_URL
 */
#include <stdio.h>

#include "offer_sdk.h"

static void config(char *out, size_t size, const char *key, const char *base_url) {
    snprintf(out, size,
             "{\"api_key\":\"%s\",\"game_id\":\"6f9c2d1e-4b7a-4c2e-9d3f-1a2b3c4d5e6f\","
             "\"environment\":\"production\",\"base_url\":\"%s\"}",
             key, base_url);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DATA_DIR UNUSED_BASE_URL\n", argv[0]);
        return 1;
    }
    const char *dir = argv[1];
    char sandbox[512];
    char live[512];
    config(sandbox, sizeof sandbox, "ofr_test_sk_abc", argv[2]);
    config(live, sizeof live, "ofr_live_sk_abc", argv[2]);

    printf("poll_before_init %d\n", SVC_Poll());
    printf("track_before_init %d\n", SVC_Track("{\"type\":\"first_loss\"}"));
    printf("null_config %d\n", SVC_Init(NULL, dir, NULL));
    printf("null_data_dir %d\n", SVC_Init(live, NULL, "player_0"));
    printf("invalid_utf8 %d\n", SVC_Init("{\"api_key\":\"\xff\"}", dir, "player_0"));
    printf("bad_json %d\n", SVC_Init("{not json", dir, "player_0"));
    printf("sandbox_key_in_production %d\n", SVC_Init(sandbox, dir, "player_0"));
    printf("init %d\n", SVC_Init(live, dir, "player_0"));
    printf("init_again %d\n", SVC_Init(live, dir, "player_0"));
    printf("login_when_logged_in %d\n", SVC_Login("player_1"));
    printf("unknown_event %d\n", SVC_Track("{\"type\":\"no_such_event\"}"));
    printf("null_event %d\n", SVC_Track(NULL));
    printf("track %d\n", SVC_Track("{\"type\":\"first_loss\"}"));
    printf("shutdown %d\n", SVC_Shutdown());
    printf("shutdown_again %d\n", SVC_Shutdown());
    return 0;
}
