/* svi_rng.c -- counter-based random numbers and a seeded Sobol sequence.
 *
 * Every draw is a pure function of (seed, stream, index): no generator state is shared between
 * samples or threads, which is what makes Algorithm 2 bit-identical for any thread count.
 */
#include <string.h>

#include "svi_internal.h"

uint64_t svi_rng_key(uint64_t seed, uint64_t stream) {
  return svi_rng_mix64(seed + 0x9e3779b97f4a7c15ULL * (stream + 1));
}

uint64_t svi_rng_u64(uint64_t seed, uint64_t stream, uint64_t index) {
  return svi_rng_keyed(svi_rng_key(seed, stream), index);
}

double svi_rng_uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  return ((double)(svi_rng_u64(seed, stream, index) >> 11) + 0.5) * 0x1.0p-53;
}

/* --- Sobol ----------------------------------------------------------------------------------
 * Dimension 0 is van der Corput.  Dimension j > 0 uses the j-th primitive polynomial over GF(2)
 * (ordered by degree, then value) and Bratley & Fox's recurrence for the direction integers.
 */

/* x^e mod p over GF(2); polynomials as bit masks, deg p = s <= 31 */
static uint64_t polymulmod(uint64_t a, uint64_t b, uint64_t p, int s) {
  uint64_t r = 0;
  while (b) {
    if (b & 1) r ^= a;
    b >>= 1;
    a <<= 1;
    if (a & (1ULL << s)) a ^= p;
  }
  return r;
}

static uint64_t xpow(uint64_t e, uint64_t p, int s) {
  uint64_t r = 1, base = (s == 1) ? (2 ^ p) : 2;   /* x reduced mod p */
  while (e) {
    if (e & 1) r = polymulmod(r, base, p, s);
    base = polymulmod(base, base, p, s);
    e >>= 1;
  }
  return r;
}

/* p (degree s, constant term 1) is primitive iff x has order exactly 2^s - 1 mod p:
 * x^(2^s-1) = 1 and x^((2^s-1)/f) != 1 for every prime factor f of 2^s - 1. */
static int is_primitive(uint64_t p, int s) {
  uint64_t order = (1ULL << s) - 1, n = order;
  if (xpow(order, p, s) != 1) return 0;
  for (uint64_t f = 2; f * f <= n; f++) {
    if (n % f) continue;
    while (n % f == 0) n /= f;
    if (xpow(order / f, p, s) == 1) return 0;
  }
  if (n > 1 && n != order && xpow(order / n, p, s) == 1) return 0;
  if (n > 1 && n == order && order > 1 && xpow(1, p, s) == 1) return 0;
  return 1;
}

int svi_sobol_init(svi_sobol* so, int dim, uint64_t seed) {
  if (!so || dim <= 0 || dim > SVI_SOBOL_MAXDIM) return SVI_ERR_ARG;
  memset(so, 0, sizeof(*so));
  so->dim = dim;
  so->seed = seed;
  for (int k = 0; k < 32; k++) so->v[0][k] = 1u << (31 - k);

  int j = 1, s = 1;
  uint64_t p = 0;
  while (j < dim) {
    /* next primitive polynomial: x^s + ... + 1 */
    for (;;) {
      if (p == 0 || p + 2 >= (1ULL << (s + 1))) {
        if (p != 0) s++;
        p = (1ULL << s) | 1;
      } else {
        p += 2;
      }
      if (is_primitive(p, s)) break;
    }
    uint32_t m[32];
    for (int k = 0; k < s && k < 32; k++) {
      /* odd initial integers m_k < 2^(k+1), fixed (seed-independent) generator */
      uint32_t r = (uint32_t)svi_rng_u64(0x50b01ULL, (uint64_t)j, (uint64_t)k);
      m[k] = (r & ((1u << (k + 1)) - 1)) | 1u;
    }
    for (int k = s; k < 32; k++) {
      uint32_t x = m[k - s] ^ (m[k - s] << s);
      for (int i = 1; i < s; i++)
        if ((p >> (s - i)) & 1) x ^= m[k - i] << i;
      m[k] = x;
    }
    for (int k = 0; k < 32; k++) so->v[j][k] = m[k] << (31 - k);
    j++;
  }
  /* random digital shift: keeps the net property, makes the point set depend on the seed */
  for (int d = 0; d < dim; d++) so->shift[d] = (uint32_t)svi_rng_u64(seed, 0x50b0ULL, (uint64_t)d);
  for (int d = 0; d < dim; d++) {
    uint32_t c = 0;
    for (int t = 0; t < 32; t++) so->flip[t][d] = c ^= so->v[d][t];
  }
  return SVI_OK;
}

double svi_sobol_point(const svi_sobol* so, uint64_t index, int k) {
  uint32_t x = 0;
  for (int b = 0; index && b < 32; b++, index >>= 1)
    if (index & 1) x ^= so->v[k][b];
  return svi_sobol_value(x ^ so->shift[k]);
}

/* Point k + 1 differs from point k by the direction numbers of the bits that flip from k to k + 1
 * (of the 32 that svi_sobol_point reads): the trailing ones of k and the zero above them, bits
 * 0 .. t with t = ctz(~k), whose XOR is the prefix v[0] ^ ... ^ v[t] (one XOR a coordinate a
 * point, from svi_sobol.flip).  The same set is XOR-ed, so the values are the same.
 * out: the point's 32-bit digits with the shift, svi_sobol_value makes them svi_sobol_point's
 * doubles (only the coordinates a sample reads). */
void svi_sobol_points(const svi_sobol* so, uint64_t first, int count, uint32_t* out) {
  int dim = so->dim;
  uint32_t x[SVI_SOBOL_MAXDIM];
  for (int j = 0; j < dim; j++) {
    uint32_t a = 0;
    uint64_t index = first;
    for (int b = 0; index && b < 32; b++, index >>= 1)
      if (index & 1) a ^= so->v[j][b];
    x[j] = a;
  }
  for (int c = 0; c < count; c++) {
    uint32_t* row = out + (size_t)c * dim;
    for (int j = 0; j < dim; j++) row[j] = x[j] ^ so->shift[j];
    uint64_t k = first + (uint64_t)c;
    uint32_t lo = (uint32_t)k;   /* flips above bit 31 are not read (svi_sobol_point's 32 bits) */
    const uint32_t* pv = so->flip[lo == 0xffffffffu ? 31 : __builtin_ctz(~lo)];
    for (int j = 0; j < dim; j++) x[j] ^= pv[j];
  }
}
