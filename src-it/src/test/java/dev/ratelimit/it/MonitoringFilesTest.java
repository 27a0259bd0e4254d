package dev.ratelimit.it;

import dev.ratelimit.it.checker.JsonReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Grafana dashboard and the Prometheus alert rules that ratelimit-micrometer ships: the
 * JAR's copies and docs/monitoring's are the same bytes, Prometheus's own {@code promtool}
 * accepts the rules and passes their unit tests (docs/monitoring/ratelimit-alerts-test.yml),
 * and every alert there is tested both firing and not firing. That the dashboard's queries
 * return data from a real application is {@link DashboardPrometheusTest}'s part.
 */
class MonitoringFilesTest {

    /** Where the JAR keeps them, and the documentation's copies. */
    static final String RESOURCES = "/dev/ratelimit/micrometer/";
    static final Path DOCS = Path.of("..", "docs", "monitoring");
    static final String DASHBOARD = "grafana-dashboard.json";
    static final String ALERTS = "ratelimit-alerts.yml";
    static final String ALERT_TESTS = "ratelimit-alerts-test.yml";

    @Test
    void theJarAndTheDocsHoldTheSameFiles() throws IOException {
        for (String name : List.of(DASHBOARD, ALERTS)) {
            assertThat(resource(name)).as("%s in the JAR and in docs/monitoring (copy one over the other)", name)
                    .isEqualTo(Files.readAllBytes(DOCS.resolve(name)));
        }
    }

    @Test
    void promtoolAcceptsTheRulesAndPassesTheirUnitTests(@TempDir Path dir) throws Exception {
        Files.write(dir.resolve(ALERTS), resource(ALERTS));
        Files.copy(DOCS.resolve(ALERT_TESTS), dir.resolve(ALERT_TESTS));
        Prometheus.ToolRun check = Prometheus.promtool(dir, "check", "rules", ALERTS);
        assertThat(check.status()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS: " + alertNames().size() + " rules found");
        Prometheus.ToolRun test = Prometheus.promtool(dir, "test", "rules", ALERT_TESTS);
        assertThat(test.status()).as(test.output()).isZero();
        assertThat(test.output()).contains("SUCCESS");
    }

    @Test
    void everyAlertIsTestedFiringAndNotFiring() throws IOException {
        Map<String, Set<Boolean>> tested = new LinkedHashMap<>();
        // One check per "- eval_time:" item: its alert name, and whether it expects alerts.
        String[] checks = Files.readString(DOCS.resolve(ALERT_TESTS)).split("\\n\\s*- eval_time:");
        for (String check : checks) {
            Matcher name = Pattern.compile("\\n\\s*alertname:\\s*(\\S+)").matcher(check);
            if (name.find()) {
                boolean none = Pattern.compile("\\n\\s*exp_alerts:\\s*\\[\\]").matcher(check).find();
                tested.computeIfAbsent(name.group(1), k -> new LinkedHashSet<>()).add(!none);
            }
        }
        for (String alert : alertNames()) {
            assertThat(tested.get(alert)).as("%s tested firing (true) and not firing (false) in %s", alert, ALERT_TESTS)
                    .containsExactlyInAnyOrder(true, false);
        }
        assertThat(tested.keySet()).as("alerts tested that the rules do not define").isSubsetOf(alertNames());
    }

    @Test
    void everyPanelHasQueriesOnlyOfTheDashboardsVariables() throws IOException {
        Map<String, Object> dashboard = dashboard();
        Set<String> variables = new LinkedHashSet<>();
        for (Map<String, Object> variable : list(((Map<?, ?>) dashboard.get("templating")).get("list"))) {
            variables.add((String) variable.get("name"));
        }
        assertThat(variables).containsExactly("application", "instance", "rule");
        List<Map<String, Object>> panels = list(dashboard.get("panels"));
        assertThat(panels).hasSizeGreaterThanOrEqualTo(8);
        for (Map<String, Object> panel : panels) {
            List<Map<String, Object>> targets = list(panel.get("targets"));
            assertThat(targets).as("queries of %s", panel.get("title")).isNotEmpty();
            for (Map<String, Object> target : targets) {
                String expr = (String) target.get("expr");
                Matcher used = Pattern.compile("\\$(\\w+)").matcher(expr);
                while (used.find()) {
                    assertThat(used.group(1)).as("a variable of %s", panel.get("title"))
                            .isIn(concat(variables, List.of("__rate_interval", "__range", "__range_s", "__interval", "__interval_ms")));
                }
                assertThat(expr).as("%s is filtered by application and instance", panel.get("title"))
                        .contains("job=~\"$application\"", "instance=~\"$instance\"");
            }
        }
    }

    /** The dashboard as the JAR holds it. */
    static Map<String, Object> dashboard() throws IOException {
        return JsonReader.object(new String(resource(DASHBOARD), java.nio.charset.StandardCharsets.UTF_8));
    }

    /** The names of the alerts the rules file defines, in order. */
    static List<String> alertNames() throws IOException {
        List<String> names = new ArrayList<>();
        Matcher alert = Pattern.compile("(?m)^\\s*- alert:\\s*(\\S+)").matcher(
                new String(resource(ALERTS), java.nio.charset.StandardCharsets.UTF_8));
        while (alert.find()) {
            names.add(alert.group(1));
        }
        assertThat(names).as("alerts in " + ALERTS).isNotEmpty();
        return names;
    }

    /** A file of the micrometer JAR. */
    static byte[] resource(String name) throws IOException {
        try (InputStream in = MonitoringFilesTest.class.getResourceAsStream(RESOURCES + name)) {
            assertThat(in).as("%s%s on the class path (ratelimit-micrometer)", RESOURCES, name).isNotNull();
            return in.readAllBytes();
        }
    }

    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> list(Object value) {
        return (List<Map<String, Object>>) value;
    }

    private static List<String> concat(Set<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
