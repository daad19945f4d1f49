/*
 * clockskew — an LD_PRELOAD library that moves one process's wall clock.
 *
 * netlab compiles it (cc -shared -fPIC -O2 clockskew.c -o clockskew.so -ldl) and
 * starts nodes with LD_PRELOAD=clockskew.so CLOCKSKEW_FILE=<file>; `netlab clock I
 * OFFSET` writes an offset in seconds (e.g. 10800, -7200) to the file. Wall-clock
 * reads (clock_gettime of CLOCK_REALTIME and CLOCK_REALTIME_COARSE, gettimeofday,
 * time) return real time + offset; the file is read again at most once a second.
 * Monotonic clocks are never touched: exactly what an NTP step or a bad RTC does.
 *
 * (libfaketime does the same, but under it Swift programs lose their command-line
 * arguments, so netlab ships this small library instead.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);
static _Atomic long long offset_seconds;
static _Atomic long long next_read_ns;

static void refresh(void) {
    struct timespec now;
    if (!real_clock_gettime) real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
    if (!real_clock_gettime || real_clock_gettime(CLOCK_MONOTONIC, &now) != 0) return;
    long long ns = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
    long long due = atomic_load(&next_read_ns);
    if (ns < due || !atomic_compare_exchange_strong(&next_read_ns, &due, ns + 1000000000LL)) return;
    const char *path = getenv("CLOCKSKEW_FILE");
    if (!path) return;
    FILE *f = fopen(path, "r");
    if (!f) return;
    long long value = 0;
    if (fscanf(f, "%lld", &value) == 1) atomic_store(&offset_seconds, value);
    fclose(f);
}

int clock_gettime(clockid_t id, struct timespec *ts) {
    if (!real_clock_gettime) real_clock_gettime = dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real_clock_gettime(id, ts);
    if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        refresh();
        ts->tv_sec += atomic_load(&offset_seconds);
    }
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    (void)tz;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
    if (tv) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return 0;
}

time_t time(time_t *out) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
