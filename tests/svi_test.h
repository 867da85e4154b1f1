/* svi_test.h -- a minimal check harness: CHECK counts, the program ends with "N passed, N failed". */
#ifndef SVI_TEST_H_
#define SVI_TEST_H_
#include <stdio.h>

static int svi_test_passed, svi_test_failed;

#define CHECK(cond, ...)                                              \
  do {                                                                \
    if (cond) {                                                       \
      svi_test_passed++;                                              \
    } else {                                                          \
      svi_test_failed++;                                              \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);            \
      fprintf(stderr, __VA_ARGS__);                                   \
      fprintf(stderr, "\n");                                          \
    }                                                                 \
  } while (0)

static inline int svi_test_finish(void) {
  printf("%d passed, %d failed\n", svi_test_passed, svi_test_failed);
  return svi_test_failed ? 1 : 0;
}
#endif
