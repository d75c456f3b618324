/*
 * A C game with the default SIGPIPE action of a C process, whose SDK threads get SIGPIPE as
 * the kernel raises it for a write to a connection the peer closed: directed at the writing
 * thread. Waits for OnSDKReady (so the SDK's threads have opened their connections), raises
 * SIGPIPE at every thread of the process but its own (all of them the SDK's), then tracks a
 * money event and polls until its balance comes back (OnBalanceUpdate), and shuts down,
 * printing `signalled N` and each result. The process lives only if every SDK thread blocks
 * SIGPIPE. Linux only (tgkill, /proc).
 * Usage: sigpipe_host CONFIG_JSON
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "host.h"

static int ready = 0;
static int balance = 0;

static void on_balance(const char *json, void *user_data) {
    printf("balance %s\n", json);
    *(int *)user_data = 1;
}

/* Raises SIGPIPE at each thread of the process but the calling one; returns how many. */
static int signal_other_threads(void) {
    pid_t self = (pid_t)syscall(SYS_gettid);
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) {
        return -1;
    }
    int signalled = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks)) != NULL) {
        pid_t tid = (pid_t)atoi(entry->d_name);
        if (tid <= 0 || tid == self) {
            continue;
        }
        if (syscall(SYS_tgkill, getpid(), tid, SIGPIPE) == 0) {
            signalled++;
        }
    }
    closedir(tasks);
    return signalled;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s CONFIG_JSON\n", argv[0]);
        return 1;
    }
    SVC_SetOnSDKReady(on_ready, &ready);
    SVC_SetOnBalanceUpdate(on_balance, &balance);
    printf("init %d\n", SVC_Init(argv[1]));
    for (int i = 0; i < 1200 && !ready; i++) {
        frame();
    }
    if (!ready) {
        printf("never ready\n");
        return 3;
    }
    printf("signalled %d\n", signal_other_threads());
    fflush(stdout);
    printf("track %d\n",
           SVC_Track("{\"type\":\"currency_earned\",\"currency_id\":\"gems\",\"amount\":9,"
                     "\"tx_id\":\"after-sigpipe\"}"));
    for (int i = 0; i < 1200 && !balance; i++) {
        frame();
    }
    printf("shutdown %d\n", SVC_Shutdown());
    return 0;
}
