/* zlib-ng's verdict, in its own file: zlib-ng.h and zlib.h cannot be included together. */
#include <string.h>
#include <zlib-ng.h>
const char *zng_verdict(unsigned char *raw, size_t rawLen, unsigned char *out, size_t outLen) {
    static char buf[64];
    zng_stream g; memset(&g, 0, sizeof g); zng_inflateInit2(&g, -15);
    g.next_in = raw; g.avail_in = rawLen; g.next_out = out; g.avail_out = outLen;
    int rc = zng_inflate(&g, Z_FINISH);
    strncpy(buf, rc == Z_STREAM_END ? "ok" : (g.msg ? g.msg : "error"), 63);
    zng_inflateEnd(&g);
    return buf;
}
