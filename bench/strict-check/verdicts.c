/*
 * Each engine's verdict on the gzip members read from stdin ('name hex' lines): system zlib (the JDK's inflater on
 * Debian), zlib-ng (verdicts-zng.c, the native-gzip provider's inflater), libdeflate and ISA-L, each inflating the
 * raw deflate data in one call. See verdicts.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
const char *zng_verdict(unsigned char *, size_t, unsigned char *, size_t);
#include <libdeflate.h>
#include <isa-l/igzip_lib.h>
static int hexval(char c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }
int main(void) {
    static char name[256], hex[400000];
    static unsigned char in[200000], out[200000];
    while (scanf("%255s %399999s", name, hex) == 2) {
        size_t n = strlen(hex) / 2;
        for (size_t i = 0; i < n; i++) in[i] = hexval(hex[2*i]) << 4 | hexval(hex[2*i+1]);
        unsigned char *raw = in + 10; size_t rawLen = n - 18;
        printf("%-46s", name);
        /* zlib (system, what the JDK uses here) */
        z_stream z; memset(&z, 0, sizeof z); inflateInit2(&z, -15);
        z.next_in = raw; z.avail_in = rawLen; z.next_out = out; z.avail_out = sizeof out;
        int rc = inflate(&z, Z_FINISH);
        printf(" zlib %s: %-34s", zlibVersion(), rc == Z_STREAM_END ? "ok" : (z.msg ? z.msg : "error"));
        inflateEnd(&z);
        printf(" zlib-ng: %-34s", zng_verdict(raw, rawLen, out, sizeof out));
        struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
        size_t got = 0;
        enum libdeflate_result lr = libdeflate_deflate_decompress(d, raw, rawLen, out, sizeof out, &got);
        printf(" libdeflate: %s", lr == LIBDEFLATE_SUCCESS ? "ACCEPTS" : "rejects");
        libdeflate_free_decompressor(d);
        struct inflate_state st; isal_inflate_init(&st);
        st.next_in = raw; st.avail_in = rawLen; st.next_out = out; st.avail_out = sizeof out;
        int ir = isal_inflate(&st);
        printf("  ISA-L: %s\n", ir == ISAL_DECOMP_OK && st.block_state == ISAL_BLOCK_FINISH ? "ACCEPTS" : "rejects");
    }
    return 0;
}
