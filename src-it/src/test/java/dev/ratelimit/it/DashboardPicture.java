package dev.ratelimit.it;

import javax.imageio.ImageIO;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.geom.Path2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Draws the dashboard's panels from what Prometheus answered to their queries, in Grafana's
 * layout ({@code gridPos}) and dark colours, with plain Java2D: the README's picture is made
 * from a real run, not drawn by hand. Time series as lines, stat panels as numbers.
 */
final class DashboardPicture {

    private static final int WIDTH = 1600;
    private static final int HEADER = 56;
    private static final int ROW = 34;
    private static final int GAP = 8;
    private static final Color BACKGROUND = new Color(0x111217);
    private static final Color PANEL = new Color(0x181b1f);
    private static final Color BORDER = new Color(0x2c3235);
    private static final Color TEXT = new Color(0xccccdc);
    private static final Color FAINT = new Color(0x8e8e9e);
    private static final Color GRID = new Color(0x24272c);
    private static final Color SHADE = new Color(242, 73, 92, 40);
    private static final Color[] PALETTE = {
        new Color(0x73bf69), new Color(0xf2cc0c), new Color(0x8ab8ff), new Color(0xff780a), new Color(0xf2495c),
        new Color(0x5794f2), new Color(0xb877d9), new Color(0x96d98d), new Color(0xfade2a), new Color(0xc0d8ff),
        new Color(0xffb357), new Color(0xff7383), new Color(0x3274d9), new Color(0xca95e5), new Color(0x56a64b),
        new Color(0xe0b400), new Color(0x1f60c4), new Color(0xfa6400), new Color(0xc4162a), new Color(0x8f3bb8),
    };
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);

    /** One point of a series. */
    record Point(double time, double value) {
    }

    /** A series as a panel shows it: its legend and its points. */
    record Series(String name, List<Point> points) {
    }

    /**
     * A panel and its data.
     *
     * @param grid x, y, width and height in Grafana's grid units (24 columns)
     */
    record Panel(String title, String type, String unit, int[] grid, List<Series> series) {
    }

    private DashboardPicture() {
    }

    /**
     * The series of a query's answer, named by the panel's legend format ({@code {{rule}}}).
     *
     * @param result the {@code result} of a range or instant query
     * @param legend the target's {@code legendFormat}
     */
    @SuppressWarnings("unchecked")
    static List<Series> series(List<Map<String, Object>> result, String legend) {
        List<Series> series = new ArrayList<>();
        for (Map<String, Object> one : result) {
            Map<String, Object> labels = (Map<String, Object>) one.get("metric");
            Matcher field = Pattern.compile("\\{\\{\\s*(\\w+)\\s*}}").matcher(legend);
            StringBuilder name = new StringBuilder();
            while (field.find()) {
                field.appendReplacement(name, Matcher.quoteReplacement(String.valueOf(labels.getOrDefault(field.group(1), ""))));
            }
            field.appendTail(name);
            List<Point> points = new ArrayList<>();
            List<List<Object>> values = one.containsKey("values") ? (List<List<Object>>) one.get("values")
                    : List.of((List<Object>) one.get("value"));
            for (List<Object> value : values) {
                points.add(new Point(((Number) value.get(0)).doubleValue(), parse((String) value.get(1))));
            }
            series.add(new Series(name.toString(), points));
        }
        return series;
    }

    private static double parse(String value) {
        return switch (value) {
            case "NaN" -> Double.NaN;
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            default -> Double.parseDouble(value);
        };
    }

    /**
     * Draws the panels to a PNG.
     *
     * @param panels the panels by title, in the dashboard's order
     * @param start  the start of the time range shown
     * @param end    its end
     * @param down   when Valkey was down, from and to: shaded on every time series, as a
     *               Grafana annotation would be
     * @param file   where the PNG goes
     */
    static void write(Map<String, Panel> panels, Instant start, Instant end, Instant[] down, Path file)
            throws IOException {
        int rows = panels.values().stream().mapToInt(panel -> panel.grid()[1] + panel.grid()[3]).max().orElse(0);
        BufferedImage image = new BufferedImage(WIDTH, HEADER + rows * ROW + GAP, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(BACKGROUND);
        g.fillRect(0, 0, image.getWidth(), image.getHeight());
        g.setColor(TEXT);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 20));
        g.drawString("Rate limiting (ratelimit)", GAP + 4, 30);
        g.setColor(FAINT);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        g.drawString("application: ratelimit-example    instance: All    rule: All    " + CLOCK.format(start) + " to "
                + CLOCK.format(end) + " UTC    shaded: Valkey down (killed, then started again empty)", GAP + 4, 48);
        double column = (WIDTH - GAP) / 24.0;
        for (Panel panel : panels.values()) {
            int x = (int) Math.round(GAP + panel.grid()[0] * column);
            int y = HEADER + panel.grid()[1] * ROW;
            int w = (int) Math.round(panel.grid()[2] * column) - GAP;
            int h = panel.grid()[3] * ROW - GAP;
            g.setColor(PANEL);
            g.fillRoundRect(x, y, w, h, 6, 6);
            g.setColor(BORDER);
            g.drawRoundRect(x, y, w, h, 6, 6);
            g.setColor(TEXT);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
            g.drawString(panel.title(), x + 10, y + 20);
            if (panel.type().equals("stat")) {
                stat(g, panel, x, y + 28, w, h - 28);
            } else {
                timeseries(g, panel, start.getEpochSecond(), end.getEpochSecond(), down, x, y + 28, w, h - 28);
            }
        }
        g.dispose();
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        ImageIO.write(image, "png", file.toFile());
    }

    private static void stat(Graphics2D g, Panel panel, int x, int y, int w, int h) {
        List<Series> series = panel.series();
        int each = w / Math.max(1, series.size());
        for (int i = 0; i < series.size(); i++) {
            Series one = series.get(i);
            double value = one.points().get(one.points().size() - 1).value();
            g.setColor(value >= 1 ? PALETTE[4] : PALETTE[0]);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 44));
            String text = format(value, panel.unit(), true);
            FontMetrics metrics = g.getFontMetrics();
            int cx = x + i * each + each / 2;
            g.drawString(text, cx - metrics.stringWidth(text) / 2, y + h / 2 + 10);
            g.setColor(FAINT);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            metrics = g.getFontMetrics();
            g.drawString(one.name(), cx - metrics.stringWidth(one.name()) / 2, y + h / 2 + 34);
        }
    }

    private static void timeseries(Graphics2D g, Panel panel, long start, long end, Instant[] down, int x, int y,
            int w, int h) {
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        FontMetrics metrics = g.getFontMetrics();
        List<String> legend = new ArrayList<>();
        panel.series().forEach(one -> legend.add(one.name()));
        int legendLines = legendLines(metrics, legend, w - 20);
        int left = x + 58;
        int right = x + w - 12;
        int bottom = y + h - 22 - legendLines * 15;
        double max = 0;
        for (Series one : panel.series()) {
            for (Point point : one.points()) {
                if (Double.isFinite(point.value())) {
                    max = Math.max(max, point.value());
                }
            }
        }
        if (panel.unit().equals("percentunit")) {
            max = Math.min(Math.max(max, 0.01), 1);
        }
        double step = niceStep(max > 0 ? max : 1);
        double ceiling = Math.max(step, Math.ceil(max / step) * step);
        for (double tick = 0; tick <= ceiling + step / 2; tick += step) {
            int ty = bottom - (int) Math.round(tick / ceiling * (bottom - y - 4));
            g.setColor(GRID);
            g.drawLine(left, ty, right, ty);
            g.setColor(FAINT);
            String label = format(tick, panel.unit(), false);
            g.drawString(label, left - 6 - metrics.stringWidth(label), ty + 4);
        }
        double from = left + (right - left) * (down[0].toEpochMilli() / 1000.0 - start) / Math.max(1, end - start);
        double to = left + (right - left) * (down[1].toEpochMilli() / 1000.0 - start) / Math.max(1, end - start);
        g.setColor(SHADE);
        g.fillRect((int) from, y + 4, (int) Math.max(1, to - from), bottom - y - 4);
        for (int i = 0; i <= 4; i++) {
            long t = start + (end - start) * i / 4;
            int tx = left + (int) Math.round((right - left) * (double) i / 4);
            String label = CLOCK.format(Instant.ofEpochSecond(t));
            g.setColor(GRID);
            g.drawLine(tx, y + 4, tx, bottom);
            g.setColor(FAINT);
            g.drawString(label, Math.min(tx - metrics.stringWidth(label) / 2, right - metrics.stringWidth(label)), bottom + 15);
        }
        g.setStroke(new BasicStroke(1.6f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
        for (int s = 0; s < panel.series().size(); s++) {
            Series one = panel.series().get(s);
            g.setColor(PALETTE[s % PALETTE.length]);
            Path2D.Double line = new Path2D.Double();
            boolean drawing = false;
            for (Point point : one.points()) {
                if (!Double.isFinite(point.value())) {
                    drawing = false;
                    continue;
                }
                double px = left + (right - left) * (point.time() - start) / Math.max(1, end - start);
                double py = bottom - Math.min(point.value(), ceiling) / ceiling * (bottom - y - 4);
                if (drawing) {
                    line.lineTo(px, py);
                } else {
                    line.moveTo(px, py);
                    drawing = true;
                }
            }
            g.draw(line);
        }
        g.setStroke(new BasicStroke(1f));
        int lx = x + 10;
        int ly = bottom + 32;
        for (int s = 0; s < legend.size(); s++) {
            int width = 16 + metrics.stringWidth(legend.get(s)) + 14;
            if (lx + width > x + w - 10) {
                lx = x + 10;
                ly += 15;
            }
            g.setColor(PALETTE[s % PALETTE.length]);
            g.fillRect(lx, ly - 8, 10, 4);
            g.setColor(TEXT);
            g.drawString(legend.get(s), lx + 14, ly);
            lx += width;
        }
    }

    private static int legendLines(FontMetrics metrics, List<String> legend, int width) {
        int lines = 1;
        int used = 0;
        for (String name : legend) {
            int item = 16 + metrics.stringWidth(name) + 14;
            if (used + item > width) {
                lines++;
                used = 0;
            }
            used += item;
        }
        return lines;
    }

    /** A step of 1, 2 or 5 times a power of ten giving three to six ticks up to {@code max}. */
    private static double niceStep(double max) {
        double raw = max / 4;
        double power = Math.pow(10, Math.floor(Math.log10(raw)));
        for (double factor : new double[] {1, 2, 5, 10}) {
            if (raw <= factor * power) {
                return factor * power;
            }
        }
        return 10 * power;
    }

    /** A value in the panel's unit, as Grafana writes it. */
    static String format(double value, String unit, boolean withUnit) {
        return switch (unit) {
            case "percentunit" -> number(value * 100) + "%";
            case "s" -> value == 0 ? "0" : value < 1e-3 ? number(value * 1e6) + " µs"
                    : value < 1 ? number(value * 1e3) + " ms" : number(value) + " s";
            case "reqps" -> number(value) + (withUnit ? " req/s" : "");
            default -> number(value);
        };
    }

    private static String number(double value) {
        if (value == Math.rint(value) && Math.abs(value) < 1e6) {
            return Long.toString((long) value);
        }
        return String.format(Locale.ROOT, Math.abs(value) >= 10 ? "%.0f" : Math.abs(value) >= 1 ? "%.1f" : "%.2f", value);
    }
}
