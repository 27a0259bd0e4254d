package dev.ratelimit.config;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README and the filter's Javadoc both list every setting with its default. This keeps
 * them from drifting: each lists exactly the settings the reader reads, with the same defaults.
 */
class SettingsDocumentationTest {

    private static final Path README = Path.of("..", "README.md");
    private static final Path FILTER = Path.of("src/main/java/dev/ratelimit/servlet/RateLimitFilter.java");
    private static final Pattern README_ROW = Pattern.compile("^\\| `([a-z0-9.-]+)` \\| (.+?) \\|", Pattern.MULTILINE);
    private static final Pattern JAVADOC_ROW = Pattern.compile("<tr><td>\\{@code ([a-z0-9.-]+)}</td><td>(.+?)</td>");

    @Test
    void theReadmeAndTheJavadocListEverySettingReadWithTheSameDefaults() throws IOException {
        String readme = Files.readString(README);
        String javadoc = Files.readString(FILTER);
        int readmeRules = readme.indexOf("Rule settings, under");
        int javadocRules = javadoc.indexOf("<h2>Rule settings");
        assertThat(readmeRules).as("the README's rule settings table").isPositive();
        assertThat(javadocRules).as("the Javadoc's rule settings table").isPositive();
        // The table runs from its header separator to the first blank line after it.
        String readmeRuleTable = readme.substring(readmeRules, readme.indexOf("\n\n", readme.indexOf("|---", readmeRules)));

        Map<String, String> readmeGlobal = rows(README_ROW, readme.substring(0, readmeRules));
        Map<String, String> readmeRule = rows(README_ROW, readmeRuleTable);
        Map<String, String> javadocGlobal = rows(JAVADOC_ROW, javadoc.substring(0, javadocRules));
        Map<String, String> javadocRule = rows(JAVADOC_ROW, javadoc.substring(javadocRules));
        readmeGlobal.keySet().removeIf(name -> !name.startsWith(SettingsReader.PREFIX));

        Set<String> readGlobal = new TreeSet<>();
        Set<String> readRule = new TreeSet<>();
        String rulePrefix = SettingsReader.PREFIX + "rule.r.";
        SettingsReader.read(new SettingsSource() {
            @Override
            public Optional<String> get(String name) {
                if (name.startsWith(rulePrefix)) {
                    readRule.add(name.substring(rulePrefix.length()));
                } else {
                    readGlobal.add(name);
                }
                return Optional.ofNullable(Map.of("ratelimit.rules", "r", rulePrefix + "limit", "1",
                        rulePrefix + "window", "1s").get(name));
            }

            @Override
            public Set<String> names() {
                return Set.of();
            }
        });

        // An old name (SettingsReader.RENAMED) is read too, but documented beside its new one only.
        readRule.removeAll(SettingsReader.RENAMED.values());
        readGlobal.removeIf(name -> SettingsReader.RENAMED.containsValue(name.substring(SettingsReader.PREFIX.length())));
        assertThat(new TreeSet<>(readmeGlobal.keySet())).as("global settings in the README").isEqualTo(readGlobal);
        assertThat(new TreeSet<>(javadocGlobal.keySet())).as("global settings in the Javadoc").isEqualTo(readGlobal);
        assertThat(new TreeSet<>(readmeRule.keySet())).as("rule settings in the README").isEqualTo(readRule);
        assertThat(new TreeSet<>(javadocRule.keySet())).as("rule settings in the Javadoc").isEqualTo(readRule);
        assertThat(javadocGlobal).as("global defaults, Javadoc against README").isEqualTo(readmeGlobal);
        assertThat(javadocRule).as("rule defaults, Javadoc against README").isEqualTo(readmeRule);
    }

    /**
     * Every setting the README's tables list: the global ones by their whole name, a rule's as
     * {@code ratelimit.rule.*.<name>}.
     */
    static Set<String> readmeNames() throws IOException {
        String readme = Files.readString(README);
        int readmeRules = readme.indexOf("Rule settings, under");
        String ruleTable = readme.substring(readmeRules, readme.indexOf("\n\n", readme.indexOf("|---", readmeRules)));
        Set<String> names = new TreeSet<>();
        rows(README_ROW, readme.substring(0, readmeRules)).keySet().stream()
                .filter(name -> name.startsWith(SettingsReader.PREFIX)).forEach(names::add);
        rows(README_ROW, ruleTable).keySet().forEach(name -> names.add(SettingsReader.PREFIX + "rule.*." + name));
        return names;
    }

    /** Name to default, the default as plain text: no backticks, no {@code}, no leading "= ". */
    private static Map<String, String> rows(Pattern row, String text) {
        Map<String, String> rows = new LinkedHashMap<>();
        Matcher m = row.matcher(text);
        while (m.find()) {
            String value = m.group(2).replaceAll("\\{@code ([^}]*)}", "$1").replace("`", "").trim();
            rows.put(m.group(1), value.startsWith("= ") ? value.substring(2) : value);
        }
        return rows;
    }
}
