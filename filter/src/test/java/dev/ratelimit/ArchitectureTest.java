package dev.ratelimit;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shape of the JAR, held by tests rather than habit: who may use whom (the README's Layout
 * section says the same in words), no package cycles, the libraries each confined to its room,
 * the packages and the public surface exactly the README's table, and no main source file over 300 lines.
 * Every public type and member documented is {@link DocumentedTest}'s.
 */
class ArchitectureTest {

    /** The largest a main source file may be, in physical lines (as {@code wc -l} counts them). */
    static final int MAX_LINES = 300;

    static final Path CLASSES = Path.of("target/classes");
    static final Path SOURCES = Path.of("src/main/java");
    static final Path README = Path.of("../README.md");

    private static final JavaClasses MAIN = new ClassFileImporter().importPath(CLASSES);

    /**
     * The layers, from the bottom: the API; the internals the limiters share; the limiters (local,
     * Valkey); the resilient path over them; metrics; settings; the servlet filter on top. Address
     * parsing stands apart.
     */
    static ArchRule layers() {
        return layeredArchitecture().consideringOnlyDependenciesInLayers()
                .layer("api").definedBy("dev.ratelimit")
                .layer("internal").definedBy("dev.ratelimit.internal")
                .layer("net").definedBy("dev.ratelimit.net")
                .layer("local").definedBy("dev.ratelimit.local")
                .layer("valkey").definedBy("dev.ratelimit.valkey")
                .layer("resilient").definedBy("dev.ratelimit.resilient")
                .layer("metrics").definedBy("dev.ratelimit.metrics")
                .layer("config").definedBy("dev.ratelimit.config")
                .layer("servlet").definedBy("dev.ratelimit.servlet")
                .whereLayer("api").mayNotAccessAnyLayer()
                .whereLayer("net").mayNotAccessAnyLayer()
                .whereLayer("internal").mayOnlyAccessLayers("api")
                .whereLayer("local").mayOnlyAccessLayers("api", "internal")
                .whereLayer("valkey").mayOnlyAccessLayers("api", "internal")
                .whereLayer("resilient").mayOnlyAccessLayers("api", "internal", "local")
                .whereLayer("metrics").mayOnlyAccessLayers("api", "internal")
                .whereLayer("config").mayOnlyAccessLayers("api", "net", "local", "valkey", "resilient")
                .whereLayer("servlet").mayNotBeAccessedByAnyLayer();
    }

    /** One slice per package: a cycle between any two packages fails. */
    static ArchRule noPackageCycles() {
        return slices().assignedFrom(new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
                return SliceIdentifier.of(javaClass.getPackageName());
            }

            @Override
            public String getDescription() {
                return "packages of dev.ratelimit";
            }
        }).should().beFreeOfCycles();
    }

    /** Servlet, Jedis and MicroProfile Config each stay in the one room that adapts them. */
    static ArchRule librariesInTheirRooms() {
        return CompositeArchRule.of(onlyIn("dev.ratelimit.servlet", "jakarta.servlet.."))
                .and(onlyIn("dev.ratelimit.config", "org.eclipse.microprofile.."))
                .and(onlyIn("dev.ratelimit.valkey", "redis.clients..", "org.apache.commons.pool2.."));
    }

    private static ArchRule onlyIn(String room, String... libraries) {
        return noClasses().that().resideOutsideOfPackage(room)
                .should().dependOnClassesThat().resideInAnyPackage(libraries);
    }

    /** No main source file longer than {@link #MAX_LINES} lines. */
    static ArchRule smallFiles() {
        return classes().that().areTopLevelClasses().should(new ArchCondition<>("have a source file of at most " + MAX_LINES + " lines") {
            @Override
            public void check(JavaClass javaClass, ConditionEvents events) {
                Path file = sourceOf(javaClass);
                long lines = lines(file);
                events.add(new SimpleConditionEvent(javaClass, lines <= MAX_LINES,
                        file + " has " + lines + " lines"));
            }
        });
    }

    @Test
    void eachLayerUsesOnlyTheLayersBelowIt() {
        layers().check(MAIN);
    }

    @Test
    void noPackageDependsOnItselfThroughAnother() {
        noPackageCycles().check(MAIN);
    }

    @Test
    void servletJedisAndMicroProfileConfigStayInTheirRooms() {
        librariesInTheirRooms().check(MAIN);
    }

    @Test
    void noMainSourceFileIsOver300Lines() {
        smallFiles().check(MAIN);
    }

    /**
     * Every package of the JAR has a row in the README's Layout table, marked internal or listing
     * its public types; the public types of the others (nested ones as {@code Outer.Inner}) are
     * exactly that list: a new package or public type is a decision, made by editing the table.
     */
    @Test
    void thePublicSurfaceIsTheReadmesList() {
        String readme = read(README);
        Set<String> packages = MAIN.stream().map(JavaClass::getPackageName).collect(Collectors.toCollection(TreeSet::new));
        assertThat(documentedPackages(readme)).as("packages in the README's Layout table").isEqualTo(packages);
        Map<String, Set<String>> documented = documentedPublicTypes(readme);
        assertThat(publicTypes(MAIN, documented.keySet())).as("public types of the API packages")
                .isEqualTo(documented);
    }

    /** Every package the README's Layout table has a row for. */
    static Set<String> documentedPackages(String readme) {
        return layoutRows(readme).map(cells -> cells[1].trim().replace("`", ""))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Package name to the public types the README's Layout table lists for it (internal ones left out). */
    static Map<String, Set<String>> documentedPublicTypes(String readme) {
        Map<String, Set<String>> documented = new TreeMap<>();
        layoutRows(readme).filter(cells -> !cells[2].trim().startsWith("(internal")).forEach(cells ->
                documented.put(cells[1].trim().replace("`", ""), Arrays.stream(cells[2].split(","))
                        .map(name -> name.trim().replace("`", "")).collect(Collectors.toCollection(TreeSet::new))));
        return documented;
    }

    /** The rows of the Layout table about a package, split into cells. */
    private static Stream<String[]> layoutRows(String readme) {
        return readme.lines().map(line -> line.split("\\|"))
                .filter(cells -> cells.length >= 4 && cells[1].trim().matches("`dev\\.ratelimit[a-z.]*`"));
    }

    /** Package name to its public types (public nested ones of public types included), by simple name. */
    static Map<String, Set<String>> publicTypes(JavaClasses classes, Set<String> packages) {
        Map<String, Set<String>> found = new TreeMap<>();
        for (JavaClass javaClass : classes) {
            if (packages.contains(javaClass.getPackageName()) && isVisibleOutside(javaClass)) {
                String name = javaClass.getName().substring(javaClass.getPackageName().length() + 1).replace('$', '.');
                found.computeIfAbsent(javaClass.getPackageName(), p -> new TreeSet<>()).add(name);
            }
        }
        return found;
    }

    private static boolean isVisibleOutside(JavaClass javaClass) {
        for (JavaClass c = javaClass; c != null; c = c.getEnclosingClass().orElse(null)) {
            if (!c.getModifiers().contains(JavaModifier.PUBLIC) || c.isAnonymousClass() || c.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    static Path sourceOf(JavaClass javaClass) {
        String file = javaClass.getSource().flatMap(source -> source.getFileName())
                .orElse(javaClass.getSimpleName() + ".java");
        return SOURCES.resolve(javaClass.getPackageName().replace('.', '/')).resolve(file);
    }

    static long lines(Path file) {
        try (var lines = Files.lines(file)) {
            return lines.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
