/*
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in compliance
 * with the License. You may obtain a copy of the License at http://www.apache.org/licenses/LICENSE-2.0
 */

import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Writes docs/configuration.md: every setting the distribution's jars define that stock Apache Kafka's do not, read
 * from the ConfigDefs themselves, as Kafka generates its own configuration docs.
 *
 * <pre>java tools/config-docs/ConfigDocs.java OURS_LIBS STOCK_LIBS &gt; docs/configuration.md</pre>
 *
 * OURS_LIBS and STOCK_LIBS are folders of jars (the distribution's libs/ and the release's, build/upstream/libs);
 * each is loaded in a class loader of its own. ./build.sh docs runs it (and ./build.sh docs --check compares).
 */
public class ConfigDocs {

    /** A scope: where a setting is set, and the ConfigDef that defines it. */
    enum Scope {
        TOPIC("topic", "org.apache.kafka.storage.internals.log.LogConfig", "configDefCopy"),
        BROKER("broker", "org.apache.kafka.server.config.AbstractKafkaConfig", "CONFIG_DEF"),
        PRODUCER("producer", "org.apache.kafka.clients.producer.ProducerConfig", "configDef"),
        CONSUMER("consumer", "org.apache.kafka.clients.consumer.ConsumerConfig", "configDef");

        final String label;
        final String className;
        final String member;     // a static method or a static field that holds the ConfigDef

        Scope(String label, String className, String member) {
            this.label = label;
            this.className = className;
            this.member = member;
        }
    }

    /** One setting in one scope, as our jars define it. */
    record Entry(String name, Scope scope, String type, String defaultValue, String validValues, String dynamic,
                 String importance, boolean internal, String topicSynonym, String description) { }

    private final ClassLoader ours;
    private final ClassLoader stock;

    ConfigDocs(ClassLoader ours, ClassLoader stock) {
        this.ours = ours;
        this.stock = stock;
    }

    static ClassLoader loader(String libs) throws Exception {
        File[] jars = new File(libs).listFiles((d, n) -> n.endsWith(".jar"));
        if (jars == null || jars.length == 0) {
            throw new IllegalArgumentException("no jars in " + libs);
        }
        List<URL> urls = new ArrayList<>();
        for (File jar : jars) {
            urls.add(jar.toURI().toURL());
        }
        return new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
    }

    static Object staticMember(ClassLoader loader, String className, String member) throws Exception {
        // ConfigDef resolves the defaults of CLASS settings through the thread's context class loader
        Thread.currentThread().setContextClassLoader(loader);
        Class<?> c = Class.forName(className, true, loader);
        for (Method m : c.getMethods()) {
            if (m.getName().equals(member) && m.getParameterCount() == 0) {
                return m.invoke(null);
            }
        }
        return c.getField(member).get(null);
    }

