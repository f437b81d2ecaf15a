#!/usr/bin/env python3
# Writes (to stdout, one 'name hex' line each) the gzip members of this corpus's issue-29 entries: hand-written deflate
# streams that hit libdeflate's and ISA-L's known divergences from zlib. bench/strict-check/verdicts.sh reads them
# with zlib, zlib-ng, libdeflate and ISA-L.
import struct, zlib, sys

class Bits:
    def __init__(s): s.out = bytearray(); s.acc = 0; s.n = 0
    def put(s, v, n):            # LSB-first fields
        for i in range(n):
            s.acc |= ((v >> i) & 1) << s.n; s.n += 1
            if s.n == 8: s.out.append(s.acc); s.acc = 0; s.n = 0
    def huff(s, code, n):        # Huffman codes go MSB-first
        for i in range(n - 1, -1, -1): s.put((code >> i) & 1, 1)
    def done(s):
        if s.n: s.out.append(s.acc)
        return bytes(s.out)

def canon(lengths):
    maxl = max(lengths) if lengths else 0
    bl = [0] * (maxl + 2)
    for l in lengths:
        if l: bl[l] += 1
    code = 0; nxt = [0] * (maxl + 2)
    for b in range(1, maxl + 1):
        code = (code + bl[b - 1]) << 1; nxt[b] = code
    codes = {}
    for sym, l in enumerate(lengths):
        if l: codes[sym] = (nxt[l], l); nxt[l] += 1
    return codes

def fixed_lit(b, sym):
    if sym < 144: b.huff(0x30 + sym, 8)
    elif sym < 256: b.huff(0x190 + sym - 144, 9)
    elif sym < 280: b.huff(sym - 256, 7)
    else: b.huff(0xC0 + sym - 280, 8)

ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

def dynamic(b, lit_lengths, dist_lengths, final=1):
    b.put(final, 1); b.put(2, 2)
    b.put(len(lit_lengths) - 257, 5); b.put(len(dist_lengths) - 1, 5)
    used = sorted(set(lit_lengths + dist_lengths))
    pre = [0] * 19
    # a complete precode over the values used
    k = len(used); L = max(1, (k - 1).bit_length())
    short = (1 << L) - k if k > 1 else 0
    for i, v in enumerate(used): pre[v] = L - 1 if i < short else L
    nclen = max(ORDER.index(v) for v in used) + 1
    nclen = max(nclen, 4)
    b.put(nclen - 4, 4)
    for i in range(nclen): b.put(pre[ORDER[i]], 3)
    pc = canon(pre)
    for v in lit_lengths + dist_lengths: b.huff(*pc[v])
    return canon(lit_lengths), canon(dist_lengths)

def gzip(raw, content):
    return (b'\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03' + raw
            + struct.pack('<II', zlib.crc32(content) & 0xffffffff, len(content) & 0xffffffff))

cases = {}
# fixed Huffman: 'a', then length symbol 257 (3) with distance symbol 30 / 31
for d in (30, 31):
    b = Bits(); b.put(1, 1); b.put(1, 2)
    fixed_lit(b, ord('a')); fixed_lit(b, 257); b.huff(d, 5); fixed_lit(b, 256)
    cases['fixed-distance-%d' % d] = (b.done(), b'aaaa')
# fixed Huffman: literal/length symbol 287 (286 is already in the corpus)
b = Bits(); b.put(1, 1); b.put(1, 2); fixed_lit(b, ord('a')); fixed_lit(b, 287); b.huff(0, 5); fixed_lit(b, 256)
cases['fixed-litlen-287'] = (b.done(), b'aaaa')
# dynamic header with HLIT = 287 codes (zlib: at most 286) and HDIST = 31 (zlib: at most 30)
def dyn(nlit, ndist):
    lit = [0] * nlit; lit[ord('a')] = 1; lit[256] = 1
    dist = [0] * ndist; dist[0] = 1; dist[1] = 1
    b = Bits(); lc, dc = dynamic(b, lit, dist)
    b.huff(*lc[ord('a')]); b.huff(*lc[256])
    return b.done()
cases['dynamic-hlit-287'] = (dyn(287, 2), b'a')
cases['dynamic-hlit-288'] = (dyn(288, 2), b'a')
cases['dynamic-hdist-31'] = (dyn(257, 31), b'a')
cases['dynamic-hdist-32'] = (dyn(257, 32), b'a')
# incomplete single-code distance table (one distance code of length 1, allowed by zlib) and the data uses the
# unused code '1': zlib "invalid distance code"
lit = [0] * 258; lit[ord('a')] = 1; lit[256] = 2; lit[257] = 2
dist = [1]
b = Bits(); lc, dc = dynamic(b, lit, dist)
b.huff(*lc[ord('a')]); b.huff(*lc[257]); b.put(1, 1); b.huff(*lc[256])
cases['dynamic-single-distance-code-unused-codeword'] = (b.done(), b'aaaa')
# incomplete literal/length code that is not a single code ('a' 1 bit, end-of-block 2 bits, '11' unused):
# zlib "invalid literal/lengths set"
lit = [0] * 257; lit[ord('a')] = 1; lit[256] = 2
b = Bits(); lc, dc = dynamic(b, lit, [1])
b.huff(*lc[ord('a')]); b.huff(*lc[256])
cases['dynamic-incomplete-litlen-code'] = (b.done(), b'a')
for name, (raw, content) in cases.items():
    gz = gzip(raw, content)
    sys.stdout.write(name + ' ' + gz.hex() + '\n')
