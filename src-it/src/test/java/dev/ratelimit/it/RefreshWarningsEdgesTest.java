package dev.ratelimit.it;

import org.eclipse.microprofile.config.spi.ConfigSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * README (Configuration): a rule configured but not listed is "logged once as a warning". With
 * {@code ratelimit.refresh} the settings are read again and again: each warning is to be logged
 * once each time it appears, never at each reading; readings that are refused, or that cannot be
 * read at all, neither repeat it nor lose it. Unlisted rules are found by the source's property
 * names, so a reading must see the names as they are now, not as they were at the start.
 */
class RefreshWarningsEdgesTest {

    private static final String SPARE = "Rule 'spare' is configured";
    /** Readings made after each edit: a warning said at each reading would show as several. */
    private static final int READINGS = 3;

    private static ValkeyServer valkey;
    private CapturedLogs logs;

    @BeforeAll
    static void startValkey() {
        valkey = ValkeyServer.startProcess(List.of());
    }

    @AfterAll
    static void stopValkey() {
        if (valkey != null) {
            valkey.close();
        }
    }

    @BeforeEach
    void listen() {
        logs = CapturedLogs.of("dev.ratelimit.config.SettingsReader", "dev.ratelimit.servlet.SettingsRefresh");
    }

    @AfterEach
    void stopListening() {
        logs.close();
    }

    private static Map<String, String> settings() {
        // The unlisted rule has one property: a reading made while a test edits the source sees
        // it whole or not at all.
        return JettyApp.settings(valkey.url(), "ratelimit.refresh", "100ms", "ratelimit.rules", "api",
                "ratelimit.rule.api.limit", "10", "ratelimit.rule.api.window", "1m", "ratelimit.rule.spare.limit", "5");
    }

    @Test
    void aWarningThatComesAndGoesIsLoggedOncePerAppearance() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(settings());
        try (JettyApp app = JettyApp.start(source)) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            readAgain(app);
            assertThat(warnings(SPARE)).as("at the start").hasSize(1);
            for (int appearance = 2; appearance <= 3; appearance++) {
                source.values.remove("ratelimit.rule.spare.limit");
                readAgain(app);
                assertThat(warnings(SPARE)).as("gone, after %s appearances", appearance - 1).hasSize(appearance - 1);
                source.values.put("ratelimit.rule.spare.limit", "5");
                readAgain(app);
                assertThat(warnings(SPARE)).as("back: appearance %s", appearance).hasSize(appearance);
            }
        }
    }

    /**
     * An invalid reading carries the warnings it found; they are logged when new, and neither a
     * refused reading repeated nor the valid reading after it says them again.
     */
    @Test
    void refusedReadingsNeitherRepeatNorLoseTheirWarnings() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(settings());
        try (JettyApp app = JettyApp.start(source)) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            readAgain(app);
            source.values.put("ratelimit.rule.api.limit", "lots");
            readAgain(app);
            assertThat(warnings("are refused")).as("refusals").hasSize(1);
            assertThat(warnings(SPARE)).as("the unlisted rule while the readings are refused").hasSize(1);

            source.values.put("ratelimit.rule.extra.limit", "5"); // a new warning in a refused reading
            readAgain(app);
            assertThat(warnings("Rule 'extra' is configured")).as("the new warning of a refused reading").hasSize(1);

            source.values.put("ratelimit.rule.api.limit", "10");
            readAgain(app);
            assertThat(warnings(SPARE)).as("once valid again").hasSize(1);
            assertThat(warnings("Rule 'extra' is configured")).as("once valid again").hasSize(1);
        }
    }

    /**
     * A refresh that lists one more rule leaves the unlisted rule as it was: configured, not
     * listed, not enforced. Its warning names the list, though.
     */
    @Test
    void listingAnotherRuleDoesNotRepeatTheWarningOfTheRuleStillUnlisted() throws Exception {
        EditableConfigSource source = new EditableConfigSource("dynamic", 100);
        source.values.putAll(settings());
        source.values.put("ratelimit.rule.more.limit", "7");
        source.values.put("ratelimit.rule.more.window", "1m");
        try (JettyApp app = JettyApp.start(source)) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            readAgain(app);
            assertThat(warnings(SPARE)).as("at the start").hasSize(1);
            source.values.put("ratelimit.rules", "api,more");
            readAgain(app);
            assertThat(warnings("refreshed")).as("the new list applied").isNotEmpty();
            assertThat(warnings(SPARE)).as("the rule spare, unlisted throughout: %s", warnings(SPARE)).hasSize(1);
        }
    }

    /** Readings that fail to be read at all (the source throws) keep the last warnings, neither repeating nor losing them. */
    @Test
    void readingsThatFailToBeReadDoNotRepeatTheWarnings() throws Exception {
        FailingSource source = new FailingSource();
        source.values.putAll(settings());
        try (JettyApp app = JettyApp.start(source)) {
            assertThat(app.get("/").statusCode()).isEqualTo(200);
            readAgain(app);
            source.failing = true;
            readAgain(app);
            assertThat(app.get("/").statusCode()).as("the running settings").isEqualTo(200);
            source.failing = false;
            readAgain(app);
            assertThat(warnings(SPARE)).as("after readings that failed then one that did not").hasSize(1);
            List<String> failures = logs.messages(Level.WARNING).stream()
                    .filter(m -> m.contains("could not be read") || m.contains("are refused")).toList();
            assertThat(failures).as("the failed readings, said once").hasSize(1);
        }
    }

    /** Reads the settings again {@link #READINGS} times, besides the schedule's own readings. */
    private static void readAgain(JettyApp app) throws Exception {
        for (int i = 0; i < READINGS; i++) {
            app.refreshSettings();
        }
    }

    private List<String> warnings(String containing) {
        return logs.records().stream().map(CapturedLogs::message).filter(m -> m.contains(containing)).toList();
    }

    /** A source that throws while failing, as a remote source does when unreachable. */
    static final class FailingSource implements ConfigSource {

        final Map<String, String> values = new ConcurrentHashMap<>();
        volatile boolean failing;

        @Override
        public Set<String> getPropertyNames() {
            if (failing) {
                throw new IllegalStateException("the settings store cannot be reached");
            }
            return Set.copyOf(values.keySet());
        }

        @Override
        public String getValue(String property) {
            if (failing) {
                throw new IllegalStateException("the settings store cannot be reached");
            }
            return values.get(property);
        }

        @Override
        public String getName() {
            return "failing";
        }

        @Override
        public int getOrdinal() {
            return 100;
        }
    }
}
