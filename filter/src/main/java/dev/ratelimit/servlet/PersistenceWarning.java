package dev.ratelimit.servlet;

import dev.ratelimit.Rule;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.valkey.Persistence;
import dev.ratelimit.valkey.ValkeyRateLimiter;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

/**
 * Once per stack, at start-up: when a rule's window (or a plan's) is an hour or longer, calendar
 * windows included, asks the Valkey primaries whether they persist, and warns once, naming those
 * rules, when one does not: a restart of such a Valkey forgets a day's counts, which hands every
 * client a fresh quota. A user that may not ask ({@code NOPERM}) or a server that does not answer
 * gets one INFO line. On a daemon thread: the start never waits for it, nor fails by it.
 */
final class PersistenceWarning {

    private static final System.Logger LOG = System.getLogger(PersistenceWarning.class.getName());

    /** The shortest window whose counts are worth keeping across a restart. */
    static final Duration LONG_WINDOW = Duration.ofHours(1);

    private PersistenceWarning() {
    }

    /**
     * Starts the check, if any rule needs it.
     *
     * @param settings the settings the stack was started with
     * @param valkey   the shared limiter
     */
    static void check(FilterSettings settings, ValkeyRateLimiter valkey) {
        List<String> rules = settings.rules().stream().filter(PersistenceWarning::hasLongWindow)
                .map(r -> r.rule().name()).toList();
        if (rules.isEmpty()) {
            return;
        }
        Thread thread = new Thread(() -> report(rules, valkey.inspector().persistence()), "ratelimit-persistence-check");
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether the rule or one of its plans counts over an hour or more (not concurrency: no window). */
    private static boolean hasLongWindow(RuleSettings settings) {
        return Stream.concat(Stream.of(settings.rule()), settings.plans().values().stream())
                .anyMatch(rule -> !rule.algorithm().isConcurrency() && rule.window().compareTo(LONG_WINDOW) >= 0);
    }

    private static void report(List<String> rules, Persistence persistence) {
        if (!persistence.known()) {
            LOG.log(System.Logger.Level.INFO, "Whether Valkey persists the counts of rules {0} (windows of an hour "
                    + "or more) is not known: CONFIG GET appendonly save failed ({1}); a restart of a Valkey without "
                    + "appendonly or save would forget them", rules, persistence.unknown());
        } else if (!persistence.persists()) {
            LOG.log(System.Logger.Level.WARNING, "No persistence (appendonly no, no save) on {0}: a restart "
                    + "forgets the counts of rules {1}, whose windows are an hour or longer, and every client gets a "
                    + "fresh quota; set appendonly yes (see the README, Quotas that survive a restart)",
                    persistence.volatileServers(), rules);
        } else {
            LOG.log(System.Logger.Level.DEBUG, "Valkey persists the counts of rules {0}", rules);
        }
    }
}
