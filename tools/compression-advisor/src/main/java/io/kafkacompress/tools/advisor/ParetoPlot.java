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

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.imageio.ImageIO;

/** Size ratio against compression speed (log scale), the Pareto front joined, drawn with headless java.awt. */
final class ParetoPlot {
    private static final Map<String, Color> COLORS = Map.of(
        "none", new Color(120, 120, 120), "gzip", new Color(31, 119, 180), "lz4", new Color(44, 160, 44),
        "zstd", new Color(214, 39, 40), "snappy", new Color(148, 103, 189));
    private static final Color PROVIDER = new Color(255, 127, 14);

    private ParetoPlot() {
    }

    /**
     * Null when headless java.awt can draw text on this host, else why not, in one line. A JDK without its font
     * libraries (libharfbuzz), or a host without fontconfig and any font (a minimal container), fails on the first
     * string drawn, with an UnsatisfiedLinkError, an InternalError, an Error "No physical fonts found" or "Fontconfig head is null".
     */
    static String unavailable() {
        System.setProperty("java.awt.headless", "true");
        try {
            Graphics2D g = new BufferedImage(8, 8, BufferedImage.TYPE_INT_RGB).createGraphics();
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawString("0", 0, 8);
            g.getFontMetrics().stringWidth("0");
            g.dispose();
            return null;
        } catch (OutOfMemoryError | StackOverflowError e) {
            throw e;
        } catch (Throwable e) {    // InternalError too: the font manager's initialisation wraps its failure in one
            Throwable cause = e;
            while (cause.getCause() != null && cause.getCause() != cause)
                cause = cause.getCause();
            return "java.awt cannot draw text on this host (" + cause + "); it needs fontconfig and at least one font "
                + "(on Debian: apt-get install fontconfig fonts-dejavu-core libharfbuzz0b)";
        }
    }

    static void write(Path file, List<Result> results, Result recommended, String title) throws IOException {
        System.setProperty("java.awt.headless", "true");
        int w = 1000, h = 650, left = 80, right = 30, top = 50, bottom = 60;
        BufferedImage img = new BufferedImage(w, h, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, w, h);

        // the y axis spans the compressing settings; none (ratio 1) is drawn on the top edge
        double xMin = Double.MAX_VALUE, xMax = -Double.MAX_VALUE, yMin = 1, yMax = 0;
        for (Result r : results) {
            xMin = Math.min(xMin, Math.log10(r.compressMBps()));
            xMax = Math.max(xMax, Math.log10(r.compressMBps()));
            if (r.ratio() < 0.999) {
                yMin = Math.min(yMin, r.ratio());
                yMax = Math.max(yMax, r.ratio());
            }
        }
        xMin = Math.floor(xMin);
        xMax = Math.ceil(xMax);
        if (xMax <= xMin)
            xMax = xMin + 1;
        if (yMax < yMin) {
            yMin = 0.9;
            yMax = 1;
        }
        double step = yMax - yMin > 0.3 ? 0.1 : yMax - yMin > 0.12 ? 0.05 : 0.02;
        final double x0 = xMin, x1 = xMax, yLo = Math.max(0, Math.floor(yMin / step) * step - step),
            yHi = Math.min(1.0, Math.ceil(yMax / step) * step + step), yStep = step;
        int pw = w - left - right, ph = h - top - bottom;
        java.util.function.DoubleUnaryOperator px = v -> left + (Math.log10(v) - x0) / (x1 - x0) * pw;
        java.util.function.DoubleUnaryOperator py = v -> top + ph - (Math.min(v, yHi) - yLo) / (yHi - yLo) * ph;

        // axes and grid
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        for (double d = x0; d <= x1 + 1e-9; d += 1) {
            for (int m = 1; m < 10 && d + Math.log10(m) <= x1 + 1e-9; m++) {
                int x = (int) Math.round(left + (d + Math.log10(m) - x0) / (x1 - x0) * pw);
                g.setColor(m == 1 ? new Color(200, 200, 200) : new Color(235, 235, 235));
                g.drawLine(x, top, x, top + ph);
                if (m == 1 || m == 2 || m == 5) {
                    g.setColor(Color.DARK_GRAY);
                    double tick = Math.pow(10, d) * m;
                    String label = tick < 1 ? f("%.1f", tick) : f("%.0f", tick);
                    g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, top + ph + 18);
                }
            }
        }
        for (double v = yLo; v <= yHi + 1e-9; v += yStep) {
            int y = (int) Math.round(py.applyAsDouble(v));
            g.setColor(new Color(220, 220, 220));
            g.drawLine(left, y, left + pw, y);
            g.setColor(Color.DARK_GRAY);
            String label = f("%.2f", v);
            g.drawString(label, left - 8 - g.getFontMetrics().stringWidth(label), y + 4);
        }
        g.setColor(Color.BLACK);
        g.drawRect(left, top, pw, ph);
        g.drawString("compression MB/s per core (log scale)", left + pw / 2 - 110, h - 18);
        Graphics2D gr = (Graphics2D) g.create();
        gr.rotate(-Math.PI / 2);
        gr.drawString("size ratio (compressed / uncompressed batches)", -(top + ph / 2 + 140), 22);
        gr.dispose();
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.drawString("Kafka compression advisor: " + title, left, 30);

