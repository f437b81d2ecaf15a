/*
 * JNI glue between io.kafkacompress.nativegzip.NativeGzip and three deflate engines:
 * ISA-L (libisal.so.2) and libdeflate (libdeflate.so.0), which compress, and zlib-ng,
 * which inflates.
 *
 * ISA-L and libdeflate are resolved with dlopen()/dlsym() when Java calls init(), not
 * linked: this library always loads, and a host without them gets an error message
 * (reported by checkAvailable()) instead of an UnsatisfiedLinkError or a crash.
 *
 * zlib-ng 2.1.5 (built from source by zlib-ng.sh) is linked in statically with its
 * symbols hidden (-Wl,--exclude-libs,ALL): nothing new at run time. Its inflate keeps
 * zlib's checks (the same inflate.c/inftrees.c state machine and messages), so it
 * rejects exactly what Kafka's built-in codec (zlib through java.util.zip) rejects;
 * libdeflate's and ISA-L's inflaters accept some invalid deflate data (see the README).
 *
 * Every entry point works on a whole batch: no per-byte native calls. Native state
 * (compressors, inflaters) is owned by a handle that Java keeps in a pool and uses from
 * one thread at a time.
 */
#include <jni.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib-ng.h>

static __typeof__(&isal_deflate_init) p_isal_deflate_init;
static __typeof__(&isal_deflate) p_isal_deflate;
static __typeof__(&libdeflate_alloc_compressor) p_ld_alloc;
static __typeof__(&libdeflate_free_compressor) p_ld_free;
static __typeof__(&libdeflate_gzip_compress) p_ld_gzip;

static int loaded = 0;

#define SYM(handle, var, name) do { \
        *(void **)(&var) = dlsym(handle, name); \
        if (!var) { snprintf(err, sizeof(err), "symbol %s not found: %s", name, dlerror()); goto fail; } \
    } while (0)

JNIEXPORT jstring JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_init(JNIEnv *env, jclass cls,
        jstring isalName, jstring deflateName) {
    char err[512];
    void *isal = NULL, *ld = NULL;
    if (loaded) return NULL;
    const char *in = (*env)->GetStringUTFChars(env, isalName, NULL);
    const char *dn = (*env)->GetStringUTFChars(env, deflateName, NULL);
    isal = dlopen(in, RTLD_NOW | RTLD_LOCAL);
    if (!isal) { snprintf(err, sizeof(err), "ISA-L not loadable (%s): %s", in, dlerror()); goto fail; }
    ld = dlopen(dn, RTLD_NOW | RTLD_LOCAL);
    if (!ld) { snprintf(err, sizeof(err), "libdeflate not loadable (%s): %s", dn, dlerror()); goto fail; }
    SYM(isal, p_isal_deflate_init, "isal_deflate_init");
    SYM(isal, p_isal_deflate, "isal_deflate");
    SYM(ld, p_ld_alloc, "libdeflate_alloc_compressor");
    SYM(ld, p_ld_free, "libdeflate_free_compressor");
    SYM(ld, p_ld_gzip, "libdeflate_gzip_compress");
    (*env)->ReleaseStringUTFChars(env, isalName, in);
    (*env)->ReleaseStringUTFChars(env, deflateName, dn);
    loaded = 1;
    return NULL;
fail:
    (*env)->ReleaseStringUTFChars(env, isalName, in);
    (*env)->ReleaseStringUTFChars(env, deflateName, dn);
    if (isal) dlclose(isal);
    if (ld) dlclose(ld);
    return (*env)->NewStringUTF(env, err);
}

/* ---------------------------------------------------------------- libdeflate */

JNIEXPORT jlong JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_ldNew(JNIEnv *env, jclass cls, jint level) {
    return (jlong)(intptr_t)p_ld_alloc(level);
}

