// first-calls.so: an LD_PRELOAD library that records which functions of a binary run,
// in the order of their first call. Used by scripts/release/link-order only.
//
// At load it writes an int3 over the first byte of every function whose offset is
// listed in FIRST_CALLS_OFFSETS (hex offsets from the load base of the binary at the
// path FIRST_CALLS_BINARY, one per line, as `nm` prints them). The first call of a
// function traps; the handler puts the byte back, records the address and resumes at
// the function's start, so every function costs one trap. SIGUSR2 writes the recorded
// offsets, first call first, to FIRST_CALLS_OUTPUT and exits the process.
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static unsigned long *entries;      // sorted absolute addresses of the patched functions
static unsigned char *original;     // the byte each int3 replaced
static long count;
static unsigned long *calls;        // first calls, in order (a race may record one twice)
static volatile long ncalls;
static unsigned long base;

static long find(unsigned long address) {
    long lo = 0, hi = count - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (entries[mid] == address) return mid;
        if (entries[mid] < address) lo = mid + 1; else hi = mid - 1;
    }
    return -1;
}

static void on_trap(int sig, siginfo_t *info, void *context) {
    (void)sig; (void)info;
    ucontext_t *uc = context;
    unsigned long pc = uc->uc_mcontext.gregs[REG_RIP] - 1;
    long i = find(pc);
    if (i < 0) { signal(SIGTRAP, SIG_DFL); return; }  // not ours: let it kill the process
    *(volatile unsigned char *)pc = original[i];
    __sync_synchronize();
    uc->uc_mcontext.gregs[REG_RIP] = pc;
    long k = __sync_fetch_and_add(&ncalls, 1);
    if (k < count * 2) calls[k] = pc;
}

static void on_dump(int sig) {
    (void)sig;
    const char *prefix = getenv("FIRST_CALLS_OUTPUT");
    char path[4096];
    snprintf(path, sizeof path, "%s.%d", prefix ? prefix : "/tmp/first-calls", (int)getpid());
    FILE *out = fopen(path, "w");
    if (out) {
        for (long i = 0; i < ncalls && i < count * 2; i++) fprintf(out, "%lx\n", calls[i] - base);
        fclose(out);
    }
    _exit(0);
}

static int compare(const void *a, const void *b) {
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return x < y ? -1 : x > y;
}

__attribute__((constructor(101))) static void install(void) {
    const char *offsets = getenv("FIRST_CALLS_OFFSETS"), *binary = getenv("FIRST_CALLS_BINARY");
    if (!offsets || !binary) return;
    unsigned long text_lo = 0, text_hi = 0;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[1024];
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long lo, hi, offset;
        char perms[8], name[900] = "";
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %899s", &lo, &hi, perms, &offset, name) < 4) continue;
        if (strcmp(name, binary) != 0) continue;
        if (offset == 0) base = lo;
        if (strcmp(perms, "r-xp") == 0) { text_lo = lo; text_hi = hi; }
    }
    if (maps) fclose(maps);
    if (!text_lo) return;  // another program started with the same environment
    FILE *in = fopen(offsets, "r");
    if (!in) { perror("first-calls"); return; }
    long capacity = 1 << 16;
    entries = malloc(capacity * sizeof *entries);
    unsigned long offset;
    while (fscanf(in, "%lx", &offset) == 1) {
        unsigned long address = base + offset;
        if (address < text_lo || address >= text_hi) continue;
        if (count == capacity) entries = realloc(entries, (capacity *= 2) * sizeof *entries);
        entries[count++] = address;
    }
    fclose(in);
    qsort(entries, count, sizeof *entries, compare);
    long unique = 0;
    for (long i = 0; i < count; i++) if (!unique || entries[i] != entries[unique - 1]) entries[unique++] = entries[i];
    count = unique;
    original = malloc(count);
    calls = malloc(count * 2 * sizeof *calls);
    if (mprotect((void *)text_lo, text_hi - text_lo, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) { perror("first-calls: mprotect"); return; }
    for (long i = 0; i < count; i++) { original[i] = *(unsigned char *)entries[i]; *(unsigned char *)entries[i] = 0xCC; }
    struct sigaction action = {0};
    action.sa_sigaction = on_trap;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGTRAP, &action, 0);
    signal(SIGUSR2, on_dump);
}
