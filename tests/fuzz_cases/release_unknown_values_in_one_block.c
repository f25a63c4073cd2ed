// Helpers that may release an unknown value, called again and again on one struct with no
// test in between (a mutation of fixtures/c/summary_field_effects.c): the property states of
// one block doubled at each call, past the bound a block's entry has (the fuzzer's hang).
#include <stdlib.h>
typedef struct palette { unsigned char *colors; unsigned count; } palette;
static void palette_clear(palette *p) {
  if (p->colors != NULL) free(p->colors);
  p->colors = NULL;
  p->count = 0;
}
void copy_over(palette *dst, const palette *src) {
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
  palette_clear(dst);
  *dst = *src;
}
