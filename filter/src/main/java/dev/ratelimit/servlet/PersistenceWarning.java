package dev.ratelimit.servlet;

import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.valkey.Persistence;
import dev.ratelimit.valkey.ValkeyRateLimiter;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Once per rule: when a rule's window (or a plan's) is an hour or longer, calendar windows
 * included, asks the Valkey primaries whether they persist, and warns once, naming those rules,
 * when one does not: a restart of such a Valkey forgets a day's counts, which hands every client
 * a fresh quota. A user that may not ask ({@code NOPERM}) or a server that does not answer gets
 * one INFO line. Asked when both are known, the rules and the connected limiter, whichever comes
 * last; then again for the long rules a refresh adds. On a daemon thread: neither the start nor
 * a refresh waits for it, nor fails by it.
 */
final class PersistenceWarning {

    private static final System.Logger LOG = System.getLogger(PersistenceWarning.class.getName());

    /** The shortest window whose counts are worth keeping across a restart. */
    static final Duration LONG_WINDOW = Duration.ofHours(1);

    /** The rules already asked about: each is named at most once. */
    private final Set<String> asked = new HashSet<>();
    /** The latest settings' long rules not asked about yet. */
    private List<String> unasked = List.of();
    /** The shared limiter once connected; null before. */
    private ValkeyRateLimiter valkey;

    /**
     * The settings the stack decides by, at the start and at each refresh.
     *
     * @param settings the settings
     */
    synchronized void rules(FilterSettings settings) {
        unasked = settings.rules().stream().filter(PersistenceWarning::hasLongWindow).map(r -> r.rule().name())
                .filter(name -> !asked.contains(name)).toList();
        askIfReady();
    }

    /**
     * The shared limiter, once it has connected.
     *
     * @param connected the limiter
     */
    synchronized void connected(ValkeyRateLimiter connected) {
        valkey = connected;
        askIfReady();
    }

    private void askIfReady() {
        if (valkey == null || unasked.isEmpty()) {
            return;
        }
        List<String> rules = unasked;
        ValkeyRateLimiter limiter = valkey;
        asked.addAll(rules);
        unasked = List.of();
        Thread thread = new Thread(() -> report(rules, limiter.inspector().persistence()), "ratelimit-persistence-check");
        thread.setDaemon(true);
        thread.start();
    }

    /** Whether the rule or one of its plans counts over an hour or more (not concurrency: no window). */
    private static boolean hasLongWindow(RuleSettings settings) {
        return Stream.concat(Stream.of(settings.rule()), settings.plans().values().stream())
                .anyMatch(rule -> !rule.algorithm().isConcurrency() && rule.window().compareTo(LONG_WINDOW) >= 0);
    }

    private static void report(List<String> rules, Persistence persistence) {
        if (!persistence.volatileServers().isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "No persistence (appendonly no, no save) on {0}: a restart "
                    + "forgets the counts of rules {1}, whose windows are an hour or longer, and every client gets a "
                    + "fresh quota; set appendonly yes (see the README, Quotas that survive a restart){2}",
                    persistence.volatileServers(), rules,
                    persistence.known() ? "" : ". Not known of the others: " + persistence.unknown());
        } else if (!persistence.known()) {
            LOG.log(System.Logger.Level.INFO, "Whether Valkey persists the counts of rules {0} (windows of an hour "
                    + "or more) is not known: CONFIG GET appendonly save failed ({1}); a restart of a Valkey without "
                    + "appendonly or save would forget them", rules, persistence.unknown());
        } else {
            LOG.log(System.Logger.Level.DEBUG, "Valkey persists the counts of rules {0}", rules);
        }
    }
}
