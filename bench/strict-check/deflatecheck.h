/* See deflatecheck.c. */
#ifndef KC_DEFLATECHECK_H
#define KC_DEFLATECHECK_H
#include <stddef.h>
#include <stdint.h>

/*
 * Checks the raw deflate data at in[0, in_len) with zlib's rules. Returns 0 when it is a valid deflate stream that
 * ends within the input, with *out_size = the size it decodes to and *used = the bytes it takes (the final block's
 * last byte included); -1 when zlib's inflate would fail on it or it is truncated.
 */
int deflate_check(const uint8_t *in, size_t in_len, uint64_t *out_size, size_t *used);

#endif