JNIEXPORT void JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_ldFree(JNIEnv *env, jclass cls, jlong h) {
    if (h) p_ld_free((struct libdeflate_compressor *)(intptr_t)h);
}

/* returns the gzip member's size, 0 if out was too small, -1 if the JVM could not pin the arrays */
JNIEXPORT jint JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_ldGzip(JNIEnv *env, jclass cls, jlong h,
        jbyteArray in, jint inOff, jint inLen, jbyteArray out, jint outOff, jint outLen) {
    jbyte *i = (*env)->GetPrimitiveArrayCritical(env, in, NULL);
    if (!i) return -1;
    jbyte *o = (*env)->GetPrimitiveArrayCritical(env, out, NULL);
    if (!o) { (*env)->ReleasePrimitiveArrayCritical(env, in, i, JNI_ABORT); return -1; }
    size_t n = p_ld_gzip((struct libdeflate_compressor *)(intptr_t)h, i + inOff, (size_t)inLen, o + outOff, (size_t)outLen);
    (*env)->ReleasePrimitiveArrayCritical(env, out, o, 0);
    (*env)->ReleasePrimitiveArrayCritical(env, in, i, JNI_ABORT);
    return (jint)n;
}

/* ---------------------------------------------------------------- ISA-L deflate */

struct isal_deflater {
    struct isal_zstream stream;
    int level;
    uint32_t level_buf_size;
    uint8_t level_buf[];
};

static uint32_t isal_level_buf_size(int level) {
    switch (level) {
    case 1: return ISAL_DEF_LVL1_DEFAULT;
    case 2: return ISAL_DEF_LVL2_DEFAULT;
    case 3: return ISAL_DEF_LVL3_DEFAULT;
    default: return 0;
    }
}

JNIEXPORT jlong JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_isalDeflaterNew(JNIEnv *env, jclass cls, jint level) {
    if (level < 0 || level > 3) return 0;
    uint32_t size = isal_level_buf_size(level);
    struct isal_deflater *d = malloc(sizeof(struct isal_deflater) + size);
    if (!d) return 0;
    d->level = level;
    d->level_buf_size = size;
    return (jlong)(intptr_t)d;
}

JNIEXPORT void JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_isalDeflaterFree(JNIEnv *env, jclass cls, jlong h) {
    free((void *)(intptr_t)h);
}

/* one gzip member of in[inOff, inOff+inLen): its size, 0 if out was too small, <0 on error */
JNIEXPORT jint JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_isalGzip(JNIEnv *env, jclass cls, jlong h,
        jbyteArray in, jint inOff, jint inLen, jbyteArray out, jint outOff, jint outLen) {
    struct isal_deflater *d = (struct isal_deflater *)(intptr_t)h;
    jbyte *i = (*env)->GetPrimitiveArrayCritical(env, in, NULL);
    if (!i) return -1;
    jbyte *o = (*env)->GetPrimitiveArrayCritical(env, out, NULL);
    if (!o) { (*env)->ReleasePrimitiveArrayCritical(env, in, i, JNI_ABORT); return -1; }
    struct isal_zstream *s = &d->stream;
    p_isal_deflate_init(s);
    s->level = (uint32_t)d->level;
    s->level_buf = d->level_buf_size ? d->level_buf : NULL;
    s->level_buf_size = d->level_buf_size;
    s->gzip_flag = IGZIP_GZIP;
    s->end_of_stream = 1;
    s->flush = NO_FLUSH;
    s->next_in = (uint8_t *)(i + inOff);
    s->avail_in = (uint32_t)inLen;
    s->next_out = (uint8_t *)(o + outOff);
    s->avail_out = (uint32_t)outLen;
    int rc = p_isal_deflate(s);
    jint result;
    if (rc != COMP_OK) result = rc < 0 ? rc : -100;
    else if (s->internal_state.state != ZSTATE_END) result = 0;   /* out too small */
    else result = (jint)(outLen - s->avail_out);
    (*env)->ReleasePrimitiveArrayCritical(env, out, o, 0);
    (*env)->ReleasePrimitiveArrayCritical(env, in, i, JNI_ABORT);
    return result;
}