    static Object field(Object o, String name) throws Exception {
        Field f = o.getClass().getField(name);
        return f.get(o);
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> configKeys(ClassLoader loader, Scope scope) throws Exception {
        Object def = staticMember(loader, scope.className, scope.member);
        return (Map<String, Object>) def.getClass().getMethod("configKeys").invoke(def);
    }

    /** The default as Kafka's own generated docs print it (ConfigDef's "Default" column). */
    String defaultOf(Object key) throws Exception {
        boolean hasDefault = (boolean) key.getClass().getMethod("hasDefault").invoke(key);
        if (!hasDefault) {
            return "none (required)";
        }
        Object value = field(key, "defaultValue");
        Object type = field(key, "type");
        if (value == null) {
            return "null";
        }
        Class<?> def = Class.forName("org.apache.kafka.common.config.ConfigDef", true, ours);
        Class<?> typeClass = Class.forName("org.apache.kafka.common.config.ConfigDef$Type", true, ours);
        String s = (String) def.getMethod("convertToString", Object.class, typeClass).invoke(null, value, type);
        return s.isEmpty() ? "\"\"" : s;
    }

    /** The broker's update mode, from DynamicBrokerConfig, as the "Update Mode" of Kafka's broker docs. */
    @SuppressWarnings("unchecked")
    String brokerDynamic(String name) throws Exception {
        Map<String, String> modes = (Map<String, String>) staticMember(ours,
            "org.apache.kafka.server.config.DynamicBrokerConfig", "dynamicConfigUpdateModes");
        String mode = modes.getOrDefault(name, "read-only");
        return switch (mode) {
            case "read-only" -> "no (read-only: server.properties, at start)";
            case "per-broker" -> "yes, per broker";
            case "cluster-wide" -> "yes, per broker or cluster-wide";
            default -> mode;
        };
    }

    @SuppressWarnings("unchecked")
    String topicSynonym(String name) throws Exception {
        Map<String, String> synonyms = (Map<String, String>) staticMember(ours,
            "org.apache.kafka.server.config.ServerTopicConfigSynonyms", "TOPIC_CONFIG_SYNONYMS");
        return synonyms.get(name);
    }

    List<Entry> added() throws Exception {
        List<Entry> entries = new ArrayList<>();
        for (Scope scope : Scope.values()) {
            Map<String, Object> mine = configKeys(ours, scope);
            Set<String> theirs = configKeys(stock, scope).keySet();
            for (String name : new TreeSet<>(mine.keySet())) {
                if (theirs.contains(name)) {
                    continue;
                }
                Object key = mine.get(name);
                Object validator = field(key, "validator");
                String dynamic = switch (scope) {
                    case TOPIC -> "yes, per topic";
                    case BROKER -> brokerDynamic(name);
                    default -> "no (read when the client starts)";
                };
                entries.add(new Entry(name, scope, field(key, "type").toString().toLowerCase(), defaultOf(key),
                    validator == null ? "" : validator.toString(), dynamic, field(key, "importance").toString()
                    .toLowerCase(), (boolean) field(key, "internalConfig"),
                    scope == Scope.TOPIC ? topicSynonym(name) : null,
                    String.valueOf(field(key, "documentation")).trim().replaceAll("\\s+", " ")));
            }
        }
        return entries;
    }

    static String cell(String s) {
        return s.isEmpty() ? "" : "`" + s.replace("|", "\\|") + "`";
    }

    static String render(List<Entry> entries) {
        Map<String, List<Entry>> byName = new TreeMap<>();
        for (Entry e : entries) {
            byName.computeIfAbsent(e.name(), n -> new ArrayList<>()).add(e);
        }
        StringBuilder out = new StringBuilder();
        out.append("# Settings this distribution adds\n\n")
            .append("For operators: every setting this distribution defines that Apache Kafka 4.3.1 does not, with its ")
            .append("scope, type,\ndefault, valid values, whether it can be changed at runtime, and its description. ")
            .append("Generated by `./build.sh docs`\nfrom the ConfigDefs in the distribution's jars and in the ")
            .append("release's (`build/upstream/libs`): do not edit it by hand;\n`./build.sh test` fails when it ")
            .append("differs from what the jars say. How each feature works: the pages the\n")
            .append("[README](../README.md#documentation) lists.\n\n")
            .append("The ConfigDefs read: topic `LogConfig.configDefCopy()`, broker `AbstractKafkaConfig.CONFIG_DEF` ")
            .append("(what\n`KafkaConfig` validates), producer `ProducerConfig.configDef()`, consumer ")
            .append("`ConsumerConfig.configDef()`. A setting\nis listed for each scope whose ConfigDef in the ")
            .append("release lacks its name. Dynamic: a topic setting is changed at\nruntime with ")
            .append("`kafka-configs.sh --entity-type topics`; a broker setting is dynamic when\n")
            .append("`DynamicBrokerConfig.dynamicConfigUpdateModes()` gives it an update mode other than read-only ")
            .append("(the \"Update\nMode\" of Kafka's own broker docs), and is then changed with ")
            .append("`kafka-configs.sh --entity-type brokers`; a client\nreads its settings when it starts. ")
            .append("A provider's own settings, which no ConfigDef defines (the QAT provider's\n")
            .append("`compression.gzip.qat.mode`), are in [providers.md](providers.md).\n\n")
            .append(byName.size()).append(" settings, in ").append(entries.size()).append(" pairs of setting and scope:\n\n")
            .append("| setting | scope | type | default | valid values | dynamic |\n")
            .append("|---|---|---|---|---|---|\n");
        for (Entry e : entries.stream().sorted((a, b) -> a.name().equals(b.name())
                ? a.scope().compareTo(b.scope()) : a.name().compareTo(b.name())).toList()) {
            out.append("| [`").append(e.name()).append("`](#").append(anchor(e.name())).append(") | ")
                .append(e.scope().label).append(e.internal() ? " (internal)" : "").append(" | ")
                .append(e.type()).append(" | ").append(cell(e.defaultValue())).append(" | ")
                .append(cell(e.validValues())).append(" | ").append(e.dynamic()).append(" |\n");
        }
        for (Map.Entry<String, List<Entry>> named : byName.entrySet()) {
            out.append("\n## `").append(named.getKey()).append("`\n");
            // the scopes that describe it alike, together
            Map<String, List<Entry>> byText = new LinkedHashMap<>();
            for (Entry e : named.getValue()) {
                String synonym = e.topicSynonym() == null ? "" : ", broker default `" + e.topicSynonym() + "`";
                byText.computeIfAbsent("importance " + e.importance() + synonym + "): " + e.description(),
                    t -> new ArrayList<>()).add(e);
            }
            for (Map.Entry<String, List<Entry>> text : byText.entrySet()) {
                out.append("\n**").append(text.getValue().stream().map(e -> e.scope().label)
                    .collect(Collectors.joining(", "))).append("** (").append(text.getKey()).append("\n");
            }
        }
        return out.toString();
    }

    /** GitHub's anchor of a "## `name`" heading. */
    static String anchor(String name) {
        return name.toLowerCase().replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: java tools/config-docs/ConfigDocs.java OURS_LIBS STOCK_LIBS");
            System.exit(2);
        }
        ConfigDocs docs = new ConfigDocs(loader(args[0]), loader(args[1]));
        System.out.print(render(docs.added()));
    }
}
