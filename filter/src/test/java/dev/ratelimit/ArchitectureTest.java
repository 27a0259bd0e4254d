package dev.ratelimit;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shape of the JAR, held by tests rather than habit: who may use whom (CONTRIBUTING.md's Layout
 * section says the same in words), no package cycles, the libraries each confined to its room,
 * the packages and the public surface exactly CONTRIBUTING.md's table. Size is no rule: a file is as
 * long as its one job needs.
 * Every public type and member documented is {@link DocumentedTest}'s.
 */
class ArchitectureTest {

    static final Path CLASSES = Path.of("target/classes");
    static final Path SOURCES = Path.of("src/main/java");
    /** The main sources and resources of the published modules, from this module's directory. */
    static final Path[] MAIN_ROOTS = {Path.of("src/main"), Path.of("../micrometer/src/main"), Path.of("../jakarta/src/main")};
    static final Path LAYOUT = Path.of("../CONTRIBUTING.md");

    static final JavaClasses MAIN = new ClassFileImporter().importPath(CLASSES);

    /**
     * The layers, from the bottom, each package with the packages it may use (besides itself): the
     * API; address parsing, apart; the internals the limiters share; the limiters (local, Valkey)
     * and metrics; the resilient path over them; settings; the servlet filter on top, which
     * nothing uses. Every package of the JAR is one of them ({@link #everyPackageIsALayer}), and
     * {@link SourceReferencesTest} holds the same table over the sources, where javac inlines
     * constants and erases type arguments that the class files no longer show.
     */
    static final Map<String, Set<String>> MAY_USE = layerTable();

    private static Map<String, Set<String>> layerTable() {
        Map<String, Set<String>> table = new LinkedHashMap<>();
        table.put("dev.ratelimit", Set.of());
        table.put("dev.ratelimit.net", Set.of());
        table.put("dev.ratelimit.internal", Set.of("dev.ratelimit"));
        table.put("dev.ratelimit.local", Set.of("dev.ratelimit", "dev.ratelimit.internal"));
        table.put("dev.ratelimit.valkey.connection", Set.of("dev.ratelimit", "dev.ratelimit.internal"));
        table.put("dev.ratelimit.valkey.script", Set.of("dev.ratelimit", "dev.ratelimit.internal"));
        table.put("dev.ratelimit.valkey.lease", Set.of("dev.ratelimit", "dev.ratelimit.internal",
                "dev.ratelimit.valkey.script"));
        table.put("dev.ratelimit.valkey", Set.of("dev.ratelimit", "dev.ratelimit.internal",
                "dev.ratelimit.valkey.connection", "dev.ratelimit.valkey.script", "dev.ratelimit.valkey.lease"));
        table.put("dev.ratelimit.metrics", Set.of("dev.ratelimit", "dev.ratelimit.internal"));
        table.put("dev.ratelimit.resilient", Set.of("dev.ratelimit", "dev.ratelimit.internal", "dev.ratelimit.local",
                "dev.ratelimit.valkey"));
        table.put("dev.ratelimit.config", Set.of("dev.ratelimit", "dev.ratelimit.net", "dev.ratelimit.internal",
                "dev.ratelimit.local", "dev.ratelimit.valkey", "dev.ratelimit.resilient"));
        table.put("dev.ratelimit.servlet", Set.copyOf(table.keySet()));
        return Collections.unmodifiableMap(table);
    }

    /**
     * Each library in the one room that adapts it, by package prefix: the Servlet API, MicroProfile
     * Config, and Jedis with what it brings (commons-pool, Gson, org.json).
     */
    static final Map<String, List<String>> ROOMS = Map.of(
            "dev.ratelimit.servlet", List.of("jakarta.servlet"),
            "dev.ratelimit.config", List.of("org.eclipse.microprofile"),
            "dev.ratelimit.valkey..", List.of("redis.clients", "org.apache.commons.pool2", "com.google.gson", "org.json"));

    /**
     * Whether a package is in a room: the room's package, or one under it for a room named with
     * ArchUnit's {@code ..} (Jedis is the Valkey limiter's and its sub-packages').
     */
    static boolean inRoom(String room, String packageName) {
        if (room.endsWith("..")) {
            String top = room.substring(0, room.length() - 2);
            return packageName.equals(top) || packageName.startsWith(top + ".");
        }
        return room.equals(packageName);
    }

