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

import io.kafkacompress.tools.advisor.Measurement.Result;

import org.apache.kafka.common.record.internal.CompressionType;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Ranks the measured settings for a goal. The size/speed Pareto front is over (size ratio, compression CPU per GB):
 * a setting is on it when no other setting is both at least as small and at least as cheap to compress.
 * <ul>
 *   <li>disk: the smallest size ratio (ties: the cheapest to compress);</li>
 *   <li>cpu: the least CPU to compress and decompress a GB, among settings that save at least 10% of the size;</li>
 *   <li>balanced: the point of the Pareto front nearest the ideal (smallest size at the cheapest compression), with
 *       both axes scaled to the range of the front's compressing settings (compression CPU on a log scale); none is
 *       left out of the scale and the choice, or its size ratio of 1 would make every codec look alike.</li>
 * </ul>
 * So the disk recommendation is the smallest end of the front, and the balanced one, also on the front, is never
 * slower to compress than it.
 */
final class Advice {
    static final double CPU_MIN_SAVING = 0.9;

    final String goal;
    final List<Result> ranked;
    final Map<String, Result> picks = new LinkedHashMap<>();
    final Map<Result, Double> balancedScore = new LinkedHashMap<>();

    Advice(List<Result> results, String goal) {
        this.goal = goal;
        markPareto(results);
        scoreBalanced(results);
        List<Result> byDisk = new ArrayList<>(results);
        byDisk.sort(Comparator.comparingDouble(Result::ratio).thenComparingDouble(Result::compressCpuSecondsPerGB));
        List<Result> byCpu = new ArrayList<>(results);
        byCpu.sort(Comparator.comparingDouble((Result r) -> r.compressCpuSecondsPerGB() + r.decompressCpuSecondsPerGB())
            .thenComparingDouble(Result::ratio));
        List<Result> byBalanced = new ArrayList<>(results);
        byBalanced.sort(Comparator.comparingDouble((Result r) -> balancedScore.get(r)).thenComparingDouble(Result::ratio));
        picks.put("disk", byDisk.get(0));
        picks.put("cpu", byCpu.stream().filter(r -> r.ratio() <= CPU_MIN_SAVING).findFirst().orElse(byCpu.get(0)));
        picks.put("balanced", byBalanced.stream().filter(r -> r.pareto && r.setting.type != CompressionType.NONE).findFirst()
            .orElse(byBalanced.get(0)));
        switch (goal) {
            case "disk": ranked = byDisk; break;
            case "cpu": ranked = byCpu; break;
            default: ranked = byBalanced; break;
        }
    }

    Result recommendation() {
        return picks.get(goal);
    }

    static void markPareto(List<Result> results) {
        for (Result p : results) {
            p.pareto = true;
            for (Result q : results) {
                if (q == p)
                    continue;
                boolean noWorse = q.ratio() <= p.ratio() && q.compressCpuSecondsPerGB() <= p.compressCpuSecondsPerGB();
                boolean better = q.ratio() < p.ratio() || q.compressCpuSecondsPerGB() < p.compressCpuSecondsPerGB();
                if (noWorse && better) {
                    p.pareto = false;
                    break;
                }
            }
        }
    }

    private void scoreBalanced(List<Result> results) {
        double xMin = Double.MAX_VALUE, xMax = -Double.MAX_VALUE, yMin = Double.MAX_VALUE, yMax = -Double.MAX_VALUE;
        for (Result r : results) {
            if (!r.pareto || r.setting.type == CompressionType.NONE)
                continue;
            double x = Math.log(r.compressCpuSecondsPerGB());
            xMin = Math.min(xMin, x);
            xMax = Math.max(xMax, x);
            yMin = Math.min(yMin, r.ratio());
            yMax = Math.max(yMax, r.ratio());
        }
        double dx = xMax - xMin > 0 ? xMax - xMin : 1;
        double dy = yMax - yMin > 0 ? yMax - yMin : 1;
        for (Result r : results) {
            double x = (Math.log(r.compressCpuSecondsPerGB()) - xMin) / dx;
            double y = (r.ratio() - yMin) / dy;
            balancedScore.put(r, Math.hypot(x, y));
        }
    }

    /** The topic configs that select {@code r} (kafka-configs.sh --add-config value). */
    static String topicConfigs(Result r) {
        CompressionType type = r.setting.type;
        if (type == CompressionType.NONE)
            return "compression.type=uncompressed";
        String s = "compression.type=" + type.name;
        if (r.setting.level != null)
            s += ",compression." + type.name + ".level=" + r.setting.level;
        return s;
    }

    /** The producer properties that select {@code r}. */
    static Map<String, String> producerProperties(Result r) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("compression.type", r.setting.type.name);
        if (r.setting.level != null)
            p.put("compression." + r.setting.type.name + ".level", String.valueOf(r.setting.level));
        if (r.setting.providerClass != null)
            p.put("compression." + r.setting.type.name + ".provider", r.setting.providerClass);
        if (!r.real)
            p.put("batch.size", String.valueOf(r.batchSize));   // at the topic's own batch size: batch.size as it is
        return p;
    }

    static String kafkaConfigsCommand(String bootstrap, String topic, Result r) {
        return String.format(Locale.ROOT, "bin/kafka-configs.sh --bootstrap-server %s --entity-type topics --entity-name %s --alter --add-config %s",
            bootstrap == null ? "localhost:9092" : bootstrap, topic == null ? "<topic>" : topic, topicConfigs(r));
    }
}
