package dev.ratelimit.cli;

import dev.ratelimit.Decision;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.valkey.KeyScan;
import dev.ratelimit.valkey.KeyState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ratelimit top RULE}: the rule's keys nearest their limit, found with {@code SCAN}
 * (never {@code KEYS}), bounded in keys and time, with a progress line on standard error.
 */
@Command(name = "top", mixinStandardHelpOptions = true,
        description = "Lists a rule's keys nearest their limit (SCAN, bounded in keys and time).")
final class TopCommand extends StoreCommand {

    @Parameters(index = "0", paramLabel = "RULE", description = "the rule's name")
    private String rule;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "10", description = "keys to list (default ${DEFAULT-VALUE})")
    private int limit;

    @Option(names = "--max-keys", paramLabel = "N", defaultValue = "100000",
            description = "the most keys to look at (default ${DEFAULT-VALUE})")
    private int maxKeys;

    @Option(names = "--max-seconds", paramLabel = "S", defaultValue = "30",
            description = "the most seconds to scan (default ${DEFAULT-VALUE})")
    private int maxSeconds;

    @Override
    void checkUsage() {
        atLeastOne("--limit", limit);
        atLeastOne("--max-keys", maxKeys);
        atLeastOne("--max-seconds", maxSeconds);
    }

    private void atLeastOne(String option, int value) {
        if (value < 1) {
            throw new ParameterException(spec().commandLine(), option + " must be at least 1: '" + value + "'");
        }
    }

    @Override
    int run(Store store) {
        RuleSettings settings = store.rule(rule);
        PrintWriter err = spec().commandLine().getErr();
        KeyScan scan = store.inspector().scan(decidingRule(settings),
                settings.cost(), limit, maxKeys, Duration.ofSeconds(maxSeconds), seen -> progress(err, seen));
        // The progress line is written over, then wiped, so that the table starts clean.
        err.print("\r" + " ".repeat(progress(0).length()) + "\r");
        err.flush();
        String coverage = scan.keysSeen() + " key(s) looked at" + (scan.complete() ? ", all of the rule's"
                : ", stopped by --max-keys or --max-seconds: there may be more");
        if (options.json) {
            Map<String, Object> json = new LinkedHashMap<>();
            json.put("rule", rule);
            json.put("keysSeen", scan.keysSeen());
            json.put("complete", scan.complete());
            json.put("nearest", scan.nearest().stream().map(StateJson::of).toList());
            out().println(StateJson.write(json));
            return 0;
        }
        out().println("rule " + rule + ": " + coverage);
        out().println(String.format(Locale.ROOT, "%-13s %9s %7s %13s %13s  %s", "verdict", "remaining", "limit",
                "next unit", "full in", "Valkey key"));
        for (KeyState state : scan.nearest()) {
            out().println(row(state));
        }
        return 0;
    }

    private void progress(PrintWriter err, int seen) {
        err.print("\r" + progress(seen));
        err.flush();
    }

    /** One length whatever the count, so that each line covers the one before. */
    private String progress(int seen) {
        return String.format(Locale.ROOT, "scanned %,11d key(s) of rule %s ...", seen, rule);
    }

    private static String row(KeyState state) {
        if (state.decision().isEmpty()) {
            return String.format(Locale.ROOT, "%-13s %9s %7s %13s %13s  %s", "UNREADABLE", "-", "-", "-", "-", state.stateKey());
        }
        Decision d = state.decision().get();
        return String.format(Locale.ROOT, "%-13s %9d %7d %13s %13s  %s", d.allowed() ? "allowed" : state.shadow() ? "over (shadow)" : "REJECTED",
                d.remaining(), d.limit(), inWords(state.nextUnit()), inWords(d.resetAfter()), state.stateKey());
    }

    /** In the words {@code inspect} uses: a support engineer compares the two. */
    private static String inWords(Duration d) {
        return d.isZero() ? "-" : KeyState.words(d);
    }
}
