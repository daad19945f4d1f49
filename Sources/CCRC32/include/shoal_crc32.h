#ifndef SHOAL_CRC32_H
#define SHOAL_CRC32_H

#include <stddef.h>
#include <stdint.h>

/// The CRC-32 (IEEE 802.3, reflected, as zlib's crc32()) of `length` bytes at `data`,
/// continuing from `crc` (0 to start), with the same pre- and post-inversion as zlib.
/// On x86-64 CPUs with PCLMULQDQ, inputs of 64 bytes or more are folded 64 bytes a step
/// with carry-less multiplication; everything else (and the last 15 bytes or fewer) goes
/// through zlib.
uint32_t shoal_crc32(uint32_t crc, const uint8_t *data, size_t length);

/// Whether shoal_crc32 folds with PCLMULQDQ on this CPU (for tests and benchmarks).
int shoal_crc32_is_accelerated(void);

/// zlib's crc32 alone, in pieces of at most 1 GiB (its length is 32 bits): the reference
/// the tests compare shoal_crc32 with, and its fallback.
uint32_t shoal_crc32_zlib(uint32_t crc, const uint8_t *data, size_t length);

#endif
