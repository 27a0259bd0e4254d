package dev.ratelimit.bench;

import dev.ratelimit.it.ValkeyServer;
import redis.clients.jedis.Jedis;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How many calls one read of Valkey's carries: {@code total_reads_processed} of {@code INFO
 * stats} per decision, over a measurement. 1 when each call is sent on its own; a pipeline of n
 * calls written at once is read in one, so 1/n.
 */
final class ServerReads {

    private static final Pattern READS = Pattern.compile("total_reads_processed:(\\d+)");

    /** Per contender and thread count, in the order measured, the median reads per decision. */
    private final Map<String, List<Double>> perDecision = new LinkedHashMap<>();

    /** Valkey's reads so far. */
    static long now(ValkeyServer valkey) {
        try (Jedis jedis = valkey.connect()) {
            Matcher m = READS.matcher(jedis.info("stats"));
            return m.find() ? Long.parseLong(m.group(1)) : -1;
        }
    }

    void add(String contender, int threads, long reads, int decisions) {
        perDecision.computeIfAbsent(String.format(Locale.ROOT, "%3d %s", threads, contender), k -> new java.util.ArrayList<>())
                .add(reads / (double) decisions);
    }

    void print(String scenario) {
        System.out.printf(Locale.ROOT, "%nValkey reads per decision, %s (median over rounds; 1/n: n calls per read)%n",
                scenario);
        perDecision.forEach((key, values) -> {
            double median = values.stream().mapToDouble(Double::doubleValue).sorted().toArray()[values.size() / 2];
            System.out.printf(Locale.ROOT, "%s %8.3f%n", key, median);
        });
    }
}
