/*
 * A validator of raw deflate data (RFC 1951) with zlib's rules, which are the rules of Kafka's built-in gzip codec
 * (java.util.zip.GZIPInputStream runs zlib's inflate). It decodes every symbol but writes no output.
 *
 * libdeflate's one-call inflate, the fast path of this provider, is more lenient than zlib: it accepts
 * literal/length symbols 286-287 and distance symbols 30-31 in fixed-Huffman blocks, more than 286 literal/length or
 * 30 distance codes in a dynamic header, and some incomplete Huffman codes. Data is handed to libdeflate only after
 * this check, which rejects exactly what zlib's inflate rejects:
 *   - block type 3 ("invalid block type");
 *   - stored block LEN != ~NLEN ("invalid stored block lengths");
 *   - HLIT > 286 or HDIST > 30 ("too many length or distance symbols");
 *   - an over-subscribed or incomplete code-length code ("invalid code lengths set");
 *   - a repeat (16) of no previous length, or a repeat past HLIT + HDIST ("invalid bit length repeat");
 *   - no code for end-of-block ("invalid code -- missing end-of-block");
 *   - an over-subscribed literal/length or distance code, or an incomplete one other than a single code of one bit
 *     ("invalid literal/lengths set", "invalid distances set"); a distance code with no codes at all is allowed;
 *   - a bit pattern that is no code of an incomplete code, literal/length symbols 286-287, distance symbols 30-31
 *     ("invalid literal/length code", "invalid distance code");
 *   - a distance beyond the start of the output ("invalid distance too far back");
 *   - data that ends before the final block does (truncated).
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "deflatecheck.h"

#define FASTBITS 9
#define MAXBITS 15

struct bits {
    const uint8_t *p, *end;
    uint64_t buf;
    unsigned cnt;
    unsigned padded;   /* zero bits appended past the end of the input */
};

static inline void refill(struct bits *b) {
    if (b->end - b->p >= 8) {
        uint64_t v;
        memcpy(&v, b->p, 8);   /* little endian (x86-64) */
        b->buf |= v << b->cnt;
        b->p += (63 - b->cnt) >> 3;
        b->cnt |= 56;
        return;
    }
    while (b->cnt < 56) {
        uint64_t byte = 0;
        if (b->p < b->end) byte = *b->p++;
        else b->padded += 8;
        b->buf |= byte << b->cnt;
        b->cnt += 8;
    }
}

/* n <= 32; the caller has refilled when fewer than n bits may be buffered */
static inline uint32_t take(struct bits *b, unsigned n) {
    if (b->cnt < n) refill(b);
    uint32_t v = (uint32_t)(b->buf & ((1ULL << n) - 1));
    b->buf >>= n;
    b->cnt -= n;
    return v;
}

struct huff {
    uint16_t count[MAXBITS + 1];
    uint16_t symbol[288];
    uint16_t fast[1 << FASTBITS];   /* (length << 9) | symbol, 0 when the code is longer or absent */
};

enum { CODES, LENS, DISTS };

/* Builds a decoding table with zlib's inflate_table() rules; 0 when valid. */
static int build(struct huff *h, const uint8_t *lens, int n, int type) {
    uint16_t offs[MAXBITS + 2];
    memset(h->count, 0, sizeof(h->count));
    for (int s = 0; s < n; s++) h->count[lens[s]]++;
    int max = MAXBITS;
    while (max >= 1 && h->count[max] == 0) max--;
    memset(h->fast, 0, sizeof(h->fast));
    if (max == 0) return type == CODES ? -1 : 0;   /* no codes: only a distance code may be empty */
    int left = 1;
    for (int len = 1; len <= MAXBITS; len++) {
        left <<= 1;
        left -= h->count[len];
        if (left < 0) return -1;   /* over-subscribed */
    }
    if (left > 0 && (type == CODES || max != 1)) return -1;   /* incomplete */
    offs[1] = 0;
    for (int len = 1; len < MAXBITS; len++) offs[len + 1] = offs[len] + h->count[len];
    for (int s = 0; s < n; s++) if (lens[s]) h->symbol[offs[lens[s]]++] = (uint16_t)s;
    /* codes of up to FASTBITS bits in the lookup table, indexed by their bits as read (reversed) */
    unsigned code = 0;
    int idx = 0;
    for (int len = 1; len <= FASTBITS; len++) {
        for (int k = 0; k < h->count[len]; k++, code++) {
            unsigned rev = 0;
            for (int i = 0; i < len; i++) rev |= ((code >> i) & 1u) << (len - 1 - i);
            for (unsigned i = rev; i < (1u << FASTBITS); i += 1u << len)
                h->fast[i] = (uint16_t)((len << 9) | h->symbol[idx + k]);
        }
        idx += h->count[len];
        code <<= 1;
    }
    return 0;
}

