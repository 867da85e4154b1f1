/* svi_cli.h -- strict parsing of command-line numbers for the svi tools: the whole argument must
 * be one number in range, else a message naming the option and what is allowed. */
#ifndef SVI_CLI_H_
#define SVI_CLI_H_

#include <stdint.h>

/* each returns 1 on success; on failure prints "<tool>: <option> ..." to stderr and returns 0 */
int svi_cli_double(const char* tool, const char* option, const char* text, double lo, double hi,
                   double* out);
int svi_cli_int(const char* tool, const char* option, const char* text, long long lo, long long hi,
                long long* out);
/* a seed: a decimal integer in [0, 2^64 - 1]; no sign, no other characters */
int svi_cli_seed(const char* tool, const char* option, const char* text, uint64_t* out);

#endif
