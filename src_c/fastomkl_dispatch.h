/* One build for every x86-64 machine: each kernel is compiled for three instruction sets and the
 * widest the CPU has is chosen once, when the library loads (a constructor sets the pointer each
 * public function calls through; an ifunc resolver could not read the environment, as it runs
 * before the library's own calls into libc are bound).
 *
 *   FASTOMKL_VARIANTS(DEFINE) expands DEFINE(suffix, target attribute, vector bytes) three times:
 *     v4   = x86-64-v4 (AVX-512), 64-byte vectors;  v3 = x86-64-v3 (AVX2 + FMA), 32;  base = SSE2, 16.
 *   FASTOMKL_DISPATCH(ret, name, params, args) defines `name` to call name_v4, name_v3 or name_base.
 *
 * The environment variable FASTOMKL_ISA caps the choice: v4 or avx512, v3 or avx2, base or sse2
 * (tests and benchmarks run every variant on one machine; a variant the CPU lacks is never
 * chosen).  Other platforms build the base variant only.
 */
#ifndef FASTOMKL_DISPATCH_H
#define FASTOMKL_DISPATCH_H

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)

#define FASTOMKL_VARIANTS(DEFINE)                                                   \
    DEFINE(v4, __attribute__((target("arch=x86-64-v4"))), 64)                       \
    DEFINE(v3, __attribute__((target("arch=x86-64-v3"))), 32)                       \
    DEFINE(base, , 16)

static inline int fastomkl_isa_level(void)
{
    __builtin_cpu_init();
    int level = 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        level = 3;
    if (level == 3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
            && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw"))
        level = 4;
    const char *cap = getenv("FASTOMKL_ISA");
    if (cap && (strcmp(cap, "v3") == 0 || strcmp(cap, "avx2") == 0) && level > 3)
        level = 3;
    if (cap && (strcmp(cap, "base") == 0 || strcmp(cap, "sse2") == 0))
        level = 2;
    return level;
}

#define FASTOMKL_DISPATCH(RET, NAME, PARAMS, ARGS)                                  \
    typedef RET NAME##_fn PARAMS;                                                   \
    static NAME##_fn *NAME##_chosen = NAME##_base;                                  \
    __attribute__((constructor)) static void NAME##_choose(void)                    \
    {                                                                               \
        int level = fastomkl_isa_level();                                           \
        NAME##_chosen = level == 4 ? NAME##_v4 : level == 3 ? NAME##_v3 : NAME##_base; \
    }                                                                               \
    RET NAME PARAMS { return NAME##_chosen ARGS; }

#else

#define FASTOMKL_VARIANTS(DEFINE) DEFINE(base, , 16)
#define FASTOMKL_DISPATCH(RET, NAME, PARAMS, ARGS)                                  \
    RET NAME PARAMS { return NAME##_base ARGS; }

#endif

#endif
