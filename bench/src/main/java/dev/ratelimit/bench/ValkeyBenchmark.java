package dev.ratelimit.bench;

import dev.ratelimit.Algorithm;
import dev.ratelimit.it.ValkeyServer;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.resps.LibraryInfo;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The server's own ceiling for our function: {@code valkey-benchmark} (C, no JVM) calling it on
 * 100,000 random keys at a given concurrency, with and without {@code -P 16}, next to our
 * limiter's decisions per second at the same number of threads.
 */
final class ValkeyBenchmark {

    private static final Pattern RATE = Pattern.compile("([0-9.]+) requests per second");

    /** One concurrency: ours and valkey-benchmark's rates. */
    record Row(int clients, double ours, double unpipelined, double pipelined) {
    }

    private ValkeyBenchmark() {
    }

    static List<Row> compare(ValkeyServer valkey, int ops, List<Integer> clientCounts, List<Bench.Result> ours)
            throws IOException, InterruptedException {
        String function;
        try (Contender loader = new OurLimiter(valkey.url(), Algorithm.TOKEN_BUCKET, Bench.UNREACHED, Bench.HOUR);
             Jedis admin = valkey.connect()) {
            loader.tryAcquire("load"); // loads the library
            function = admin.functionList().stream().map(LibraryInfo::getLibraryName)
                    .filter(name -> name.startsWith("ratelimit_")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("the limiter's library is not on the server"));
        }
        List<Row> rows = new ArrayList<>();
        for (int clients : clientCounts) {
            double rate = ours.stream().filter(r -> r.threads() == clients && r.scenario().startsWith("100k")
                            && r.contender().equals("ratelimit token-bucket"))
                    .mapToDouble(Bench.Result::opsPerSecond).findFirst().orElse(Double.NaN);
            rows.add(new Row(clients, rate, run(valkey, function, ops, clients, 1), run(valkey, function, ops, clients, 16)));
        }
        return rows;
    }

    private static double run(ValkeyServer valkey, String function, int ops, int clients, int pipeline)
            throws IOException, InterruptedException {
        URI uri = URI.create(valkey.url());
        List<String> command = List.of("valkey-benchmark", "-h", uri.getHost(), "-p", Integer.toString(uri.getPort()),
                "-c", Integer.toString(clients), "-n", Integer.toString(ops), "-r", Integer.toString(Bench.RANDOM_KEYS),
                "-P", Integer.toString(pipeline), "-q",
                "FCALL", function, "1", "bench:vb:{__rand_int__}", "-1", "1", "1", "token-bucket",
                Long.toString(Bench.UNREACHED), Long.toString(Bench.HOUR.toMillis()), Long.toString(Bench.UNREACHED),
                "1", "0", "0");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int exit = process.waitFor();
        Matcher rate = RATE.matcher(output);
        if (exit != 0 || !rate.find()) {
            throw new IllegalStateException("valkey-benchmark failed (exit " + exit + "): " + output);
        }
        return Double.parseDouble(rate.group(1));
    }

    static void print(List<Row> rows) {
        System.out.printf(Locale.ROOT, "%nvalkey-benchmark calling the same function, 100k random keys%n");
        System.out.printf(Locale.ROOT, "%7s %12s %14s %14s %10s %10s%n", "clients", "ours/s", "vb/s", "vb -P16/s",
                "ours:vb", "ours:-P16");
        for (Row row : rows) {
            System.out.printf(Locale.ROOT, "%7d %12.0f %14.0f %14.0f %9.2fx %9.2fx%n", row.clients(), row.ours(),
                    row.unpipelined(), row.pipelined(), row.ours() / row.unpipelined(), row.ours() / row.pipelined());
        }
    }
}
