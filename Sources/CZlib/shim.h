// The system zlib for Swift, as used by the BLIP module (raw deflate contexts and CRC-32).
//
// zlib's deflateInit2/inflateInit2 are function-like macros that Swift cannot import,
// so the helpers below expand them. Both set up *raw* deflate streams (negative window
// bits: no zlib or gzip wrapper), which is what BLIP 3 puts on the wire.
#ifndef SHOAL_CZLIB_SHIM_H
#define SHOAL_CZLIB_SHIM_H

#include <zlib.h>

/// Initialises `strm` as a raw-deflate compressor (32 KB window, memLevel 8) at `level` (0-9).
static inline int czlib_deflate_init_raw(z_streamp strm, int level) {
    return deflateInit2(strm, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
}

/// Initialises `strm` as a raw-deflate decompressor (32 KB window).
static inline int czlib_inflate_init_raw(z_streamp strm) {
    return inflateInit2(strm, -15);
}

#endif
