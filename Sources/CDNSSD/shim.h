// Avahi's Bonjour-compatible DNS-SD client library (Debian: libavahi-compat-libdnssd-dev),
// as used by the Discovery module. It talks to the host's avahi-daemon over D-Bus.
//
// Avahi's dns_sd.h is an older edition of Apple's: there is no DNSServiceGetAddrInfo and no
// kDNSServiceErr_ServiceNotRunning. Set AVAHI_COMPAT_NOWARN=1 before the first call, or the
// library prints a compatibility banner on stderr.
#ifndef SHOAL_CDNSSD_SHIM_H
#define SHOAL_CDNSSD_SHIM_H

#include <dns_sd.h>

#endif
