/* svi_status.c -- human-readable status strings. */
#include "svi/svi_core.h"

const char* svi_status_string(int status) {
  switch (status) {
  case SVI_OK:             return "ok";
  case SVI_OK_REGULARIZED: return "ok (after regularised retry)";
  case SVI_ERR_ARG:        return "invalid argument (NULL pointer or size out of range)";
  case SVI_ERR_NONFINITE:  return "non-finite value (NaN or Inf) in the input";
  case SVI_ERR_NOT_SPD:    return "mass matrix is not symmetric positive definite";
  case SVI_ERR_NEG_MU:     return "friction coefficient is negative";
  case SVI_ERR_RAY:        return "LCP: Lemke ended on a secondary ray";
  case SVI_ERR_MAXITER:    return "LCP: iteration cap reached";
  case SVI_ERR_RESIDUAL:   return "LCP: solution failed the residual check";
  case SVI_ERR_NOMEM:      return "out of memory";
  case SVI_ERR_CAPACITY:   return "problem larger than the workspace capacity";
  case SVI_ERR_REJECTED:   return "outcome failed the physical checks on every attempt (energy, approach, cone)";
  default:                 return "unknown status";
  }
}
