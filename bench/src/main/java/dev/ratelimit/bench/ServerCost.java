package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.Rule;
import dev.ratelimit.valkey.ValkeyRateLimiter;
import dev.ratelimit.valkey.ValkeySettings;
import redis.clients.jedis.Jedis;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
        List<Cost> costs = new ArrayList<>();
        try (Jedis admin = new Jedis(java.net.URI.create(url));
             ValkeyRateLimiter limiter = ValkeyRateLimiter.builder().settings(ValkeySettings.of(url)).build()) {
            for (Algorithm algorithm : Algorithm.values()) {
                Rule rule = Rule.of("cost-" + algorithm.id(), algorithm, 100, Duration.ofMinutes(1));
                limiter.acquire(rule, "warm"); // loads the library
                admin.configResetStat();
                for (int i = 0; i < decisions; i++) {
                    limiter.acquire(rule, "k" + i);
                }
                costs.add(new Cost(algorithm.id(), micros(admin, "fcall")));
            }
            // The minimal script takes the time as an argument; ours reads the server's TIME.
            try (ValkeyRateLimiter clientClock = ValkeyRateLimiter.builder().settings(ValkeySettings.of(url))
                    .clientClock(System::currentTimeMillis).build()) {
                Rule rule = Rule.of("cost-client-clock", Algorithm.TOKEN_BUCKET, 100, Duration.ofMinutes(1));
                clientClock.acquire(rule, "warm");
                admin.configResetStat();
                for (int i = 0; i < decisions; i++) {
                    clientClock.acquire(rule, "k" + i);
                }
                costs.add(new Cost("token-bucket, client clock", micros(admin, "fcall")));
            }
            String minimal = resource("minimal-token-bucket.lua");
            String sha = admin.scriptLoad(minimal);
            admin.configResetStat();
            long now = System.currentTimeMillis();
            for (int i = 0; i < decisions; i++) {
                admin.evalsha(sha, List.of("minimal:k" + i), List.of("100", "1.6667", Long.toString(now), "1"));
            }
            costs.add(new Cost("minimal token-bucket", micros(admin, "evalsha")));
        }
        return costs;
    }

    static void print(List<Cost> costs, int decisions) {
        double anchor = costs.get(costs.size() - 1).microsPerCall();
        System.out.printf(Locale.ROOT, "%nValkey CPU per decision (INFO commandstats usec_per_call, %d calls on new keys)%n",
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