/* The next symbol, or -1 for a bit pattern that is no code. The caller has refilled (>= 15 bits buffered). */
static int decode_slow(uint64_t buf, const struct huff *h);

static inline int decode(struct bits *b, const struct huff *h) {
    int e = h->fast[b->buf & ((1u << FASTBITS) - 1)];
    if (!e && (e = decode_slow(b->buf, h)) < 0) return -1;
    b->buf >>= e >> 9;
    b->cnt -= e >> 9;
    return e & 511;
}

static const uint16_t LBASE[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83,
    99, 115, 131, 163, 195, 227, 258};
static const uint8_t LEXT[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t DBASE[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769,
    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t DEXT[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11,
    12, 12, 13, 13};

/* Too far past the end of the input: the data is truncated (checked per symbol, so a loop on padding stops). */
#define OVERRUN(b) ((b)->padded > 64)

/*
 * The slow path of decode(), for codes longer than FASTBITS or bit patterns that are no code: bit by bit from the
 * next bits of buf. Returns (length << 9) | symbol, like a fast table entry, or -1 when the bits are no code.
 */
static int decode_slow(uint64_t buf, const struct huff *h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= MAXBITS; len++) {
        code |= (int)(buf & 1);
        buf >>= 1;
        int count = h->count[len];
        if (code - count < first) return (len << 9) | h->symbol[index + (code - first)];
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    return -1;
}

/*
 * The symbols of one Huffman-coded block, up to its end-of-block. The bit reader's state is kept in locals (the
 * compiler keeps them in registers); one refill (>= 56 bits) covers a literal/length code (<= 15 bits), its extra
 * bits (<= 5), a distance code (<= 15) and its extra bits (<= 13).
 */
static int codes(struct bits *b, const struct huff *lit, const struct huff *dist, uint64_t *out) {
    uint64_t produced = *out;
    uint64_t buf = b->buf;
    unsigned cnt = b->cnt;
    const uint8_t *p = b->p;
    const uint8_t *end = b->end;
    int rc = -1;
    for (;;) {
        if (end - p >= 8) {
            uint64_t v;
            memcpy(&v, p, 8);   /* little endian (x86-64) */
            buf |= v << cnt;
            p += (63 - cnt) >> 3;
            cnt |= 56;
        } else {
            b->buf = buf;
            b->cnt = cnt;
            b->p = p;
            refill(b);
            buf = b->buf;
            cnt = b->cnt;
            p = b->p;
            if (OVERRUN(b)) break;
        }
        int e = lit->fast[buf & ((1u << FASTBITS) - 1)];
        if (!e && (e = decode_slow(buf, lit)) < 0) break;
        buf >>= e >> 9;
        cnt -= e >> 9;
        int sym = e & 511;
        if (sym < 256) {
            /* up to two more literals from the same refill (3 x 15 bits <= 56) */
            produced++;
            e = lit->fast[buf & ((1u << FASTBITS) - 1)];
            if (!e || (e & 511) >= 256) continue;
            buf >>= e >> 9;
            cnt -= e >> 9;
            produced++;
            e = lit->fast[buf & ((1u << FASTBITS) - 1)];
            if (!e || (e & 511) >= 256) continue;
            buf >>= e >> 9;
            cnt -= e >> 9;
            produced++;
            continue;
        }
        if (sym == 256) {
            rc = 0;
            break;
        }
        sym -= 257;
        if (sym >= 29) break;   /* 286, 287 */
        unsigned n = LEXT[sym];
        unsigned len = LBASE[sym] + (unsigned)(buf & ((1u << n) - 1));
        buf >>= n;
        cnt -= n;
        e = dist->fast[buf & ((1u << FASTBITS) - 1)];
        if (!e && (e = decode_slow(buf, dist)) < 0) break;   /* no code */
        buf >>= e >> 9;
        cnt -= e >> 9;
        int ds = e & 511;
        if (ds >= 30) break;   /* 30, 31 */
        n = DEXT[ds];
        uint64_t d = DBASE[ds] + (buf & ((1u << n) - 1));
        buf >>= n;
        cnt -= n;
        if (d > produced) break;   /* too far back */
        produced += len;
    }
    b->buf = buf;
    b->cnt = cnt;
    b->p = p;
    *out = produced;
    return rc;
}

/* the fixed codes, all 288 literal/length and 32 distance symbols (286-287 and 30-31 are rejected when decoded) */
static struct huff fixed_lit, fixed_dist;
static pthread_once_t fixed_once = PTHREAD_ONCE_INIT;

static void build_fixed(void) {
    uint8_t lens[288];
    for (int i = 0; i < 144; i++) lens[i] = 8;
    for (int i = 144; i < 256; i++) lens[i] = 9;
    for (int i = 256; i < 280; i++) lens[i] = 7;
    for (int i = 280; i < 288; i++) lens[i] = 8;
    build(&fixed_lit, lens, 288, LENS);
    for (int i = 0; i < 32; i++) lens[i] = 5;
    build(&fixed_dist, lens, 32, DISTS);
}

static const uint8_t ORDER[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

int deflate_check(const uint8_t *in, size_t in_len, uint64_t *out_size, size_t *used) {
    struct bits b = {in, in + in_len, 0, 0, 0};
    struct huff lit, dist;
    uint8_t lens[320];
    uint64_t out = 0;
    int last;
    do {
        refill(&b);
        last = (int)take(&b, 1);
        int type = (int)take(&b, 2);
        if (type == 0) {
            unsigned drop = b.cnt & 7;
            b.buf >>= drop;
            b.cnt -= drop;
            refill(&b);
            uint32_t len = take(&b, 16);
            uint32_t nlen = take(&b, 16);
            if (len != (~nlen & 0xffff)) return -1;
            /* skip len bytes: first those in the bit buffer (whole bytes now), then from the input */
            uint32_t inbuf = b.cnt >> 3;
            if (len <= inbuf) {
                if (len) {
                    b.buf >>= 8 * len;   /* len < 8 */
                    b.cnt -= 8 * len;
                }
            } else {
                uint32_t rest = len - inbuf;
                b.buf = 0;
                b.cnt = 0;
                if (b.padded || (size_t)(b.end - b.p) < rest) return -1;
                b.p += rest;
            }
            out += len;
        } else if (type == 1) {
            pthread_once(&fixed_once, build_fixed);
            if (codes(&b, &fixed_lit, &fixed_dist, &out)) return -1;
        } else if (type == 2) {
            refill(&b);
            int nlen = (int)take(&b, 5) + 257;
            int ndist = (int)take(&b, 5) + 1;
            int ncode = (int)take(&b, 4) + 4;
            if (nlen > 286 || ndist > 30) return -1;
            memset(lens, 0, 19);
            for (int i = 0; i < ncode; i++) {
                refill(&b);
                lens[ORDER[i]] = (uint8_t)take(&b, 3);
            }
            struct huff cl;
            if (build(&cl, lens, 19, CODES)) return -1;
            int i = 0;
            while (i < nlen + ndist) {
                refill(&b);
                if (OVERRUN(&b)) return -1;
                int sym = decode(&b, &cl);
                if (sym < 0) return -1;
                if (sym < 16) {
                    lens[i++] = (uint8_t)sym;
                    continue;
                }
                uint8_t len = 0;
                int rep;
                if (sym == 16) {
                    if (i == 0) return -1;
                    len = lens[i - 1];
                    rep = 3 + (int)take(&b, 2);
                } else if (sym == 17) {
                    rep = 3 + (int)take(&b, 3);
                } else {
                    rep = 11 + (int)take(&b, 7);
                }
                if (i + rep > nlen + ndist) return -1;
                while (rep--) lens[i++] = len;
            }
            if (lens[256] == 0) return -1;
            if (build(&lit, lens, nlen, LENS)) return -1;
            if (build(&dist, lens + nlen, ndist, DISTS)) return -1;
            if (codes(&b, &lit, &dist, &out)) return -1;
        } else {
            return -1;
        }
        if (OVERRUN(&b)) return -1;
    } while (!last);
    /* bits consumed, against the bits the input has */
    uint64_t loaded = (uint64_t)(b.p - in) * 8 + b.padded;
    uint64_t consumed = loaded - b.cnt;
    if (consumed > (uint64_t)in_len * 8) return -1;
    *used = (size_t)((consumed + 7) / 8);
    *out_size = out;
    return 0;
}
