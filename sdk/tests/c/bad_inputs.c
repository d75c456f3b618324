/*
 * The C ABI's answers to bad input, called from C as a game would: prints one line per case,
 * `NAME CODE`, for tests/c_abi.rs to check against the documented codes.
 * Usage: bad_inputs DATA_DIR (a folder holding svc_config.json) UNUSED_BASE_URL
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offer_sdk.h"

static void config(char *out, size_t size, const char *key, const char *base_url,
                   const char *extra) {
    snprintf(out, size,
             "{\"api_key\":\"%s\",\"game_id\":\"6f9c2d1e-4b7a-4c2e-9d3f-1a2b3c4d5e6f\","
             "\"environment\":\"production\",\"base_url\":\"%s\"%s}",
             key, base_url, extra);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DATA_DIR UNUSED_BASE_URL\n", argv[0]);
        return 1;
    }
    char install[1024];
    char no_svc_config[1024];
    char bad_data_dir[64];
    snprintf(install, sizeof install, ",\"data_dir\":\"%s\",\"player_id\":\"player_0\"",
             argv[1]);
    snprintf(no_svc_config, sizeof no_svc_config, ",\"data_dir\":\"%s/missing\"", argv[1]);
    snprintf(bad_data_dir, sizeof bad_data_dir, ",\"data_dir\":7");
    char sandbox[2048];
    char live[2048];
    char missing[2048];
    char wrong_kind[2048];
    config(sandbox, sizeof sandbox, "ofr_test_sk_abc", argv[2], install);
    config(live, sizeof live, "ofr_live_sk_abc", argv[2], install);
    config(missing, sizeof missing, "ofr_live_sk_abc", argv[2], no_svc_config);
    config(wrong_kind, sizeof wrong_kind, "ofr_live_sk_abc", argv[2], bad_data_dir);

    printf("poll_before_init %d\n", SVC_Poll());
    printf("track_before_init %d\n", SVC_Track("{\"type\":\"first_loss\"}"));
    printf("null_config %d\n", SVC_Init(NULL));
    printf("invalid_utf8 %d\n", SVC_Init("{\"api_key\":\"\xff\"}"));
    printf("bad_json %d\n", SVC_Init("{not json"));
    printf("data_dir_not_a_string %d\n", SVC_Init(wrong_kind));
    printf("no_svc_config %d\n", SVC_Init(missing));
    printf("sandbox_key_in_production %d\n", SVC_Init(sandbox));
    printf("init %d\n", SVC_Init(live));
    printf("init_again %d\n", SVC_Init(live));
    printf("login_when_logged_in %d\n", SVC_Login("player_1"));
    printf("unknown_event %d\n", SVC_Track("{\"type\":\"no_such_event\"}"));
    printf("null_event %d\n", SVC_Track(NULL));
    printf("track %d\n", SVC_Track("{\"type\":\"first_loss\"}"));
    /* A 3 MB `source`: longer than the engine takes in one request. */
    const char *head = "{\"type\":\"currency_earned\",\"currency_id\":\"gems\",\"amount\":1,"
                       "\"tx_id\":\"big\",\"source\":\"";
    size_t source = 3u << 20;
    char *too_large = malloc(strlen(head) + source + 3);
    if (too_large == NULL) {
        return 2;
    }
    strcpy(too_large, head);
    memset(too_large + strlen(head), 's', source);
    strcpy(too_large + strlen(head) + source, "\"}");
    printf("track_too_large %d\n", SVC_Track(too_large));
    free(too_large);
    printf("shutdown %d\n", SVC_Shutdown());
    printf("shutdown_again %d\n", SVC_Shutdown());
    return 0;
}
