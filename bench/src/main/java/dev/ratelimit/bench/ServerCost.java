package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Claim;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import redis.clients.jedis.Jedis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What one decision costs the Valkey server, the one part every app instance shares: the
 * {@code usec_per_call} that {@code INFO commandstats} reports for the limiter's call, next to
 * the source article's minimal token-bucket script run the same way, on fresh keys.
 */
final class ServerCost {

    private static final Pattern USEC_PER_CALL = Pattern.compile("usec_per_call=([0-9.]+)");

    /** One algorithm's cost. */
    record Cost(String what, double microsPerCall) {
    }

    private ServerCost() {
    }

    /**
     * Measures every algorithm and the minimal script.
     *
     * @param url       the Valkey
     * @param decisions calls per measurement, each on a new key
     * @return the costs, the minimal script's last
     */
    static List<Cost> measure(String url, int decisions) throws IOException {
        int rounds = Integer.parseInt(System.getenv().getOrDefault("BENCH_ROUNDS", "3"));
        Map<String, List<Double>> samples = new LinkedHashMap<>();
        try (Jedis admin = new Jedis(java.net.URI.create(url));
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(url)).build();
             ValkeyRateLimiter clientClock = ValkeyRateLimiter.builder().settings(ValkeySettings.of(url))
                     .clientClock(System::currentTimeMillis).build()) {
            String sha = admin.scriptLoad(resource("minimal-token-bucket.lua"));
            List<Rule> three = List.of(Rule.of("cost3-tb", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1)),
                    Rule.of("cost3-gcra", Algorithm.GCRA, 100, Duration.ofMinutes(1)),
                    Rule.of("cost3-fw", Algorithm.FIXED_WINDOW, 100, Duration.ofMinutes(1)));
            // Rounds interleave every measurement, so that a slow moment of the machine spreads
            // over all of them; the median of each is reported.
            for (int round = 0; round < rounds; round++) {
                String fresh = "r" + round + ":k";
                for (Algorithm algorithm : Algorithm.values()) {
                    Rule rule = Rule.of("cost-" + algorithm.id(), algorithm, 100, Duration.ofMinutes(1));
                    limiter.acquire(rule, "warm"); // loads the library
                    sample(samples, algorithm.id(), admin, "fcall", decisions, i -> limiter.acquire(rule, fresh + i));
                }
                // Three rules on one identity, decided in one call.
                sample(samples, "3 rules in one call", admin, "fcall", decisions,
                        i -> limiter.acquireAll(three.stream().map(r -> Claim.of(r, fresh + i)).toList()));
                // The minimal script takes the time as an argument; ours reads the server's TIME.
                Rule rule = Rule.of("cost-client-clock", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
                sample(samples, "token-bucket, client clock", admin, "fcall", decisions,
                        i -> clientClock.acquire(rule, fresh + i));
                long now = System.currentTimeMillis();
                sample(samples, "minimal token-bucket", admin, "evalsha", decisions,
                        i -> admin.evalsha(sha, List.of("minimal:" + fresh + i), List.of("100", "1.6667", Long.toString(now), "1")));
            }
        }
        List<Cost> costs = new ArrayList<>();
        samples.forEach((what, values) -> {
            List<Double> sorted = values.stream().sorted().toList();
            costs.add(new Cost(what, sorted.get(sorted.size() / 2)));
        });
        return costs;
    }

    private static void sample(Map<String, List<Double>> samples, String what, Jedis admin, String command,
                               int decisions, IntConsumer call) {
        admin.configResetStat();
        for (int i = 0; i < decisions; i++) {
            call.accept(i);
        }
        samples.computeIfAbsent(what, k -> new ArrayList<>()).add(micros(admin, command));
    }

    static void print(List<Cost> costs, int decisions) {
        double anchor = costs.get(costs.size() - 1).microsPerCall();
        System.out.printf(Locale.ROOT, "%nValkey CPU per decision (INFO commandstats usec_per_call, median of rounds of %d calls on new keys)%n",
                decisions);
        for (Cost cost : costs) {
            System.out.printf(Locale.ROOT, "%-28s %8.2f us %7.2fx the minimal script%n", cost.what(),
                    cost.microsPerCall(), cost.microsPerCall() / anchor);
        }
    }

    private static double micros(Jedis admin, String command) {
        for (String line : admin.info("commandstats").split("\\r?\\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                Matcher m = USEC_PER_CALL.matcher(line);
                if (m.find()) {
                    return Double.parseDouble(m.group(1));
                }
            }
        }
        throw new IllegalStateException("no " + command + " in INFO commandstats");
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = ServerCost.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
