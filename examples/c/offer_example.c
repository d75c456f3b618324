/*
 * A game client in C on the offer SDK's C ABI (sdk/include/offer_sdk.h): it registers the
 * seven callbacks, starts the SDK, asks for an offer at the player's first loss, buys it (a
 * `purchase`, plus a `currency_earned` with source `purchase` for each currency pack in it),
 * waits for the inventory and balance updates it brings, and hides its store when the kill
 * switch turns offers off. Callbacks run inside SVC_Poll, called once a frame from this main
 * loop.
 *
 * A game whose studio signs its players' tokens (player identity `required`) gives the SDK the
 * player's token at init and a new one whenever the SDK asks (OnPlayerTokenNeeded, before the
 * token expires or when the engine refused it). Here the studio's backend is a file: set
 * OFFER_PLAYER_TOKEN_FILE to it, and the game reads the token there (its `sub` is the player
 * id: `player_id_source: jwt`).
 *
 * Usage: offer_example_c BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID
 * Prints one line per step; exits 0 once the kill switch has turned offers off, 1 when init
 * fails, 2 when nothing happens for two minutes, 3 when no offer comes.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "offer_sdk.h"

/* This game's currency packs: what a purchase of each credits. A game knows its own store. */
struct pack {
    const char *item_id;
    const char *currency_id;
    long amount;
};
static const struct pack PACKS[] = {{"gems_500", "gems", 500}};
static const size_t PACK_COUNT = sizeof PACKS / sizeof PACKS[0];

/* What the game remembers between frames. */
struct game {
    int bought;            /* the offer was bought */
    int waiting_inventory; /* an item was bought: an inventory update is due */
    int waiting_balance;   /* a currency pack was bought: a balance update is due */
    int settled;           /* every update due has come */
    int done;              /* the store is hidden: the example ends */
    int exit_code;
};

/*
 * Copies the string value of the first `"key":"..."` at or after `from` into `out`; returns a
 * pointer just past it, or NULL. The SDK's JSON is compact (no spaces), which keeps this
 * example free of a JSON library; a real game uses the one it already has.
 */
static const char *json_string(const char *from, const char *key, char *out, size_t size) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    const char *start = strstr(from, pattern);
    if (start == NULL) {
        return NULL;
    }
    start += strlen(pattern);
    const char *end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= size) {
        return NULL;
    }
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return end + 1;
}

/* The integer value of the first `"key":N` in `json`, or `fallback`. */
static long json_int(const char *json, const char *key, long fallback) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *start = strstr(json, pattern);
    return start == NULL ? fallback : strtol(start + strlen(pattern), NULL, 10);
}

static const struct pack *pack_of(const char *item_id) {
    for (size_t i = 0; i < PACK_COUNT; i++) {
        if (strcmp(PACKS[i].item_id, item_id) == 0) {
            return &PACKS[i];
        }
    }
    return NULL;
}

static void check_settled(struct game *game) {
    if (game->bought && !game->settled && !game->waiting_inventory && !game->waiting_balance) {
        game->settled = 1;
        printf("purchase settled\n");
    }
}

static void on_ready(const char *json, void *user_data) {
    (void)user_data;
    printf("ready %s\n", json);
    /* The player just lost for the first time: a moment for an offer. */
    SVC_RequestOffer("first_loss");
}

static void on_offer(const char *json, void *user_data) {
    struct game *game = user_data;
    printf("offer %s\n", json);
    if (game->bought) {
        return;
    }
    char offer_id[64];
    if (json_string(json, "offer_id", offer_id, sizeof offer_id) == NULL) {
        printf("offer without an offer_id\n");
        return;
    }
    long price_cents = json_int(json, "price_cents", 0);
    /* The items bought, as a JSON array of ids; and what each credits or adds. */
    char item_ids[1024] = "";
    size_t used = 0;
    char item_id[128];
    const char *cursor = strstr(json, "\"items\":");
    while (cursor != NULL && (cursor = json_string(cursor, "item_id", item_id, sizeof item_id))) {
        used += (size_t)snprintf(item_ids + used, sizeof item_ids - used, "%s\"%s\"",
                                 used == 0 ? "" : ",", item_id);
        if (used >= sizeof item_ids) {
            printf("too many items\n");
            return;
        }
        const struct pack *pack = pack_of(item_id);
        if (pack != NULL) {
            char earned[512];
            snprintf(earned, sizeof earned,
                     "{\"type\":\"currency_earned\",\"currency_id\":\"%s\",\"amount\":%ld,"
                     "\"source\":\"purchase\",\"tx_id\":\"pack-%s-%s\"}",
                     pack->currency_id, pack->amount, item_id, offer_id);
            /* The engine pushes the new balance to the player's sockets: OnBalanceUpdate. */
            printf("track currency_earned %d\n", SVC_Track(earned));
            game->waiting_balance = 1;
        } else {
            game->waiting_inventory = 1;
        }
    }
    char purchase[2048];
    snprintf(purchase, sizeof purchase,
             "{\"type\":\"purchase\",\"offer_id\":\"%s\",\"item_ids\":[%s],"
             "\"price_cents\":%ld,\"tx_id\":\"buy-%s\"}",
             offer_id, item_ids, price_cents, offer_id);
    printf("track purchase %d\n", SVC_Track(purchase));
    game->bought = 1;
    printf("bought %s\n", offer_id);
    check_settled(game);
}

