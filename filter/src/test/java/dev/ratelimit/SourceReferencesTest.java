package dev.ratelimit;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link ArchitectureTest}'s layers and library rooms, held over the sources too: the class files
 * do not show every use. javac copies a constant ({@code static final} primitive or string) into
 * the class that reads it and keeps no reference to where it came from, drops annotations of
 * source retention, and erases the type arguments of local variables and lambdas; a layer that
 * uses another only so passes ArchUnit. Every name of another package in code (an import, static
 * or not, or a qualified name; comments and literals aside) must be one the layer may use.
 */
class SourceReferencesTest {

    /** A qualified name of ours up to its first type (or {@code *}): group 1 is the package. */
    private static final Pattern OURS = Pattern.compile("\\b(dev\\.ratelimit(?:\\.[a-z][a-z0-9_]*)*)\\.(?:[A-Z]|\\*)");

    @Test
    void eachPackageNamesOnlyTheLayersBelowIt() {
        List<String> found = new ArrayList<>();
        for (JavaSource source : JavaSource.all(ArchitectureTest.SOURCES)) {
            Set<String> mayUse = ArchitectureTest.MAY_USE.get(source.packageName());
            Matcher named = OURS.matcher(source.code());
            while (named.find()) {
                String used = named.group(1);
                if (!used.equals(source.packageName()) && (mayUse == null || !mayUse.contains(used))) {
                    found.add(source.file() + " (" + source.packageName() + ") names " + used + " at "
                            + named.group() + "…");
                }
            }
        }
        assertThat(found).as("names of packages a layer may not use (ArchitectureTest.MAY_USE)").isEmpty();
    }

    @Test
    void librariesAreNamedOnlyInTheirRooms() {
        List<String> found = new ArrayList<>();
        for (JavaSource source : JavaSource.all(ArchitectureTest.SOURCES)) {
            for (Map.Entry<String, List<String>> room : ArchitectureTest.ROOMS.entrySet()) {
                if (ArchitectureTest.inRoom(room.getKey(), source.packageName())) {
                    continue;
                }
                for (String library : room.getValue()) {
                    if (Pattern.compile("\\b" + Pattern.quote(library + ".")).matcher(source.code()).find()) {
                        found.add(source.file() + " names " + library + ", which only " + room.getKey() + " may");
                    }
                }
            }
        }
        assertThat(found).as("libraries named outside their rooms (ArchitectureTest.ROOMS)").isEmpty();
    }

    /** The checks see what they are meant to: an inlined constant's import, not a comment's name. */
    @Test
    void theScanSeesImportsAndQualifiedNamesButNotCommentsOrLiterals() {
        String code = JavaSource.code("""
                package dev.ratelimit;
                import static dev.ratelimit.config.SettingsReader.PREFIX; // dev.ratelimit.servlet.X
                /** {@link dev.ratelimit.valkey.ValkeyRateLimiter} */
                class A { String s = "dev.ratelimit.local.B"; char c = '"'; int p = redis.clients.jedis.Protocol.DEFAULT_PORT; }
                """);
        List<String> named = new ArrayList<>();
        Matcher matcher = OURS.matcher(code);
        while (matcher.find()) {
            named.add(matcher.group(1));
        }
        assertThat(named).containsExactly("dev.ratelimit.config");
        assertThat(code).contains("redis.clients.jedis.Protocol.DEFAULT_PORT");
        assertThat(JavaSource.packageOf(code)).isEqualTo("dev.ratelimit");
    }
}