        // Pareto front
        List<Result> front = new ArrayList<>();
        for (Result r : results)
            if (r.pareto) front.add(r);
        front.sort(Comparator.comparingDouble(Result::compressMBps));
        g.setStroke(new BasicStroke(2f));
        g.setColor(new Color(0, 0, 0, 120));
        for (int i = 1; i < front.size(); i++) {
            Result a = front.get(i - 1), b = front.get(i);
            g.drawLine((int) px.applyAsDouble(a.compressMBps()), (int) py.applyAsDouble(a.ratio()),
                (int) px.applyAsDouble(b.compressMBps()), (int) py.applyAsDouble(b.ratio()));
        }
        // points
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        int labelled = 0;
        for (Result r : results) {
            int x = (int) px.applyAsDouble(r.compressMBps());
            int y = (int) py.applyAsDouble(r.ratio());
            Color c = r.setting.provider != null ? PROVIDER : COLORS.getOrDefault(r.setting.codec(), Color.BLACK);
            g.setColor(c);
            int rad = r.pareto ? 6 : 4;
            if (r.pareto)
                g.fillOval(x - rad, y - rad, 2 * rad, 2 * rad);
            else
                g.drawOval(x - rad, y - rad, 2 * rad, 2 * rad);
            if (r == recommended) {
                g.setColor(Color.BLACK);
                g.drawOval(x - 10, y - 10, 20, 20);
            }
        }
        // labels of the front (and the recommendation), by speed, alternately above and below the points
        List<Result> labelledResults = new ArrayList<>(front);
        if (!labelledResults.contains(recommended))
            labelledResults.add(recommended);
        labelledResults.sort(Comparator.comparingDouble(Result::compressMBps));
        for (Result r : labelledResults) {
            int x = (int) px.applyAsDouble(r.compressMBps());
            int y = (int) py.applyAsDouble(r.ratio());
            Color c = r.setting.provider != null ? PROVIDER : COLORS.getOrDefault(r.setting.codec(), Color.BLACK);
            g.setColor(c.darker());
            String label = r.setting.label() + (r.ratio() > yHi ? f(" (size ratio %.2f)", r.ratio()) : "");
            g.drawString(label, x + 8, labelled++ % 2 == 0 ? y - 6 : y + 16);
        }
        // legend
        int ly = top + 10;
        for (String codec : new String[] {"none", "gzip", "lz4", "zstd", "snappy", "provider"}) {
            Color c = codec.equals("provider") ? PROVIDER : COLORS.get(codec);
            g.setColor(c);
            g.fillOval(left + pw - 110, ly, 10, 10);
            g.setColor(Color.BLACK);
            g.drawString(codec, left + pw - 94, ly + 10);
            ly += 16;
        }
        g.drawString("filled: Pareto front; ring: recommendation", left + pw - 260, ly + 12);
        g.dispose();
        if (file.getParent() != null)
            java.nio.file.Files.createDirectories(file.getParent());
        ImageIO.write(img, "png", file.toFile());
    }

    private static String f(String fmt, Object... args) {
        return String.format(Locale.ROOT, fmt, args);
    }
}
