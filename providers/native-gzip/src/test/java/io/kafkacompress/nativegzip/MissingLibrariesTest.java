/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.nativegzip;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A JVM where the engines cannot be opened: checkAvailable() says why, nothing crashes. */
public class MissingLibrariesTest {

    public static void main(String[] args) {
        NativeGzipCompressionService s = new NativeGzipCompressionService();
        try {
            s.checkAvailable();
            System.out.println("AVAILABLE");
        } catch (RuntimeException e) {
            System.out.println("UNAVAILABLE " + e.getMessage());
        }
    }

    @Test
    void missingEngineIsReportedUnavailable() throws IOException, InterruptedException {
        for (String prop : List.of("kc.nativegzip.isal", "kc.nativegzip.libdeflate")) {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            Process p = new ProcessBuilder(java, "-D" + prop + "=libdoes-not-exist.so.7", "-cp", System.getProperty("java.class.path"),
                MissingLibrariesTest.class.getName()).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), out);
            System.out.println("[native-gzip] with " + prop + " missing: " + out);
            assertTrue(out.startsWith("UNAVAILABLE ") && out.contains("libdoes-not-exist.so.7"), out);
        }
    }
}
