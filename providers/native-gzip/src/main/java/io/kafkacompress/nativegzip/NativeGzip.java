/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Cleaner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * JNI bindings to {@code nativegzip.c} and the native library loader.
 * <p>
 * The JNI library ships inside this jar ({@code /native/linux-x86_64/libkcnativegzip.so}); it is extracted to a
 * temporary file and loaded on first use. It needs nothing but libc: zlib-ng, its inflater, is linked into it with
 * its symbols hidden, and ISA-L ({@code libisal.so.2}) and libdeflate ({@code libdeflate.so.0}), which compress, are
 * opened with {@code dlopen} by {@link #init}, so that a host without them gets a reason instead of a crash or an
 * {@link UnsatisfiedLinkError}.
 */
final class NativeGzip {

    /** The sonames of Debian's libisal2 and libdeflate0 (overridable, for tests of a host without them). */
    static final String ISAL_LIBRARY = System.getProperty("kc.nativegzip.isal", "libisal.so.2");
    static final String LIBDEFLATE_LIBRARY = System.getProperty("kc.nativegzip.libdeflate", "libdeflate.so.0");
    private static final String RESOURCE = "/native/linux-x86_64/libkcnativegzip.so";

    static final Cleaner CLEANER = Cleaner.create();

    private NativeGzip() {
    }

    /**
     * Loads the JNI library and the engines, once per class loader; returns null when usable, else why not. Never
     * throws. The result is fixed when this class's holder is initialized, so callers (every stream) take no lock.
     */
    static String load() {
        return Loaded.FAILURE;
    }

    /** Class initialization runs {@link #loadOnce()} exactly once, under the JVM's own initialization lock. */
    private static final class Loaded {
        static final String FAILURE = loadOnce();
    }

    private static String loadOnce() {
        try {
            String os = System.getProperty("os.name", "");
            String arch = System.getProperty("os.arch", "");
            if (!os.toLowerCase().contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64")))
                return "native gzip is built for Linux x86-64 only, this is " + os + " " + arch;
            Path tmp = Files.createTempFile("libkcnativegzip", ".so");
            try (InputStream in = NativeGzip.class.getResourceAsStream(RESOURCE)) {
                if (in == null) return "JNI library " + RESOURCE + " missing from the jar";
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                System.load(tmp.toAbsolutePath().toString());
            } finally {
                Files.deleteIfExists(tmp);   // the mapping stays valid after unlink
            }
            return init(ISAL_LIBRARY, LIBDEFLATE_LIBRARY);
        } catch (IOException | LinkageError | RuntimeException e) {
            return "could not load the native gzip JNI library: " + e;
        }
    }

    static native String init(String isalLibrary, String libdeflateLibrary);

    static native long ldNew(int level);

    static native void ldFree(long handle);

    static native int ldGzip(long handle, byte[] in, int inOff, int inLen, byte[] out, int outOff, int outLen);

    static native long isalDeflaterNew(int level);

    static native void isalDeflaterFree(long handle);

    static native int isalGzip(long handle, byte[] in, int inOff, int inLen, byte[] out, int outOff, int outLen);

    /** {@link #zngInflate}'s result, when not negative: the final block ended. */
    static final long ZNG_END = 1L << 32;
    /** {@link #zngInflate}'s result, when not negative: no input is left after the final block. */
    static final long ZNG_INPUT_DONE = 1L << 33;
    /** {@link #zngInflate}'s failures: corrupt data ({@link #zngMessage} says why), out of memory, arrays not pinned. */
    static final long ZNG_CORRUPT = -1;
    static final long ZNG_NOMEM = -2;
    static final long ZNG_PIN = -3;

    /** A zlib-ng raw-deflate inflater, or 0 if it could not be allocated. */
    static native long zngInflaterNew();

    static native void zngInflaterFree(long handle);

    /**
     * Inflates the raw deflate data in[inOff, inOff+inLen) into out[outOff, outOff+outLen) in one call from a reset
     * inflater: the bytes written ({@code & 0xffffffffL}) with {@link #ZNG_END} and {@link #ZNG_INPUT_DONE}, or a
     * negative failure.
     */
    static native long zngInflate(long handle, byte[] in, int inOff, int inLen, byte[] out, int outOff, int outLen);

    /** zlib-ng's message (zlib's words) for the inflater's last failure, or null. */
    static native String zngMessage(long handle);

    /**
     * Native memory owned by one Java object: freed explicitly ({@link #free()}), or by the cleaner if the object
     * is dropped without that (a stream abandoned without close, a service dropped without close).
     */
    abstract static class NativeHandle {
        final long handle;
        private final Cleaner.Cleanable cleanable;

        /** @param handle a non-zero native pointer (a zero one is an allocation failure the caller reports) */
        NativeHandle(long handle, Runnable free) {
            this.handle = handle;
            this.cleanable = CLEANER.register(this, free);
        }

        final void free() {
            cleanable.clean();   // idempotent
        }
    }
}
