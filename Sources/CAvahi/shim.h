// Avahi's own client library (Debian: libavahi-client-dev), as used by the Discovery
// module: one D-Bus connection to the host's avahi-daemon per node, over which the
// registration (an entry group), the browse, every resolver and every record browser
// travel. (Avahi's Bonjour compat library, used before, opened a connection and a thread
// of its own for each of them: 95 per node in a mesh of 48.)
#ifndef SHOAL_CAVAHI_SHIM_H
#define SHOAL_CAVAHI_SHIM_H

#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/strlst.h>

// AvahiPoll's watch_new is a function pointer in a struct; a plain function is easier
// to call from Swift.
static inline AvahiWatch *cavahi_watch_new(const AvahiPoll *api, int fd, AvahiWatchEvent event,
                                           AvahiWatchCallback callback, void *userdata) {
    return api->watch_new(api, fd, event, callback, userdata);
}

static inline void cavahi_watch_free(const AvahiPoll *api, AvahiWatch *watch) {
    api->watch_free(watch);
}

#endif
