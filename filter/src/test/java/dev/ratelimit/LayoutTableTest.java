package dev.ratelimit;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * CONTRIBUTING.md's "Who may use whom" table says what {@link ArchitectureTest#MAY_USE} holds: an edit
 * of either alone, a layer allowed more in CONTRIBUTING.md than the tests hold or the other way round,
 * fails here. Read as written: a row's packages are its first cell's; what they may use is "the
 * API" and each {@code `name`} of the second cell (a package under {@code dev.ratelimit}),
 * "nothing else of ours" is none, "everything" is every other package.
 */
class LayoutTableTest {

    private static final Pattern PACKAGE = Pattern.compile("`(dev\\.ratelimit[a-z.]*)`");
    private static final Pattern NAME = Pattern.compile("`([a-z]+(?:\\.[a-z]+)*)`");

    @Test
    void theReadmesWhoMayUseWhomIsTheLayersTheTestsHold() {
        assertThat(readmeTable(ArchitectureTest.read(ArchitectureTest.LAYOUT)))
                .as("CONTRIBUTING.md's 'Who may use whom' against ArchitectureTest.MAY_USE")
                .isEqualTo(new TreeMap<>(ArchitectureTest.MAY_USE));
    }

    /** Package to the packages it may use, as CONTRIBUTING.md's table says. */
    static Map<String, Set<String>> readmeTable(String readme) {
        List<String> lines = readme.lines().toList();
        int at = 0;
        while (at < lines.size() && !lines.get(at).startsWith("Who may use whom")) {
            at++;
        }
        assertThat(at).as("a 'Who may use whom' paragraph in CONTRIBUTING.md").isLessThan(lines.size());
        Map<String, Set<String>> table = new TreeMap<>();
        Set<String> usingEverything = new TreeSet<>();
        // The table starts after the paragraph's line and a blank one; its first two rows are the header.
        for (int i = at + 4; i < lines.size() && lines.get(i).startsWith("|"); i++) {
            String[] cells = lines.get(i).split("\\|");
            Set<String> mayUse = new TreeSet<>();
            if (cells[2].contains("the API")) {
                mayUse.add("dev.ratelimit");
            }
            Matcher named = NAME.matcher(cells[2]);
            while (named.find()) {
                mayUse.add("dev.ratelimit." + named.group(1));
            }
            Matcher packages = PACKAGE.matcher(cells[1]);
            while (packages.find()) {
                table.put(packages.group(1), mayUse);
                if (cells[2].contains("everything")) {
                    usingEverything.add(packages.group(1));
                }
            }
        }
        assertThat(table).as("rows of CONTRIBUTING.md's 'Who may use whom' table").isNotEmpty();
        for (String name : usingEverything) {
            Set<String> others = new TreeSet<>(table.keySet());
            others.remove(name);
            table.put(name, others);
        }
        return table;
    }
}
