/* One bottom-up merge sort for core's small-struct arrays, instantiated per
 * element type so the comparison inlines. It sorts through caller scratch
 * of n elements because qsort may allocate, and a query must not. */
#ifndef CQ_MERGE_SORT_H
#define CQ_MERGE_SORT_H

#include <string.h>

/* Defines, for elements of type T ordered by LESS(p, q) (p strictly
 * before q):
 *   static void NAME_merge(const T *x, int nx, const T *y, int ny, T *out)
 *     the sorted x and y merged into out, x's element first on ties;
 *   static void NAME_sort(T *a, int n, T *tmp)
 *     a sorted, stably, through tmp (n elements). */
#define CQ_MERGE_SORT_DEFINE(NAME, T, LESS)                                    \
    static void NAME##_merge(const T *x, int nx, const T *y, int ny, T *out)   \
    {                                                                          \
        int i = 0, j = 0, k = 0;                                               \
        while (i < nx && j < ny)                                               \
            out[k++] = LESS(y[j], x[i]) ? y[j++] : x[i++];                     \
        while (i < nx)                                                         \
            out[k++] = x[i++];                                                 \
        while (j < ny)                                                         \
            out[k++] = y[j++];                                                 \
    }                                                                          \
    static void NAME##_sort(T *a, int n, T *tmp)                               \
    {                                                                          \
        T *src = a, *dst = tmp;                                                \
        for (int w = 1; w < n; w *= 2) {                                       \
            for (int lo = 0; lo < n; lo += 2 * w) {                            \
                int mid = lo + w < n ? lo + w : n;                             \
                int hi = lo + 2 * w < n ? lo + 2 * w : n;                      \
                NAME##_merge(src + lo, mid - lo, src + mid, hi - mid, dst + lo);\
            }                                                                  \
            T *t = src;                                                        \
            src = dst;                                                         \
            dst = t;                                                           \
        }                                                                      \
        if (src != a)                                                          \
            memcpy(a, src, (size_t)n * sizeof *a);                             \
    }

#endif
