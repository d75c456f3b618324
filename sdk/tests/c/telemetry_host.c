/*
 * A C game that tracks heavy telemetry through the C ABI, with the default SIGPIPE action of
 * a C process (a SIGPIPE raised by the SDK's writes would end it): waits for OnSDKReady,
 * tracks one huge event, LARGE_COUNT `currency_earned` events of LARGE_KB each (amount 1),
 * one `currency_earned` of ALONE_KB (amount 7; none when 0) and MONEY_COUNT small
 * `currency_earned` events (amount 1000), printing each result, then polls once a frame until
 * STOP_FILE exists, shuts down and exits 0. tests/c_abi.rs checks the balance at the engine.
 * Usage: telemetry_host CONFIG_JSON STOP_FILE HUGE_MB LARGE_COUNT LARGE_KB ALONE_KB MONEY_COUNT
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host.h"

static int ready = 0;

/* `currency_earned` of `amount` gems with a `source` of `source_bytes` bytes. */
static SVC_Result track_earned(long amount, size_t source_bytes, const char *tx_id) {
    const char *head = "{\"type\":\"currency_earned\",\"currency_id\":\"gems\",\"amount\":";
    size_t size = strlen(head) + source_bytes + strlen(tx_id) + 96;
    char *json = malloc(size);
    if (json == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    int at = snprintf(json, size, "%s%ld,\"tx_id\":\"%s\",\"source\":\"", head, amount, tx_id);
    memset(json + at, 's', source_bytes);
    strcpy(json + at + source_bytes, "\"}");
    SVC_Result result = SVC_Track(json);
    free(json);
    return result;
}

/* `count` events of `track_earned`, their tx ids `prefix-0`, `prefix-1`, ...: how many the SDK
 * took. */
static int track_many(long count, long amount, size_t source_bytes, const char *prefix) {
    int ok = 0;
    for (long i = 0; i < count; i++) {
        char tx_id[32];
        snprintf(tx_id, sizeof tx_id, "%s-%ld", prefix, i);
        ok += track_earned(amount, source_bytes, tx_id) == SVC_OK;
    }
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr,
                "usage: %s CONFIG_JSON STOP_FILE HUGE_MB LARGE_COUNT LARGE_KB ALONE_KB "
                "MONEY_COUNT\n",
                argv[0]);
        return 1;
    }
    long huge_mb = atol(argv[3]);
    long large_count = atol(argv[4]);
    long large_kb = atol(argv[5]);
    long alone_kb = atol(argv[6]);
    long money_count = atol(argv[7]);

    SVC_SetOnSDKReady(on_ready, &ready);
    printf("init %d\n", SVC_Init(argv[1]));
    fflush(stdout);
    for (int i = 0; i < 1200 && !ready; i++) {
        frame();
    }
    if (!ready) {
        printf("never ready\n");
        return 3;
    }
    printf("ready\n");
    if (huge_mb > 0) {
        printf("track_huge %d\n", track_earned(1, (size_t)huge_mb << 20, "huge"));
    }
    printf("track_large %d\n", track_many(large_count, 1, (size_t)large_kb << 10, "large"));
    if (alone_kb > 0) {
        printf("track_alone %d\n", track_earned(7, (size_t)alone_kb << 10, "alone"));
    }
    printf("track_money %d\n", track_many(money_count, 1000, 4, "money"));
    fflush(stdout);
    for (int i = 0; i < 2400; i++) {
        FILE *stop = fopen(argv[2], "r");
        if (stop != NULL) {
            fclose(stop);
            printf("shutdown %d\n", SVC_Shutdown());
            return 0;
        }
        frame();
    }
    printf("never told to stop\n");
    return 4;
}
