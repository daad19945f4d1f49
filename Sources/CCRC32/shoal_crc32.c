// CRC-32 by folding (docs: Sources/BLIP/BLIP.md, "Frame", its checksum).
//
// The message is a polynomial over GF(2), and CRC-32 is its remainder modulo P (the IEEE
// polynomial, bit-reflected). Four 128-bit accumulators each take every fourth 16-byte
// block: an accumulator A followed 512 bits later by block B is replaced by
// A.lo * (x^(512+32) mod P) + A.hi * (x^(512-32) mod P) + B, which has the same remainder
// once the rest of the message follows (the constants are bit-reflected and shifted one
// place, as the reflected domain needs; carry-less products of a 64-bit half and a 33-bit
// constant fit in 128 bits). The four are then folded into one 128 bits apart, then each
// remaining whole block. What is left, 16 bytes with the remainder of everything before
// them (and the crc's initial value already in its first four bytes), plus a tail of up to
// 15 bytes, is handed to zlib.

#include "shoal_crc32.h"

#include <zlib.h>

uint32_t shoal_crc32_zlib(uint32_t crc, const uint8_t *data, size_t length) {
    uLong value = crc;
    while (length > 0) {
        uInt chunk = length > (1u << 30) ? (1u << 30) : (uInt)length;
        value = crc32(value, data, chunk);
        data += chunk;
        length -= chunk;
    }
    return (uint32_t)value;
}

#if defined(__x86_64__)
#include <immintrin.h>

#define SHOAL_CLMUL __attribute__((target("pclmul,sse4.1")))

SHOAL_CLMUL static inline __m128i fold(__m128i accumulator, __m128i constants, __m128i next) {
    __m128i low = _mm_clmulepi64_si128(accumulator, constants, 0x00);
    __m128i high = _mm_clmulepi64_si128(accumulator, constants, 0x11);
    return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

SHOAL_CLMUL static inline __m128i load(const uint8_t *data) {
    return _mm_loadu_si128((const __m128i *)(const void *)data);
}

/// `length` >= 64.
SHOAL_CLMUL static uint32_t crc32_folding(uint32_t crc, const uint8_t *data, size_t length) {
    // Low half: x^(512+32) mod P, high half: x^(512-32) mod P (reflected, shifted).
    const __m128i by4 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);
    // Low half: x^(128+32) mod P, high half: x^(128-32) mod P.
    const __m128i by1 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);
    __m128i a0 = _mm_xor_si128(load(data), _mm_cvtsi32_si128((int)~crc));
    __m128i a1 = load(data + 16);
    __m128i a2 = load(data + 32);
    __m128i a3 = load(data + 48);
    data += 64;
    length -= 64;
    while (length >= 64) {
        a0 = fold(a0, by4, load(data));
        a1 = fold(a1, by4, load(data + 16));
        a2 = fold(a2, by4, load(data + 32));
        a3 = fold(a3, by4, load(data + 48));
        data += 64;
        length -= 64;
    }
    a0 = fold(a0, by1, a1);
    a0 = fold(a0, by1, a2);
    a0 = fold(a0, by1, a3);
    while (length >= 16) {
        a0 = fold(a0, by1, load(data));
        data += 16;
        length -= 16;
    }
    uint8_t rest[16];
    _mm_storeu_si128((__m128i *)(void *)rest, a0);
    // crc32(0xFFFFFFFF, ·) starts from state 0: the initial value is in the folded bytes.
    uint32_t value = (uint32_t)crc32(0xFFFFFFFFul, rest, 16);
    return (uint32_t)crc32(value, data, (uInt)length);
}

static int accelerated = -1;

int shoal_crc32_is_accelerated(void) {
    int known = __atomic_load_n(&accelerated, __ATOMIC_RELAXED);
    if (known < 0) {
        __builtin_cpu_init();
        known = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1") ? 1 : 0;
        __atomic_store_n(&accelerated, known, __ATOMIC_RELAXED);
    }
    return known;
}

uint32_t shoal_crc32(uint32_t crc, const uint8_t *data, size_t length) {
    if (length >= 64 && shoal_crc32_is_accelerated()) return crc32_folding(crc, data, length);
    return shoal_crc32_zlib(crc, data, length);
}

#else

int shoal_crc32_is_accelerated(void) { return 0; }

uint32_t shoal_crc32(uint32_t crc, const uint8_t *data, size_t length) {
    return shoal_crc32_zlib(crc, data, length);
}

#endif
