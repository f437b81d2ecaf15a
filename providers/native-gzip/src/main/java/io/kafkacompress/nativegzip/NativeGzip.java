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
import java.util.concurrent.ArrayBlockingQueue;

/**
 * JNI bindings to {@code nativegzip.c} and the native library loader.
 * <p>
 * The JNI library ships inside this jar ({@code /native/linux-x86_64/libkcnativegzip.so}); it is extracted to a
 * temporary file and loaded on first use. It links nothing but libc: ISA-L ({@code libisal.so.2}) and libdeflate
 * ({@code libdeflate.so.0}) are opened with {@code dlopen} by {@link #init}, so that a host without them gets a
 * reason instead of a crash or an {@link UnsatisfiedLinkError}.
 */
final class NativeGzip {

    /** The sonames of Debian's libisal2 and libdeflate0 (overridable, for tests of a host without them). */
    static final String ISAL_LIBRARY = System.getProperty("kc.nativegzip.isal", "libisal.so.2");
    static final String LIBDEFLATE_LIBRARY = System.getProperty("kc.nativegzip.libdeflate", "libdeflate.so.0");
    private static final String RESOURCE = "/native/linux-x86_64/libkcnativegzip.so";

    static final Cleaner CLEANER = Cleaner.create();

    private static volatile String failure;    // null: not tried yet or loaded
    private static volatile boolean loaded;

    private NativeGzip() {
    }

    /** Loads the JNI library and the engines once; returns null when usable, else why not. Never throws. */
    static synchronized String load() {
        if (loaded) return null;
        if (failure != null) return failure;
        try {
            String os = System.getProperty("os.name", "");
            String arch = System.getProperty("os.arch", "");
            if (!os.toLowerCase().contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
                failure = "native gzip is built for Linux x86-64 only, this is " + os + " " + arch;
                return failure;
            }
            Path tmp = Files.createTempFile("libkcnativegzip", ".so");
            try (InputStream in = NativeGzip.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    failure = "JNI library " + RESOURCE + " missing from the jar";
                    return failure;
                }
                Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
                System.load(tmp.toAbsolutePath().toString());
            } finally {
                Files.deleteIfExists(tmp);   // the mapping stays valid after unlink
            }
            String error = init(ISAL_LIBRARY, LIBDEFLATE_LIBRARY);
            if (error != null) {
                failure = error;
                return failure;
            }
            loaded = true;
            return null;
        } catch (IOException | LinkageError | SecurityException e) {
            failure = "could not load the native gzip JNI library: " + e;
            return failure;
        }
    }

    static native String init(String isalLibrary, String libdeflateLibrary);

    static native long ldNew(int level);

    static native void ldFree(long handle);

    static native long ldBound(long handle, int length);

    static native int ldGzip(long handle, byte[] in, int inOff, int inLen, byte[] out, int outOff, int outLen);

    static native long isalDeflaterNew(int level);

    static native void isalDeflaterFree(long handle);

    static native int isalGzip(long handle, byte[] in, int inOff, int inLen, byte[] out, int outOff, int outLen);

    /**
     * Native memory owned by one Java object: freed explicitly ({@link #free()}), or by the cleaner if the object
     * is dropped without that (a stream abandoned without close).
     */
    abstract static class NativeHandle {
        final long handle;
        private final Cleaner.Cleanable cleanable;

        NativeHandle(long handle, Runnable free) {
            if (handle == 0) throw new OutOfMemoryError("native gzip: could not allocate native state");
            this.handle = handle;
            this.cleanable = CLEANER.register(this, free);
        }

        final void free() {
            cleanable.clean();   // idempotent
        }
    }

    /** A bounded pool of handles: take or create, give back or free when full. */
    static final class Pool<T extends NativeHandle> {
        private final ArrayBlockingQueue<T> idle;

        Pool(int capacity) {
            idle = new ArrayBlockingQueue<>(capacity);
        }

        T poll() {
            return idle.poll();
        }

        void release(T handle) {
            if (!idle.offer(handle)) handle.free();
        }

        int idle() {
            return idle.size();
        }
    }
}
