/*
 * A refused player token through the C ABI, as a game would meet it: the game starts with a
 * token the engine refuses, hears OnPlayerTokenNeeded (`refused`, with the engine's code),
 * finds SVC_RequestOffer answering SVC_ERR_PLAYER_TOKEN meanwhile, gives the good token with
 * SVC_SetPlayerToken, and the session opens (OnSDKReady). Prints one line per step (`NAME
 * CODE`, and `callback NAME JSON`), for tests/c_abi.rs to check.
 * Usage: refused_token BASE_URL GAME_ID SDK_KEY DATA_DIR REFUSED_TOKEN GOOD_TOKEN
 * Exits 0 once OnSDKReady has run after the good token, 1 on a bad command line, 2 when a step
 * does not come within a minute.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "offer_sdk.h"

static int needed;
static int ready;

static void on_token_needed(const char *json, void *user_data) {
    (void)user_data;
    printf("callback %s %s\n", SVC_Dart_OnPlayerTokenNeeded, json);
    needed = 1;
}

static void on_ready(const char *json, void *user_data) {
    (void)user_data;
    printf("callback %s %s\n", SVC_Dart_OnSDKReady, json);
    ready = 1;
}

/* Runs frames until `*flag` is set; 0 when it is, 2 after a minute. */
static int frames_until(const int *flag) {
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!*flag) {
        SVC_Poll();
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 60) {
            return 2;
        }
        struct timespec frame = {0, 16 * 1000 * 1000};
        nanosleep(&frame, NULL);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr,
                "usage: %s BASE_URL GAME_ID SDK_KEY DATA_DIR REFUSED_TOKEN GOOD_TOKEN\n",
                argv[0]);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("register %d\n", SVC_SetOnPlayerTokenNeeded(on_token_needed, NULL));
    printf("register %d\n", SVC_RegisterCallback(SVC_Dart_OnSDKReady, on_ready, NULL));

    char path[4096];
    snprintf(path, sizeof path, "%s/svc_config.json", argv[4]);
    FILE *svc = fopen(path, "w");
    if (svc == NULL) {
        return 1;
    }
    fputs("{\"auto_login\": true, \"player_id_source\": \"jwt\"}", svc);
    fclose(svc);
    char config[16384];
    snprintf(config, sizeof config,
             "{\"api_key\":\"%s\",\"game_id\":\"%s\",\"environment\":\"production\","
             "\"base_url\":\"%s\",\"data_dir\":\"%s\",\"player_token\":\"%s\"}",
             argv[3], argv[2], argv[1], argv[4], argv[5]);
    printf("init %d\n", SVC_Init(config));
    if (frames_until(&needed) != 0) {
        printf("no token callback\n");
        return 2;
    }
    printf("request_offer_while_refused %d\n", SVC_RequestOffer("first_loss"));
    printf("set_player_token %d\n", SVC_SetPlayerToken(argv[6]));
    if (frames_until(&ready) != 0) {
        printf("no ready\n");
        return 2;
    }
    printf("request_offer %d\n", SVC_RequestOffer("first_loss"));
    printf("shutdown %d\n", SVC_Shutdown());
    return 0;
}