static void on_no_offer(const char *json, void *user_data) {
    struct game *game = user_data;
    printf("no offer %s\n", json);
    if (!game->bought) {
        game->done = 1;
        game->exit_code = 3;
    }
}

static void on_balance(const char *json, void *user_data) {
    struct game *game = user_data;
    printf("balance %s\n", json);
    if (game->bought) {
        game->waiting_balance = 0;
        check_settled(game);
    }
}

static void on_inventory(const char *json, void *user_data) {
    struct game *game = user_data;
    printf("inventory %s\n", json);
    if (game->bought) {
        game->waiting_inventory = 0;
        check_settled(game);
    }
}

static void on_kill_switch(const char *json, void *user_data) {
    struct game *game = user_data;
    printf("kill switch %s\n", json);
    if (json_int(json, "level", 0) >= 2) {
        printf("offers are off: store hidden\n");
        game->done = 1;
        game->exit_code = 0;
    }
}

static void on_config(const char *json, void *user_data) {
    (void)user_data;
    printf("config %s\n", json);
}

/*
 * Asks the studio's backend for the player's token: this example's backend is the file that
 * OFFER_PLAYER_TOKEN_FILE names. Returns 1 with the token in `out`, 0 for a game without
 * signed player identity.
 */
static int backend_token(char *out, size_t size) {
    const char *path = getenv("OFFER_PLAYER_TOKEN_FILE");
    if (path == NULL) {
        return 0;
    }
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        return 0;
    }
    size_t read = fread(out, 1, size - 1, file);
    fclose(file);
    while (read > 0 && (out[read - 1] == '\n' || out[read - 1] == '\r')) {
        read--;
    }
    out[read] = '\0';
    return read > 0;
}

static void on_player_token_needed(const char *json, void *user_data) {
    (void)user_data;
    printf("player token needed %s\n", json);
    char token[8192];
    if (backend_token(token, sizeof token)) {
        printf("set player token %d\n", SVC_SetPlayerToken(token));
    }
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s BASE_URL GAME_ID SDK_KEY DATA_DIR PLAYER_ID\n", argv[0]);
        return 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct game game = {0};
    game.exit_code = 2;

    printf("registered OnSDKReady %d\n", SVC_SetOnSDKReady(on_ready, &game));
    printf("registered OnOfferReceived %d\n", SVC_SetOnOfferReceived(on_offer, &game));
    printf("registered OnBalanceUpdate %d\n", SVC_SetOnBalanceUpdate(on_balance, &game));
    printf("registered OnInventoryUpdate %d\n", SVC_SetOnInventoryUpdate(on_inventory, &game));
    printf("registered OnNoOffer %d\n", SVC_SetOnNoOffer(on_no_offer, &game));
    printf("registered OnKillSwitchChanged %d\n",
           SVC_SetOnKillSwitchChanged(on_kill_switch, &game));
    printf("registered OnConfigUpdated %d\n", SVC_SetOnConfigUpdated(on_config, &game));
    printf("registered OnPlayerTokenNeeded %d\n",
           SVC_SetOnPlayerTokenNeeded(on_player_token_needed, &game));
    char token[8192];
    int signed_identity = backend_token(token, sizeof token);

    /* The game's svc_config.json, shipped with the build; written here so the example runs
     * from any folder. */
    char path[4096];
    snprintf(path, sizeof path, "%s/svc_config.json", argv[4]);
    FILE *svc = fopen(path, "w");
    if (svc == NULL) {
        perror(path);
        return 1;
    }
    fprintf(svc, "{\"auto_login\": true, \"player_id_source\": \"%s\"}",
            signed_identity ? "jwt" : "custom");
    fclose(svc);

    /* One JSON object: the SDK configuration, the SDK's folder and the game's player id, or
     * its signed token. (The arguments are plain ids and paths, a token base64url; a real game
     * builds it with its JSON library.) */
    char config[16384];
    if (signed_identity) {
        snprintf(config, sizeof config,
                 "{\"api_key\":\"%s\",\"game_id\":\"%s\",\"environment\":\"production\","
                 "\"base_url\":\"%s\",\"data_dir\":\"%s\",\"player_token\":\"%s\"}",
                 argv[3], argv[2], argv[1], argv[4], token);
    } else {
        snprintf(config, sizeof config,
                 "{\"api_key\":\"%s\",\"game_id\":\"%s\",\"environment\":\"production\","
                 "\"base_url\":\"%s\",\"data_dir\":\"%s\",\"player_id\":\"%s\"}",
                 argv[3], argv[2], argv[1], argv[4], argv[5]);
    }
    SVC_Result init = SVC_Init(config);
    printf("init %d\n", init);
    if (init != SVC_OK) {
        return 1;
    }

    /* The frame loop: callbacks run here, on the game's thread. */
    double deadline = now_seconds() + 120.0;
    while (!game.done && now_seconds() < deadline) {
        SVC_Poll();
        struct timespec frame = {0, 16 * 1000 * 1000};
        nanosleep(&frame, NULL);
    }
    printf("shutdown %d\n", SVC_Shutdown());
    return game.exit_code;
}
