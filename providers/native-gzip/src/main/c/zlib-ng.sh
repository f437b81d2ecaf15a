#!/bin/sh
# Builds zlib-ng (the inflater of native-gzip's one-call decompression path) as a static, position-independent
# library for libkcnativegzip.so, which links it in with its symbols hidden: the runtime needs nothing new.
#
#   zlib-ng.sh OUT_DIR
#
# zlib-ng is packaged in neither Debian 12 nor 13. Its exact source is the Python package index's sdist of
# python-zlib-ng 0.5.1, which carries zlib-ng 2.1.5 at zlib_ng-0.5.1/src/zlib_ng/zlib-ng/. It is fetched once with
# `pip download` (sdist only, no dependencies, --require-hashes on the pinned SHA-256, the index's own), so pip's
# own configuration decides where from: index-url/PIP_INDEX_URL for a mirror, proxy, cert/PIP_CERT. No host is
# named here. The tarball is checked again with sha256sum and kept in OUT_DIR; the library is rebuilt only when
# this script or the tarball changes. Needs python3 -m pip, gcc and make (build.sh's system package list), no cmake.
# Leaves OUT_DIR/libz-ng.a and its headers in OUT_DIR/include.
set -eu
OUT="$1"
PIN=zlib-ng==0.5.1
SDIST=zlib_ng-0.5.1.tar.gz
SHA256=32a46649e8efc21ddd74776a55366a8d8be4e3a95b93dc1f0ffe3880718990d9
SRC=zlib_ng-0.5.1/src/zlib_ng/zlib-ng
VERSION=2.1.5

mkdir -p "$OUT"
stamp="$(cat "$0" | sha256sum | cut -c1-16)"
if [ -f "$OUT/libz-ng.a" ] && [ "$(cat "$OUT/.stamp" 2>/dev/null)" = "$stamp" ]; then
    exit 0
fi
if ! echo "$SHA256  $OUT/$SDIST" | sha256sum -c --status 2>/dev/null; then
    echo "[zlib-ng] fetching $SDIST with pip download $PIN (pip's index and proxy settings)"
    rm -rf "$OUT/dl"
    mkdir -p "$OUT/dl"
    echo "$PIN --hash=sha256:$SHA256" > "$OUT/dl/requirements.txt"
    # pip prepares the sdist's metadata (its setup.py needs setuptools and versioningit, which pip puts in an
    # isolated build environment from the same index: tools that read the sdist, never part of what ships)
    ${PYTHON:-python3} -m pip download --disable-pip-version-check --no-input -q --no-deps --no-binary :all: \
            --require-hashes -r "$OUT/dl/requirements.txt" -d "$OUT/dl" >"$OUT/pip.log" 2>&1 \
        || { tail -5 "$OUT/pip.log" >&2
             echo "[zlib-ng] pip download $PIN failed (full output: $OUT/pip.log); the native-gzip provider needs it: index-url, proxy or PIP_CERT? see docs/building.md" >&2
             exit 1; }
    if ! echo "$SHA256  $OUT/dl/$SDIST" | sha256sum -c --status; then
        echo "[zlib-ng] $SDIST: SHA-256 $(sha256sum "$OUT/dl/$SDIST" 2>/dev/null | cut -c1-64), expected $SHA256" >&2
        exit 1
    fi
    mv "$OUT/dl/$SDIST" "$OUT/$SDIST.part"
    rm -rf "$OUT/dl"
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
