// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <zlib.h>

#include "record/rec_crc.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define FOLD_MIN 64 /* four 16-byte lanes to start with */

/*
 * x^(n*8) mod P, bit-reflected, for the distances folded: 512 + 64 and
 * 512 bits (four lanes), 128 + 64 and 128 bits (one lane), 64 bits (the
 * last 96 bits to 64), and P itself with the Barrett constant floor(x^64 / P).
 */
#define K1  0x154442bd4ull
#define K2  0x1c6e41596ull
#define K3  0x1751997d0ull
#define K4  0x0ccaa009eull
#define K5  0x163cd6124ull
#define P_X 0x1db710641ull
#define MU  0x1f7011641ull

/* @x carried 128 bits further (by @k) and added to the next 16 bytes. */
__attribute__((target("pclmul"))) static inline __m128i fold(__m128i x, __m128i k, __m128i next)
{
	return _mm_xor_si128(
		_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)),
		next);
}

__attribute__((target("pclmul"))) static inline __m128i load(const __u8 *p)
{
	return _mm_loadu_si128((const __m128i *)p);
}

/* The CRC register (no inversions) after @len bytes; @len >= FOLD_MIN, a multiple of 16. */
__attribute__((target("pclmul"))) static __u32 fold_crc(__u32 crc, const __u8 *p, size_t len)
{
	const __m128i k12 = _mm_set_epi64x((long long)K2, (long long)K1);
	const __m128i k34 = _mm_set_epi64x((long long)K4, (long long)K3);
	const __m128i k5 = _mm_set_epi64x(0, (long long)K5);
	const __m128i pmu = _mm_set_epi64x((long long)MU, (long long)P_X);
	const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi32_si128((int)crc));
	__m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48), t;

	for (p += 64, len -= 64; len >= 64; p += 64, len -= 64) {
		x0 = fold(x0, k12, load(p));
		x1 = fold(x1, k12, load(p + 16));
		x2 = fold(x2, k12, load(p + 32));
		x3 = fold(x3, k12, load(p + 48));
	}
	x0 = fold(x0, k34, x1);
	x0 = fold(x0, k34, x2);
	x0 = fold(x0, k34, x3);
	for (; len >= 16; p += 16, len -= 16)
		x0 = fold(x0, k34, load(p));
	/* 128 bits to 96, then 64 (32 zero bits appended, as the CRC's definition has) */
	t = _mm_clmulepi64_si128(x0, k34, 0x10);
	x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
	t = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), k5, 0x00);
	x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);
	/* Barrett reduction, 64 bits to 32 */
	t = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, low32), pmu, 0x10), low32);
	t = _mm_clmulepi64_si128(t, pmu, 0x00);
	x0 = _mm_xor_si128(x0, t);
	return (__u32)_mm_cvtsi128_si32(_mm_srli_si128(x0, 4));
}

bool cp_rec_crc_folds(void)
{
	return __builtin_cpu_supports("pclmul");
}

__u32 cp_rec_crc(const void *p, size_t len)
{
	const __u8 *b = p;
	size_t n = len & ~(size_t)15;
	__u32 reg;

	if (len < FOLD_MIN || !cp_rec_crc_folds())
		return (__u32)crc32(0L, b, (uInt)len);
	/* zlib's value inverts the register before and after: continue from it */
	reg = fold_crc(~0u, b, n);
	return (__u32)crc32(~reg, b + n, (uInt)(len - n));
}

#else

bool cp_rec_crc_folds(void)
{
	return false;
}

__u32 cp_rec_crc(const void *p, size_t len)
{
	return (__u32)crc32(0L, p, (uInt)len);
}

#endif
