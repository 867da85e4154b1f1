/* svi_cli.c -- strict parsing of command-line numbers (svi_cli.h). */
#include "svi_cli.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int svi_cli_double(const char* tool, const char* option, const char* text, double lo, double hi,
                   double* out) {
  char* end = NULL;
  errno = 0;
  double x = text ? strtod(text, &end) : NAN;
  if (!text || end == text || *end || errno == ERANGE || !isfinite(x) || x < lo || x > hi) {
    fprintf(stderr, "%s: %s needs a number in [%g, %g], not '%s'\n", tool, option, lo, hi, text ? text : "");
    return 0;
  }
  *out = x;
  return 1;
}

int svi_cli_int(const char* tool, const char* option, const char* text, long long lo, long long hi,
                long long* out) {
  char* end = NULL;
  errno = 0;
  long long x = text ? strtoll(text, &end, 10) : 0;
  if (!text || end == text || *end || errno == ERANGE || x < lo || x > hi) {
    fprintf(stderr, "%s: %s needs an integer in [%lld, %lld], not '%s'\n", tool, option, lo, hi, text ? text : "");
    return 0;
  }
  *out = x;
  return 1;
}

int svi_cli_seed(const char* tool, const char* option, const char* text, uint64_t* out) {
  int ok = text && isdigit((unsigned char)text[0]);   /* strtoull would accept "-1" as 2^64 - 1 */
  char* end = NULL;
  errno = 0;
  unsigned long long x = ok ? strtoull(text, &end, 10) : 0;
  if (!ok || *end || errno == ERANGE) {
    fprintf(stderr, "%s: %s needs a non-negative integer below 2^64, not '%s'\n", tool, option, text ? text : "");
    return 0;
  }
  *out = (uint64_t)x;
  return 1;
}
