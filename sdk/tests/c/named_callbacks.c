/*
 * The C ABI's callbacks registered by name and the init keys a wrapper passes, called from C
 * as a game would: registers the seven callbacks with SVC_RegisterCallback and the header's
 * SVC_Dart_On... constants, checks the codes of bad names, bad init keys and bad player
 * tokens, then starts the SDK with the session id it is given and waits for OnSDKReady.
 * Prints one line per step (`NAME CODE`, and `callback NAME JSON` for each callback run), for
 * tests/c_abi.rs to check with the SDK's device log in the same stream.
 * Usage: named_callbacks BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID SESSION_ID
 * Exits 0 once OnSDKReady has run, 1 on a bad command line, 2 when it does not come.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "offer_sdk.h"

/* The callbacks' names: the header's constants. */
static const char *const NAMES[] = {
    SVC_Dart_OnSDKReady, SVC_Dart_OnOfferReceived,     SVC_Dart_OnBalanceUpdate,
    SVC_Dart_OnInventoryUpdate, SVC_Dart_OnNoOffer, SVC_Dart_OnKillSwitchChanged,
    SVC_Dart_OnConfigUpdated,
};
static const size_t NAME_COUNT = sizeof NAMES / sizeof NAMES[0];

static int ready;

/* One function for every callback: its user data is the callback's name. */
static void on_callback(const char *json, void *user_data) {
    const char *name = user_data;
    printf("callback %s %s\n", name, json);
    if (strcmp(name, SVC_Dart_OnSDKReady) == 0) {
        ready = 1;
    }
}

static void write_svc_config(const char *dir, const char *source) {
    char path[4096];
    snprintf(path, sizeof path, "%s/svc_config.json", dir);
    FILE *file = fopen(path, "w");
    if (file != NULL) {
        fprintf(file, "{\"auto_login\": true, \"player_id_source\": \"%s\"}", source);
        fclose(file);
    }
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID SESSION_ID\n",
                argv[0]);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *base_url = argv[1], *game_id = argv[2], *key = argv[3], *dir = argv[4],
               *player = argv[5], *session = argv[6];

    for (size_t i = 0; i < NAME_COUNT; i++) {
        printf("register %s %d\n", NAMES[i],
               SVC_RegisterCallback(NAMES[i], on_callback, (void *)NAMES[i]));
    }
    printf("register_unknown_name %d\n", SVC_RegisterCallback("SVC_Dart_OnNothing", on_callback, NULL));
    printf("register_null_name %d\n", SVC_RegisterCallback(NULL, on_callback, NULL));
    printf("set_token_before_init %d\n", SVC_SetPlayerToken("a.e30.c"));

    char config[8192];
    /* An unknown init key is refused, as is a session id that is no UUID. */
    snprintf(config, sizeof config,
             "{\"api_key\":\"%s\",\"game_id\":\"%s\",\"environment\":\"production\","
             "\"base_url\":\"%s\",\"data_dir\":\"%s\",\"player_id\":\"%s\","
             "\"session_id\":\"%s\",\"unknown_key\":1}",
             key, game_id, base_url, dir, player, session);
    printf("init_unknown_key %d\n", SVC_Init(config));
    snprintf(config, sizeof config,
             "{\"api_key\":\"%s\",\"game_id\":\"%s\",\"environment\":\"production\","
             "\"base_url\":\"%s\",\"data_dir\":\"%s\",\"player_id\":\"%s\","
             "\"session_id\":\"not-a-uuid\"}",
             key, game_id, base_url, dir, player);
    printf("init_bad_session_id %d\n", SVC_Init(config));
    /* The jwt source without a token, then with one that does not read. */
    write_svc_config(dir, "jwt");
    snprintf(config, sizeof config,
             "{\"api_key\":\"%s\",\"game_id\":\"%s\",\"environment\":\"production\","
             "\"base_url\":\"%s\",\"data_dir\":\"%s\"}",
             key, game_id, base_url, dir);
    printf("init_jwt_without_token %d\n", SVC_Init(config));
    snprintf(config, sizeof config,
             "{\"api_key\":\"%s\",\"game_id\":\"%s\",\"environment\":\"production\","
             "\"base_url\":\"%s\",\"data_dir\":\"%s\",\"player_token\":\"not-a-jwt\"}",
             key, game_id, base_url, dir);
    printf("init_unreadable_token %d\n", SVC_Init(config));

    /* The four init keys a wrapper passes: the game, the player, the session and the key. */
    write_svc_config(dir, "custom");
    snprintf(config, sizeof config,
             "{\"api_key\":\"%s\",\"game_id\":\"%s\",\"environment\":\"production\","
             "\"base_url\":\"%s\",\"data_dir\":\"%s\",\"player_id\":\"%s\","
             "\"session_id\":\"%s\"}",
             key, game_id, base_url, dir, player, session);
    printf("init %d\n", SVC_Init(config));
    printf("set_unreadable_token %d\n", SVC_SetPlayerToken("not-a-jwt"));
    /* {"sub":"someone_else"}: a token of another player than the session's. */
    printf("set_other_players_token %d\n",
           SVC_SetPlayerToken("eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJzb21lb25lX2Vsc2UifQ.c2ln"));

    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        SVC_Poll();
        if (ready) {
            break;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 60) {
            printf("no ready\n");
            SVC_Shutdown();
            return 2;
        }
        struct timespec frame = {0, 16 * 1000 * 1000};
        nanosleep(&frame, NULL);
    }
    printf("shutdown %d\n", SVC_Shutdown());
    return 0;
}
