#!/bin/sh
# Builds zlib-ng (the inflater of native-gzip's one-call decompression path) as a static, position-independent
# library for libkcnativegzip.so, which links it in with its symbols hidden: the runtime needs nothing new.
#
#   zlib-ng.sh OUT_DIR
#
# zlib-ng is packaged in neither Debian 12 nor 13. Its exact source comes from PyPI: the sdist of python-zlib-ng
# 0.5.1 carries zlib-ng 2.1.5 at zlib_ng-0.5.1/src/zlib_ng/zlib-ng/. The tarball is fetched once (curl), checked
# against its pinned SHA-256 (PyPI's own), and kept in OUT_DIR; the library is rebuilt only when this script or
# the tarball changes. Needs curl, gcc and make (build.sh's system package list), no cmake.
# Leaves OUT_DIR/libz-ng.a and its headers in OUT_DIR/include.
set -eu
OUT="$1"
SDIST=zlib_ng-0.5.1.tar.gz
URL=https://files.pythonhosted.org/packages/c4/a7/0b7673be5945071e99364a3ac1987b02fc1d416617e97f3e8816d275174e/$SDIST
SHA256=32a46649e8efc21ddd74776a55366a8d8be4e3a95b93dc1f0ffe3880718990d9
SRC=zlib_ng-0.5.1/src/zlib_ng/zlib-ng
VERSION=2.1.5

mkdir -p "$OUT"
stamp="$(cat "$0" | sha256sum | cut -c1-16)"
if [ -f "$OUT/libz-ng.a" ] && [ "$(cat "$OUT/.stamp" 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
if ! echo "$SHA256  $OUT/$SDIST" | sha256sum -c --status 2>/dev/null; then
    echo "[zlib-ng] fetching $URL"
    rm -f "$OUT/$SDIST.part"
    curl -fsSL --retry 3 -o "$OUT/$SDIST.part" "$URL" \
        || { echo "[zlib-ng] could not fetch $URL (the native-gzip provider needs it; a proxy? see docs/building.md)" >&2; exit 1; }
    if ! echo "$SHA256  $OUT/$SDIST.part" | sha256sum -c --status; then
        echo "[zlib-ng] $URL: SHA-256 $(sha256sum "$OUT/$SDIST.part" | cut -c1-64), expected $SHA256" >&2
        exit 1
    fi
    mv "$OUT/$SDIST.part" "$OUT/$SDIST"
fi
rm -rf "$OUT/src" "$OUT/include" "$OUT/libz-ng.a"
mkdir -p "$OUT/src"
tar -xzf "$OUT/$SDIST" -C "$OUT/src" "$SRC"
grep -q "define ZLIBNG_VERSION \"$VERSION\"" "$OUT/src/$SRC/zlib-ng.h.in" \
    || { echo "[zlib-ng] $SDIST does not hold zlib-ng $VERSION" >&2; exit 1; }
# configure's own flags (-O2, runtime CPU dispatch to SSE2..AVX-512 variants), plus -fPIC: the objects go into a
# shared library. Native API (zng_ prefix), so nothing can clash with the JVM's zlib even before hiding.
(cd "$OUT/src/$SRC" && CFLAGS="-fPIC" ./configure --static >"$OUT/configure.log" 2>&1 \
    && make -j"$(nproc 2>/dev/null || echo 2)" libz-ng.a >"$OUT/make.log" 2>&1) \
    || { echo "[zlib-ng] build failed: see $OUT/configure.log and $OUT/make.log" >&2; exit 1; }
mkdir -p "$OUT/include"
cp "$OUT/src/$SRC/zlib-ng.h" "$OUT/src/$SRC/zconf-ng.h" "$OUT/src/$SRC/zlib_name_mangling-ng.h" "$OUT/include/"
cp "$OUT/src/$SRC/libz-ng.a" "$OUT/libz-ng.a"
rm -rf "$OUT/src"
echo "$stamp" > "$OUT/.stamp"
echo "[zlib-ng] built zlib-ng $VERSION: $OUT/libz-ng.a"
