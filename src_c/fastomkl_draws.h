/* Random-access spectral draws with the same bits on every CPU (see fastomkl_draws.c).
 * Draw i of a key depends on (key, i) only; every function fills out[0..n). */
#ifndef FASTOMKL_DRAWS_H
#define FASTOMKL_DRAWS_H

#include <stdint.h>

/* The key of one kind of draw (`what`) of block t of stream `stream` of a model's seed. */
uint64_t fastomkl_draw_key(uint64_t seed, uint64_t stream, uint64_t t, uint64_t what);

/* scale * N(0, 1) by Box-Muller: pair p uses draws 2p (radius) and 2p + 1 (angle) and fills
 * out[p] (cosine) and out[(n + 1) / 2 + p] (sine, if inside the array). */
void fastomkl_draw_gaussian(uint64_t key, long n, double scale, double *out);
/* scale * Cauchy(0, 1) by inversion of draw i. */
void fastomkl_draw_cauchy(uint64_t key, long n, double scale, double *out);
/* scale * Laplace(0, 1) by inversion of draw i. */
void fastomkl_draw_laplace(uint64_t key, long n, double scale, double *out);
/* 2 pi U(0, 1) of draw i. */
void fastomkl_draw_phases(uint64_t key, long n, double *out);

#endif
