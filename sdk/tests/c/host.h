/*
 * What the C test hosts share: the OnSDKReady callback that raises the flag it is given, and
 * one frame of the game loop (SVC_Poll, then 50 ms). A host defines _POSIX_C_SOURCE (or
 * _GNU_SOURCE) before its first include, for nanosleep.
 */
#ifndef OFFER_TEST_HOST_H
#define OFFER_TEST_HOST_H

#include <time.h>

#include "offer_sdk.h"

static inline void on_ready(const char *json, void *user_data) {
    (void)json;
    *(int *)user_data = 1;
}

static inline void frame(void) {
    struct timespec pause = {0, 50 * 1000 * 1000};
    SVC_Poll();
    nanosleep(&pause, NULL);
}

#endif