/* ---------------------------------------------------------------- zlib-ng inflate */

/* A raw-deflate (windowBits -15) inflater, or 0 if it cannot be allocated. */
JNIEXPORT jlong JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_zngInflaterNew(JNIEnv *env, jclass cls) {
    zng_stream *s = calloc(1, sizeof(zng_stream));
    if (!s) return 0;
    if (zng_inflateInit2(s, -15) != Z_OK) {
        free(s);
        return 0;
    }
    return (jlong)(intptr_t)s;
}

JNIEXPORT void JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_zngInflaterFree(JNIEnv *env, jclass cls, jlong h) {
    zng_stream *s = (zng_stream *)(intptr_t)h;
    if (!s) return;
    zng_inflateEnd(s);
    free(s);
}

/*
 * Inflates the raw deflate data in[inOff, inOff+inLen) into out[outOff, outOff+outLen) in one zng_inflate call
 * (Z_FINISH: no sliding window is kept when the stream ends in this call) from a reset stream. Returns, when >= 0:
 * the bytes written | ZNG_END (the final block ended) | ZNG_INPUT_DONE (no input left after it); else
 * ZNG_CORRUPT (the message: zngMessage), ZNG_NOMEM, ZNG_PIN (the JVM could not pin the arrays) or ZNG_OTHER.
 */
#define ZNG_END        (1LL << 32)
#define ZNG_INPUT_DONE (1LL << 33)
#define ZNG_CORRUPT    (-1)
#define ZNG_NOMEM      (-2)
#define ZNG_PIN        (-3)
#define ZNG_OTHER      (-4)

JNIEXPORT jlong JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_zngInflate(JNIEnv *env, jclass cls, jlong h,
        jbyteArray in, jint inOff, jint inLen, jbyteArray out, jint outOff, jint outLen) {
    zng_stream *s = (zng_stream *)(intptr_t)h;
    if (zng_inflateReset(s) != Z_OK) return ZNG_OTHER;
    jbyte *i = (*env)->GetPrimitiveArrayCritical(env, in, NULL);
    if (!i) return ZNG_PIN;
    jbyte *o = (*env)->GetPrimitiveArrayCritical(env, out, NULL);
    if (!o) { (*env)->ReleasePrimitiveArrayCritical(env, in, i, JNI_ABORT); return ZNG_PIN; }
    s->next_in = (const uint8_t *)(i + inOff);
    s->avail_in = (uint32_t)inLen;
    s->next_out = (uint8_t *)(o + outOff);
    s->avail_out = (uint32_t)outLen;
    int rc = zng_inflate(s, Z_FINISH);
    jlong n = (jlong)(outLen - s->avail_out);
    (*env)->ReleasePrimitiveArrayCritical(env, out, o, 0);
    (*env)->ReleasePrimitiveArrayCritical(env, in, i, JNI_ABORT);
    switch (rc) {
    case Z_STREAM_END: return n | ZNG_END | (s->avail_in == 0 ? ZNG_INPUT_DONE : 0);
    case Z_OK:
    case Z_BUF_ERROR: return n;   /* out of output or of input: not one whole member */
    case Z_DATA_ERROR: return ZNG_CORRUPT;
    case Z_MEM_ERROR: return ZNG_NOMEM;
    default: return ZNG_OTHER;
    }
}

/* zlib-ng's message for the last failure of this inflater (zlib's words), or null. */
JNIEXPORT jstring JNICALL Java_io_kafkacompress_nativegzip_NativeGzip_zngMessage(JNIEnv *env, jclass cls, jlong h) {
    zng_stream *s = (zng_stream *)(intptr_t)h;
    return s->msg ? (*env)->NewStringUTF(env, s->msg) : NULL;
}