    /** {@link #MAY_USE} as an ArchUnit rule over the class files, one layer per package. */
    static ArchRule layers() {
        LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers();
        for (String name : MAY_USE.keySet()) {
            layers = layers.layer(name).definedBy(name);
        }
        for (Map.Entry<String, Set<String>> layer : MAY_USE.entrySet()) {
            layers = layer.getValue().isEmpty() ? layers.whereLayer(layer.getKey()).mayNotAccessAnyLayer()
                    : layers.whereLayer(layer.getKey()).mayOnlyAccessLayers(layer.getValue().toArray(String[]::new));
        }
        return layers;
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

    /** Servlet, Jedis and MicroProfile Config each stay in the one room that adapts them ({@link #ROOMS}). */
    static ArchRule librariesInTheirRooms() {
        return CompositeArchRule.of(ROOMS.entrySet().stream().map(room -> (ArchRule) noClasses()
                .that().resideOutsideOfPackage(room.getKey()).should().dependOnClassesThat()
                .resideInAnyPackage(room.getValue().stream().map(library -> library + "..").toArray(String[]::new)))
                .toList());
    }

    @Test
    void eachLayerUsesOnlyTheLayersBelowIt() {
        layers().check(MAIN);
    }

    /**
     * A package outside the table would be outside every layer: ArchUnit checks nothing about a
     * dependency on it, nor its own (a new package, or a sub-package of an internal one).
     */
    @Test
    void everyPackageIsALayer() {
        Set<String> packages = MAIN.stream().map(JavaClass::getPackageName).collect(Collectors.toCollection(TreeSet::new));
        assertThat(packages).as("the packages of the JAR, each a layer of MAY_USE")
                .containsExactlyInAnyOrderElementsOf(MAY_USE.keySet());
    }

    @Test
    void noPackageDependsOnItselfThroughAnother() {
        noPackageCycles().check(MAIN);
    }

    @Test
    void servletJedisAndMicroProfileConfigStayInTheirRooms() {
        librariesInTheirRooms().check(MAIN);
    }

    /**
     * Every package of the JAR has a row in CONTRIBUTING.md's Layout table, marked internal or listing
     * its public types; the public types of the others (nested ones as {@code Outer.Inner}) are
     * exactly that list: a new package or public type is a decision, made by editing the table.
     * One row per package: of two, the last would silently replace the first's list.
     */
    @Test
    void thePublicSurfaceIsTheReadmesList() {
        String readme = read(LAYOUT);
        assertThat(layoutRows(readme).map(cells -> cells[1].trim())).as("packages with a row in CONTRIBUTING.md's tables")
                .doesNotHaveDuplicates();
        Set<String> packages = MAIN.stream().map(JavaClass::getPackageName).collect(Collectors.toCollection(TreeSet::new));
        assertThat(documentedPackages(readme)).as("packages in CONTRIBUTING.md's Layout table").isEqualTo(packages);
        Map<String, Set<String>> documented = documentedPublicTypes(readme);
        assertThat(publicTypes(MAIN, documented.keySet())).as("public types of the API packages")
                .isEqualTo(documented);
    }

    /** Every package CONTRIBUTING.md's Layout table has a row for. */
    static Set<String> documentedPackages(String readme) {
        return layoutRows(readme).map(cells -> cells[1].trim().replace("`", ""))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** Package name to the public types CONTRIBUTING.md's Layout table lists for it (internal ones left out). */
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

    /**
     * Whether code outside the package can name the type: public, or a nested type that is public
     * or protected (a protected one is visible to every subclass), in types visible themselves.
     */
    static boolean isVisibleOutside(JavaClass javaClass) {
        for (JavaClass c = javaClass; c != null; c = c.getEnclosingClass().orElse(null)) {
            boolean visible = c.getModifiers().contains(JavaModifier.PUBLIC)
                    || c.isNestedClass() && c.getModifiers().contains(JavaModifier.PROTECTED);
            if (!visible || c.isAnonymousClass() || c.isLocalClass()) {
                return false;
            }
        }
        return true;
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
