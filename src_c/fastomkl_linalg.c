/* Packed symmetric kernels of the VAW forecasters (declared in fastomkl_linalg.h), one variant per
 * instruction set, chosen at load time like the other kernels (fastomkl_dispatch.h). */
#include "fastomkl_linalg.h"
#include "fastomkl_dispatch.h"

#define LINALG_CAT2(a, b) a##_##b
#define LINALG_CAT(a, b) LINALG_CAT2(a, b)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define LINALG_NAME(f) LINALG_CAT(f, v4)
#define LINALG_TARGET __attribute__((target("arch=x86-64-v4")))
#include "fastomkl_linalg_impl.h"
#undef LINALG_NAME
#undef LINALG_TARGET
#define LINALG_NAME(f) LINALG_CAT(f, v3)
#define LINALG_TARGET __attribute__((target("arch=x86-64-v3")))
#include "fastomkl_linalg_impl.h"
#undef LINALG_NAME
#undef LINALG_TARGET
#endif

#define LINALG_NAME(f) LINALG_CAT(f, base)
#define LINALG_TARGET
#include "fastomkl_linalg_impl.h"
#undef LINALG_NAME
#undef LINALG_TARGET

FASTOMKL_DISPATCH(void, fastomkl_spmv, (int n, const double *A, const double *z, double *u),
                  (n, A, z, u))
FASTOMKL_DISPATCH(void, fastomkl_spr, (int n, double alpha, const double *u, double *A),
                  (n, alpha, u, A))
