/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.slots;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

public class SlotPoolTest {

    @Test
    void keepsUpToItsCapacityAndFreesTheRest() throws IOException {
        List<Object> freed = new ArrayList<>();
        SlotPool<Object> pool = new SlotPool<>(2, freed::add, "closed");
        assertNull(pool.poll(), "empty at first");
        Object a = new Object(), b = new Object(), c = new Object();
        pool.release(a);
        pool.release(b);
        pool.release(c);
        assertEquals(2, pool.idle());
        assertEquals(List.of(c), freed, "the third has no slot");
        Object first = pool.poll();
        assertTrue(first == a || first == b);
        pool.poll();
        assertNull(pool.poll());
        assertThrows(IllegalArgumentException.class, () -> new SlotPool<>(0, o -> { }, "closed"));
    }

    @Test
    void closeFreesTheIdleOnesAndWhatComesBackLater() throws IOException {
        List<Object> freed = new ArrayList<>();
        SlotPool<Object> pool = new SlotPool<>(4, freed::add, "the service is closed");
        Object idle = new Object(), busy = new Object();
        pool.release(idle);
        pool.close();
        assertEquals(List.of(idle), freed);
        pool.release(busy);
        assertSame(busy, freed.get(1), "given back after close(): freed");
        assertEquals(0, pool.idle());
        IOException e = assertThrows(IOException.class, pool::poll);
        assertEquals("the service is closed", e.getMessage());
    }

    @Test
    void losesNothingUnderContentionAndFreesEverythingOnClose() throws Exception {
        AtomicInteger created = new AtomicInteger();
        AtomicInteger freed = new AtomicInteger();
        SlotPool<Object> pool = new SlotPool<>(4, o -> freed.incrementAndGet(), "closed");
        int threads = 8;
        ExecutorService executor = Executors.newFixedThreadPool(threads);
        CyclicBarrier start = new CyclicBarrier(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            done.add(executor.submit(() -> {
                start.await();
                for (int i = 0; i < 20_000; i++) {
                    Object o = pool.poll();
                    if (o == null) {
                        o = new Object();
                        created.incrementAndGet();
                    }
                    pool.release(o);
                }
                return null;
            }));
        }
        for (Future<?> f : done) f.get(60, TimeUnit.SECONDS);
        executor.shutdown();
        assertEquals(created.get(), freed.get() + pool.idle(), "every object is idle in the pool or freed");
        assertTrue(pool.idle() <= 4);
        pool.close();
        assertEquals(created.get(), freed.get(), "close() frees the idle ones");
    }

    @Test
    void aCloseRacingGivesBackLeavesNothingIdle() throws Exception {
        for (int round = 0; round < 200; round++) {
            AtomicInteger freed = new AtomicInteger();
            SlotPool<Object> pool = new SlotPool<>(4, o -> freed.incrementAndGet(), "closed");
            CyclicBarrier start = new CyclicBarrier(2);
            Thread giver = new Thread(() -> {
                try {
                    start.await();
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                for (int i = 0; i < 4; i++) pool.release(new Object());
            });
            giver.start();
            start.await();
            pool.close();
            giver.join();
            assertEquals(0, pool.idle(), "round " + round);
            assertEquals(4, freed.get(), "round " + round);
        }
    }
}
