/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */
package io.kafkacompress.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The repository's JSON test records ({@code tests/data}, see its README). Maven's surefire passes the folder as
 * the system property {@code kc.data.dir} (set once, in the parent pom); a test run outside Maven (the QAT tests in
 * a container) passes it as the environment variable {@code KC_DATA_DIR}.
 */
public final class TestData {

    private TestData() {
    }

    /** The bytes of {@code tests/data/json-records.ndjson}: 2,452 generated JSON documents, one per line. */
    public static byte[] jsonRecords() throws IOException {
        String dir = System.getProperty("kc.data.dir", System.getenv("KC_DATA_DIR"));
        if (dir == null)
            throw new IllegalStateException("No test data folder: set the system property kc.data.dir or the "
                + "environment variable KC_DATA_DIR to the repository's tests/data");
        Path file = Path.of(dir, "json-records.ndjson");
        if (!Files.isRegularFile(file))
            throw new IllegalStateException("No test data file " + file.toAbsolutePath()
                + " (kc.data.dir/KC_DATA_DIR should name the repository's tests/data)");
        return Files.readAllBytes(file);
    }
}
