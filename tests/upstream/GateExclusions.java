/*
 * Licensed to the Apache Software Foundation (ASF) under the Apache License 2.0.
 */
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;

import org.junit.platform.engine.FilterResult;
import org.junit.platform.engine.TestDescriptor;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.PostDiscoveryFilter;

/**
 * Excludes the upstream tests listed in tests/upstream/exclusions.txt
 * ("fully.qualified.Class" or "fully.qualified.Class#method"), so that the
 * gate's exclusions live in one file with their reasons. When a retry names
 * the test methods it reruns (kafka.gate.only, "Class#method" per line),
 * every other test method is left out too.
 */
public class GateExclusions implements PostDiscoveryFilter {
    private final List<String> entries;
    private final List<String> only;

    public GateExclusions() {
        entries = read("kafka.gate.exclusions");
        only = read("kafka.gate.only");
    }

    private static List<String> read(String property) {
        String file = System.getProperty(property);
        if (file == null) {
            return List.of();
        }
        try {
            return Files.readAllLines(Paths.get(file)).stream()
                .map(String::trim).filter(s -> !s.isEmpty()).collect(Collectors.toList());
        } catch (IOException e) {
            throw new RuntimeException("cannot read " + file, e);
        }
    }

    @Override
    public FilterResult apply(TestDescriptor descriptor) {
        return descriptor.getSource().map(source -> {
            String className = null;
            String method = null;
            if (source instanceof MethodSource) {
                className = ((MethodSource) source).getClassName();
                method = ((MethodSource) source).getMethodName();
            } else if (source instanceof ClassSource) {
                className = ((ClassSource) source).getClassName();
            }
            if (className != null) {
                for (String e : entries) {
                    if (e.equals(className) || (method != null && e.equals(className + "#" + method))) {
                        return FilterResult.excluded("listed in tests/upstream/exclusions.txt");
                    }
                }
                if (method != null && !only.isEmpty() && !only.contains(className + "#" + method)) {
                    return FilterResult.excluded("not retried");
                }
            }
            return FilterResult.included("not excluded");
        }).orElse(FilterResult.included("no source"));
    }
}
