/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.slots;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;

/**
 * A bounded pool of idle objects that one compression service owns (native compressors and inflaters, QATzip
 * sessions): a fixed array of slots, each emptied and filled by compare-and-set, so that taking and giving back take
 * no lock. A thread polls an idle object (or creates one when there is none), uses it alone, and gives it back; when
 * every slot is full, what is given back is freed. {@link #close()} frees the idle objects and everything given back
 * afterwards, and a poll after it throws an {@link IOException}, which a compression provider lets through so that
 * Kafka's provider framework falls back to the built-in codec.
 *
 * @param <T> what the pool holds
 */
public final class SlotPool<T> {

    /** The slots of a pool made with {@link #SlotPool(Consumer, String)}: two per core, at least four. */
    public static final int DEFAULT_CAPACITY = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());

    private final AtomicReferenceArray<T> idle;
    private final Consumer<? super T> free;
    private final String closedMessage;
    private volatile boolean closed;

    /**
     * @param capacity      how many idle objects the pool keeps
     * @param free          frees an object the pool does not keep (it is full or closed)
     * @param closedMessage the message of the {@link IOException} a poll after {@link #close()} throws
     */
    public SlotPool(int capacity, Consumer<? super T> free, String closedMessage) {
        if (capacity < 1) throw new IllegalArgumentException("capacity " + capacity + " < 1");
        this.idle = new AtomicReferenceArray<>(capacity);
        this.free = free;
        this.closedMessage = closedMessage;
    }

    /** A pool of {@link #DEFAULT_CAPACITY} slots. */
    public SlotPool(Consumer<? super T> free, String closedMessage) {
        this(DEFAULT_CAPACITY, free, closedMessage);
    }

    /**
     * @return an idle object, now the caller's alone, or null when there is none (the caller creates one)
     * @throws IOException once the pool is closed
     */
    public T poll() throws IOException {
        if (closed) throw new IOException(closedMessage);
        for (int i = 0; i < idle.length(); i++) {
            T t = idle.get(i);
            if (t != null && idle.compareAndSet(i, t, null)) return t;
        }
        return null;
    }

    /** Gives an object back into an empty slot, or frees it when there is none or the pool is closed. */
    public void release(T t) {
        if (!closed) {
            for (int i = 0; i < idle.length(); i++) {
                if (idle.get(i) == null && idle.compareAndSet(i, null, t)) {
                    if (closed) drain();   // close() ran between the check and the store
                    return;
                }
            }
        }
        free.accept(t);
    }

    /** How many objects are idle in the pool now. */
    public int idle() {
        int n = 0;
        for (int i = 0; i < idle.length(); i++) if (idle.get(i) != null) n++;
        return n;
    }

    /** Frees the idle objects, and from now on everything given back; a later poll throws. */
    public void close() {
        closed = true;
        drain();
    }

    private void drain() {
        for (int i = 0; i < idle.length(); i++) {
            T t = idle.getAndSet(i, null);
            if (t != null) free.accept(t);
        }
    }
}
