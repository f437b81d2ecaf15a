/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import io.kafkacompress.testkit.GzipFuzz;
import io.kafkacompress.testkit.GzipMembers;
import io.kafkacompress.testkit.TestData;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * What every gzip provider of this distribution promises (issue 17): exactly one gzip member per batch, whatever
 * its size and however it is written; and exactly the verdicts of Kafka's built-in gzip reader on any input.
 */
public class NativeGzipConformanceTest {

    static final NativeGzipCompressionService SERVICE = new NativeGzipCompressionService();
    static byte[] json;

    @BeforeAll
    static void setUp() throws IOException {
        SERVICE.checkAvailable();
        json = TestData.jsonRecords();
    }

    @Test
    void everyBatchIsOneGzipMember() throws IOException {
        GzipMembers.assertOneMemberPerBatch(SERVICE, "native-gzip", json);
    }

    @Test
    void corpusGetsTheBuiltInReadersVerdicts() throws IOException {
        GzipFuzz fuzz = new GzipFuzz(SERVICE, "native-gzip", json, 0);
        List<byte[]> corpus = GzipFuzz.corpus(Path.of(System.getProperty("kc.corpus.dir", "../testkit/corpus")));
        for (byte[] input : corpus) assertNull(fuzz.mismatch(input), GzipFuzz.hex(input));
        System.out.println("[native-gzip] corpus: " + corpus.size() + " reproducers, all read as the built-in reader does");
        // the two reproducers are in it, and are rejected
        int rejected = 0;
        for (byte[] input : corpus) if (fuzz.provider(input, 0) == null && fuzz.builtIn(input) == null) rejected++;
        assertEquals(true, rejected >= 2, "reproducers rejected: " + rejected);
    }

    @Test
    void fuzzAgainstTheBuiltInReader() {
        long seed = GzipFuzz.seed();
        long seconds = GzipFuzz.seconds(60);
        System.out.println("[native-gzip] fuzz seed " + seed + " (rerun: -Dkc.fuzz.seed=" + seed + " -Dkc.fuzz.seconds=" + seconds + ")");
        GzipFuzz fuzz = new GzipFuzz(SERVICE, "native-gzip", json, seed);
        long inputs = fuzz.run(seed, seconds);
        // the whole-batch call, what the framework uses for single members, was exercised, not only the stream
        assertEquals(true, fuzz.wholeDecoded() > inputs / 10, "decoded by the whole-batch call: " + fuzz.wholeDecoded());
    }
}
