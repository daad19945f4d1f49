// Avahi's Bonjour-compatible DNS-SD client library (Debian: libavahi-compat-libdnssd-dev),
// as used by the Discovery module. It talks to the host's avahi-daemon over D-Bus.
//
// Avahi's dns_sd.h is an older edition of Apple's: there is no DNSServiceGetAddrInfo and no
// kDNSServiceErr_ServiceNotRunning. Set AVAHI_COMPAT_NOWARN=1 before the first call, or the
// library prints a compatibility banner on stderr.
#ifndef SHOAL_CDNSSD_SHIM_H
#define SHOAL_CDNSSD_SHIM_H

#include <dns_sd.h>
#include <dlfcn.h>
#include <stdlib.h>

// Work-around for a bug in Avahi's compat layer (0.8 and its master branch): the internal
// `sdref_new()` allocates each DNSServiceRef with avahi_malloc() and never initialises the
// callback pointers it does not use. When the daemon goes away, the client-failure handler of
// a resolve or a query-record ref tests `service_browser_callback` first and calls whatever
// garbage is there: the process crashes (SIGSEGV) exactly when avahi-daemon stops.
//
// Avahi lets a program replace its allocator (avahi_set_allocator in libavahi-common, which
// libdns_sd loads). Installing one whose malloc returns zeroed memory makes those pointers
// NULL, and the handler then calls the right callback with an error. The symbol is looked up
// at run time so that no extra development package or link flag is needed. Call this once,
// before the first DNSService* call. Returns 0 when installed, -1 when the symbol is missing.

typedef struct {
    void *(*malloc)(size_t size);
    void (*free)(void *p);
    void *(*realloc)(void *p, size_t size);
    void *(*calloc)(size_t nmemb, size_t size);
} cdnssd_avahi_allocator;

static void *cdnssd_zeroing_malloc(size_t size) {
    return calloc(1, size);
}

static inline int cdnssd_install_zeroing_allocator(void) {
    static const cdnssd_avahi_allocator allocator = { cdnssd_zeroing_malloc, free, realloc, calloc };
    void *symbol = dlsym((void *) 0 /* RTLD_DEFAULT */, "avahi_set_allocator");
    if (symbol == NULL) {
        return -1;
    }
    ((void (*)(const cdnssd_avahi_allocator *)) symbol)(&allocator);
    return 0;
}

#endif
