/*
 * Licensed to the Apache Software Foundation (ASF) under one or more
 * contributor license agreements. See the NOTICE file distributed with
 * this work for additional information regarding copyright ownership.
 * The ASF licenses this file to You under the Apache License, Version 2.0
 * (the "License"); you may not use this file except in compliance with
 * the License. You may obtain a copy of the License at
 *
 *    http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */
package io.kafkacompress.tools.advisor;


import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.management.InstanceNotFoundException;
import javax.management.JMException;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

/**
 * The topic's compression as its brokers count it (docs/metrics.md): the Count of the topic's BrokerTopicMetrics
 * meters over JMX, summed over the brokers given. Each broker counts the appends it led, since it started; the
 * CleanerRecompression* meters count the log cleaner's rewrites on every replica (docs/cold-segments.md), so over
 * several brokers they add up the replicas' rewrites.
 */
final class BrokerMetrics {
    static final List<String> NAMES = List.of("BytesInPerSec", "UncompressedBytesInPerSec", "RecompressionBytesInPerSec",
        "RecompressionBytesOutPerSec", "RecompressionTimeNsPerSec", "CleanerRecompressionBytesInPerSec",
        "CleanerRecompressionBytesOutPerSec", "CleanerRecompressionTimeNsPerSec");

    final Map<String, Long> counts = new LinkedHashMap<>();
    final List<String> urls;

    private BrokerMetrics(List<String> urls) {
        this.urls = urls;
        for (String name : NAMES)
            counts.put(name, 0L);
    }

    static BrokerMetrics read(List<String> urls, String topic) throws IOException, JMException {
        BrokerMetrics metrics = new BrokerMetrics(urls);
        boolean counted = false;
        for (String url : urls) {
            try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(url))) {
                MBeanServerConnection server = connector.getMBeanServerConnection();
                for (String name : NAMES) {
                    try {
                        Object count = server.getAttribute(
                            new ObjectName("kafka.server:type=BrokerTopicMetrics,name=" + name + ",topic=" + topic), "Count");
                        metrics.counts.merge(name, ((Number) count).longValue(), Long::sum);
                        counted |= name.equals("UncompressedBytesInPerSec");
                    } catch (InstanceNotFoundException e) {
                        // a meter appears with its first count: none yet on this broker
                    }
                }
            }
        }
        if (!counted)
            throw new IllegalStateException("no UncompressedBytesInPerSec for topic " + topic + " on " + urls
                + " (no append since the broker started, or a broker without the per-topic compression metrics)");
        return metrics;
    }

    /** BytesInPerSec over UncompressedBytesInPerSec: the topic's compressed-to-uncompressed ratio. */
    double ratio() {
        return counts.get("BytesInPerSec") / (double) counts.get("UncompressedBytesInPerSec");
    }

    /** The live-ratio line, and the log cleaner's rewrites when it rewrote any of the topic's batches. */
    List<String> lines() {
        String text = String.format(java.util.Locale.ROOT, "Live on the broker%s (BrokerTopicMetrics over JMX, since start): "
                + "%,d bytes in for %,d uncompressed: size ratio %.4f", urls.size() > 1 ? "s" : "",
            counts.get("BytesInPerSec"), counts.get("UncompressedBytesInPerSec"), ratio());
        if (counts.get("RecompressionBytesInPerSec") > 0)
            text += String.format(java.util.Locale.ROOT, "; the broker recompressed %,d bytes into %,d in %,.0f ms",
                counts.get("RecompressionBytesInPerSec"), counts.get("RecompressionBytesOutPerSec"),
                counts.get("RecompressionTimeNsPerSec") / 1e6);
        List<String> lines = new ArrayList<>(List.of(text + "."));
        long cleanerIn = counts.get("CleanerRecompressionBytesInPerSec");
        if (cleanerIn > 0)
            lines.add(String.format(java.util.Locale.ROOT, "The log cleaner rewrote %,d bytes of the topic's batches into %,d "
                    + "(ratio %.4f) in %,.0f ms (compaction recompression and recompression.lag.ms, all replicas on the given "
                    + "broker%s, since start).", cleanerIn, counts.get("CleanerRecompressionBytesOutPerSec"),
                counts.get("CleanerRecompressionBytesOutPerSec") / (double) cleanerIn,
                counts.get("CleanerRecompressionTimeNsPerSec") / 1e6, urls.size() > 1 ? "s" : ""));
        return lines;
    }

    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>(counts);
        m.put("size_ratio", ratio());
        m.put("jmx_urls", urls);
        return m;
    }
}
