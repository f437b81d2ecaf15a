/*
 * CPU cost of checking raw deflate data with zlib's rules (deflatecheck.c) against decoding it with libdeflate
 * and with zlib, on one batch of JSON records compressed by zlib at level 6, decoded 100 MB worth of times.
 * Usage: harness DATA MODE BATCH   (MODE 0 check, 1 libdeflate, 2 zlib, 3 setup only); see run.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <libdeflate.h>
#include "deflatecheck.h"

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) return 2;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc(n);
    if (fread(d, 1, n, f) != (size_t)n) return 2;
    fclose(f);
    int mode = atoi(argv[2]);
    size_t bs = (size_t)atol(argv[3]);
    if (bs > (size_t)n) return 2;
    unsigned char *comp = malloc(compressBound(bs) + 100);
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    z.next_in = d;
    z.avail_in = bs;
    z.next_out = comp;
    z.avail_out = compressBound(bs) + 100;
    deflate(&z, Z_FINISH);
    size_t cl = z.total_out;
    deflateEnd(&z);
    unsigned char *out = malloc(bs);
    struct libdeflate_decompressor *dd = libdeflate_alloc_decompressor();
    int iters = mode == 3 ? 0 : (int)(100e6 / bs);
    uint64_t size;
    size_t used;
    for (int i = 0; i < iters; i++) {
        if (mode == 0) {
            if (deflate_check(comp, cl, &size, &used) || size != bs || used != cl) return 1;
        } else if (mode == 1) {
            size_t a, b;
            if (libdeflate_deflate_decompress_ex(dd, comp, cl, out, bs, &a, &b) != LIBDEFLATE_SUCCESS) return 1;
        } else {
            z_stream y;
            memset(&y, 0, sizeof y);
            inflateInit2(&y, -15);
            y.next_in = comp;
            y.avail_in = cl;
            y.next_out = out;
            y.avail_out = bs;
            if (inflate(&y, Z_FINISH) != Z_STREAM_END) return 1;
            inflateEnd(&y);
        }
    }
    return 0;
}
