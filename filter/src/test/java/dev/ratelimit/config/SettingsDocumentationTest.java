package dev.ratelimit.config;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settings reference, {@code docs/settings.md}, is the one place every setting is documented
 * with its default (the README and the filter's Javadoc link to it): it lists exactly the settings
 * the reader reads, the global ones and a rule's.
 */
class SettingsDocumentationTest {

    private static final Path REFERENCE = Path.of("..", "docs", "settings.md");
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z0-9.-]+)` \\| (.+?) \\|", Pattern.MULTILINE);

    @Test
    void theReferenceListsEverySettingTheReaderReads() throws IOException {
        String readme = Files.readString(REFERENCE);
        int readmeRules = readme.indexOf("Rule settings, under");
        assertThat(readmeRules).as("the reference's rule settings table").isPositive();
        // The table runs from its header separator to the first blank line after it.
        String readmeRuleTable = readme.substring(readmeRules, readme.indexOf("\n\n", readme.indexOf("|---", readmeRules)));

        Map<String, String> readmeGlobal = rows(ROW, readme.substring(0, readmeRules));
        Map<String, String> readmeRule = rows(ROW, readmeRuleTable);
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
        assertThat(new TreeSet<>(readmeGlobal.keySet())).as("global settings in docs/settings.md").isEqualTo(readGlobal);
        assertThat(new TreeSet<>(readmeRule.keySet())).as("rule settings in docs/settings.md").isEqualTo(readRule);
    }

    /**
     * A default the reference writes as a value ({@code `50ms`}, {@code `true`}) is the one the
     * reader uses: both come from the reader's own call for that setting. A default in words
     * ({@code = limit}, {@code (unset)}) is one the reader computes or lacks.
     */
    @Test
    void everyDefaultTheReferenceWritesIsTheReaders() throws IOException {
        String reference = Files.readString(REFERENCE);
        int rules = reference.indexOf("Rule settings, under");
        Map<String, String> documented = new java.util.TreeMap<>();
        String ruleTable = reference.substring(rules, reference.indexOf("\n\n", reference.indexOf("|---", rules)));
        Matcher global = ROW.matcher(reference.substring(0, rules));
        while (global.find()) {
            documented.put(global.group(1), global.group(2));
        }
        Matcher rule = ROW.matcher(ruleTable);
        while (rule.find()) {
            documented.put(SettingsReader.PREFIX + "rule.r." + rule.group(1), rule.group(2));
        }
        Map<String, String> read = SettingsReader.defaults(new MapSettingsSource(Map.of("ratelimit.rules", "r",
                "ratelimit.rule.r.limit", "7", "ratelimit.rule.r.window", "1s",
                "ratelimit.valkey.url", "redis://localhost:6379")));
        List<String> differ = new java.util.ArrayList<>();
        int compared = 0;
        for (Map.Entry<String, String> row : documented.entrySet()) {
            Matcher literal = Pattern.compile("^`([^`]+)`( \\(.*\\))?$").matcher(row.getValue().strip());
            String own = read.get(row.getKey());
            if (literal.matches() && own != null) {
                compared++;
                if (!literal.group(1).equals(own)) {
                    differ.add(row.getKey() + ": documented " + literal.group(1) + ", read " + own);
                }
            }
        }
        assertThat(differ).as("defaults the reference writes unlike the reader").isEmpty();
        assertThat(compared).as("defaults compared").isGreaterThan(25);
    }

    /**
     * Every setting the reference's tables list: the global ones by their whole name, a rule's as
     * {@code ratelimit.rule.*.<name>}.
     */
    static Set<String> documentedNames() throws IOException {
        String readme = Files.readString(REFERENCE);
        int readmeRules = readme.indexOf("Rule settings, under");
        String ruleTable = readme.substring(readmeRules, readme.indexOf("\n\n", readme.indexOf("|---", readmeRules)));
        Set<String> names = new TreeSet<>();
        rows(ROW, readme.substring(0, readmeRules)).keySet().stream()
                .filter(name -> name.startsWith(SettingsReader.PREFIX)).forEach(names::add);
        rows(ROW, ruleTable).keySet().forEach(name -> names.add(SettingsReader.PREFIX + "rule.*." + name));
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
