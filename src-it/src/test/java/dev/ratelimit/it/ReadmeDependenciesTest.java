package dev.ratelimit.it;

import dev.ratelimit.it.DeclaredDependencies.Dependency;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's dependency set for a plain servlet container, tested as written and cheaply:
 * the example WAR (deployed on Jetty by {@link ExampleWarTest} and on Tomcat by
 * {@link TomcatExampleTest}) declares exactly that set, and its {@code WEB-INF/lib} holds it,
 * with a final MicroProfile Config API and one SLF4J provider. No Valkey, no server: what could
 * drift here is text.
 */
class ReadmeDependenciesTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** The README's snippet: a fenced XML block between these two comments. */
    private static final Pattern SNIPPET = Pattern.compile(
            "<!-- readme-dependencies -->\\s*```xml\\n(.*?)```\\s*<!-- /readme-dependencies -->", Pattern.DOTALL);

    /**
     * What the example WAR declares beyond the README's set, and why: its {@code /metrics}
     * (see the README's Metrics), the Servlet API it compiles against, which the container
     * provides, and its annotated methods' module and the Jakarta REST and CDI APIs (provided by the server).
     */
    private static final List<String> EXAMPLE_ONLY = List.of(
            "dev.ratelimit:ratelimit-micrometer",
            "io.micrometer:micrometer-registry-prometheus",
            "jakarta.servlet:jakarta.servlet-api",
            "dev.ratelimit:ratelimit-jakarta",
            "jakarta.ws.rs:jakarta.ws.rs-api",
            "jakarta.enterprise:jakarta.enterprise.cdi-api");

    /** The README's set for a MicroProfile server. */
    private static final Pattern MICROPROFILE_SNIPPET = Pattern.compile(
            "<!-- readme-dependencies-microprofile -->\\s*```xml\\n(.*?)```\\s*<!-- /readme-dependencies-microprofile -->",
            Pattern.DOTALL);

    /** A release version: digits and dots, nothing like -RC1, -M2, .Beta1 or -SNAPSHOT. */
    private static final Pattern FINAL_VERSION = Pattern.compile("\\d+(\\.\\d+)*(\\.Final)?");

    private static final String SLF4J_PROVIDER = "META-INF/services/org.slf4j.spi.SLF4JServiceProvider";

    @Test
    void theReadmeSnippetImportsOurBomAtTheProjectVersionAndNamesEachPart() throws Exception {
        DeclaredDependencies readme = readme();
        assertThat(readme.imports()).as("the README's BOM import")
                .containsExactly(new Dependency("dev.ratelimit", "ratelimit-bom", projectVersion(), "import"));
        assertThat(readme.dependencies()).extracting(Dependency::key).as("the README's set")
                .contains("dev.ratelimit:ratelimit-filter", "io.smallrye.config:smallrye-config",
                        "org.slf4j:slf4j-jdk14");
        assertThat(readme.dependencies()).extracting(Dependency::scope).as("all inside the WAR")
                .containsOnly("compile");
    }

    @Test
    void theReadmesPomIsAWholeWarProjectForJava17WithTheServletApiProvided() throws Exception {
        String pom = readmeBlock(SNIPPET);
        assertThat(pom).as("the quick start's pom.xml").contains("<packaging>war</packaging>")
                .contains("<maven.compiler.release>17</maven.compiler.release>").startsWith("<project ");
        assertThat(DeclaredDependencies.ofPom(pom, "README.md").dependencies()).as("what the container provides")
                .filteredOn(dependency -> dependency.scope().equals("provided"))
                .containsExactly(new Dependency("jakarta.servlet", "jakarta.servlet-api", "6.0.0", "provided"));
    }

    @Test
    void theBomPinsThePublishedModulesAtTheProjectVersion() throws Exception {
        // bom/ has no parent, so its versions are written out: they must follow the project's.
        DeclaredDependencies bom = DeclaredDependencies.ofSnippet(
                managed(Files.readString(ROOT.resolve("bom/pom.xml"))), "bom/pom.xml");
        assertThat(bom.dependencies()).containsExactly(
                new Dependency("dev.ratelimit", "ratelimit-filter", projectVersion(), "compile"),
                new Dependency("dev.ratelimit", "ratelimit-micrometer", projectVersion(), "compile"),
                new Dependency("dev.ratelimit", "ratelimit-jakarta", projectVersion(), "compile"));
    }

    @Test
    void theExampleWarDeclaresExactlyTheReadmeSet() throws Exception {
        DeclaredDependencies readme = readme();
        DeclaredDependencies pom = DeclaredDependencies.ofPom(ROOT.resolve("examples/webapp/pom.xml"));
        assertThat(pom.imports()).as("the example's BOM import").isEqualTo(readme.imports());
        List<Dependency> shared = pom.dependencies().stream()
                .filter(dependency -> !EXAMPLE_ONLY.contains(dependency.key())).toList();
        assertThat(shared).as("examples/webapp/pom.xml beside the README's snippet (beyond " + EXAMPLE_ONLY + ")")
                .containsExactlyElementsOf(readme.dependencies());
        assertThat(pom.dependencies()).extracting(Dependency::key).as("the example's own additions are declared")
                .containsAll(EXAMPLE_ONLY);
    }

    @Test
    void theExampleWarHoldsTheReadmeSetAFinalConfigApiAndOneSlf4jProvider() throws Exception {
        Path war = ExampleWar.war();
        assertThat(war).as("the example WAR (built by the examples/webapp module)").exists();
        Map<String, Boolean> libraries = libraries(war);
        for (Dependency dependency : readme().dependencies()) {
            assertThat(libraries).as("WEB-INF/lib of " + war).containsKey(dependency.jarName());
        }
        List<String> configApis = libraries.keySet().stream()
                .filter(name -> name.startsWith("microprofile-config-api-")).toList();
        assertThat(configApis).as("the MicroProfile Config API in WEB-INF/lib").hasSize(1);
        String configApi = configApis.get(0);
        assertThat(configApi.substring("microprofile-config-api-".length(), configApi.length() - ".jar".length()))
                .as("its version (no release candidate)").matches(FINAL_VERSION);
        List<String> providers = libraries.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).toList();
        assertThat(providers).as("JARs with an SLF4J 2 provider (none: the no-operation warning; two: SLF4J picks one)")
                .containsExactly(readme().dependencies().stream()
                        .filter(dependency -> dependency.key().equals("org.slf4j:slf4j-jdk14"))
                        .map(Dependency::jarName).findFirst().orElseThrow());
        assertThat(libraries.keySet()).as("the SLF4J API a 2.x provider needs (1.7 ignores it)")
                .anyMatch(name -> name.startsWith("slf4j-api-2."))
                .noneMatch(name -> name.startsWith("slf4j-api-1."));
    }

    /**
     * The README's MicroProfile set is its plain set less what the example's
     * {@code microprofile-server} profile leaves to the server: the WAR {@code run.sh} deploys.
     */
    @Test
    void theMicroProfileSetIsThePlainSetLessWhatTheServerBrings() throws Exception {
        String text = Files.readString(ROOT.resolve("docs/containers.md"));
        Matcher matcher = MICROPROFILE_SNIPPET.matcher(text);
        assertThat(matcher.find()).as("docs/containers.md's <!-- readme-dependencies-microprofile --> block").isTrue();
        DeclaredDependencies microprofile = DeclaredDependencies.ofSnippet(matcher.group(1), "docs/containers.md");
        String pom = Files.readString(ROOT.resolve("examples/webapp/pom.xml"));
        int profile = pom.indexOf("<id>microprofile-server</id>");
        assertThat(profile).as("the example's microprofile-server profile").isNotNegative();
        List<String> leftToTheServer = DeclaredDependencies.ofSnippet(
                        managed(pom.substring(profile, pom.indexOf("</profile>", profile))), "examples/webapp/pom.xml")
                .dependencies().stream().filter(dependency -> dependency.scope().equals("provided"))
                .map(Dependency::key).toList();
        assertThat(leftToTheServer).as("what the profile leaves to the server").containsExactly("io.smallrye.config:smallrye-config");
        DeclaredDependencies plain = readme();
        assertThat(microprofile.imports()).as("the BOM import").isEqualTo(plain.imports());
        assertThat(microprofile.dependencies()).as("the MicroProfile set").containsExactlyElementsOf(
                plain.dependencies().stream().filter(dependency -> !leftToTheServer.contains(dependency.key())).toList());
    }

    /** The README's set: what its quick start's {@code pom.xml} puts inside the WAR. */
    private static DeclaredDependencies readme() throws Exception {
        DeclaredDependencies pom = DeclaredDependencies.ofPom(readmeBlock(SNIPPET), "README.md");
        return new DeclaredDependencies(pom.imports(),
                pom.dependencies().stream().filter(dependency -> !dependency.scope().equals("provided")).toList());
    }

    private static String readmeBlock(Pattern marked) throws IOException {
        String text = Files.readString(ROOT.resolve("README.md"));
        Matcher matcher = marked.matcher(text);
        assertThat(matcher.find()).as("the README's " + marked + " block").isTrue();
        String block = matcher.group(1);
        assertThat(matcher.find()).as("only one such block").isFalse();
        return block;
    }

    /** The version of the build, from the parent POM (every module has it). */
    private static String projectVersion() throws IOException {
        Matcher version = Pattern.compile("<artifactId>ratelimit-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(ROOT.resolve("pom.xml")));
        assertThat(version.find()).as("the parent POM's version").isTrue();
        return version.group(1);
    }

    /** A POM's {@code <dependencyManagement>} body, read as a snippet's {@code <dependencies>}. */
    private static String managed(String pom) {
        int start = pom.indexOf("<dependencyManagement>");
        int end = pom.indexOf("</dependencyManagement>");
        assertThat(start).as("a <dependencyManagement>").isNotNegative();
        return pom.substring(start + "<dependencyManagement>".length(), end);
    }

    /** Each JAR in the WAR's WEB-INF/lib, and whether it holds an SLF4J 2 provider. */
    private static Map<String, Boolean> libraries(Path war) throws IOException {
        Map<String, Boolean> libraries = new TreeMap<>();
        try (ZipInputStream zip = new ZipInputStream(Files.newInputStream(war))) {
            for (ZipEntry entry; (entry = zip.getNextEntry()) != null; ) {
                String name = entry.getName();
                if (name.startsWith("WEB-INF/lib/") && name.endsWith(".jar")) {
                    libraries.put(name.substring("WEB-INF/lib/".length()),
                            holds(new ByteArrayInputStream(zip.readAllBytes()), SLF4J_PROVIDER));
                }
            }
        }
        return libraries;
    }

    private static boolean holds(InputStream jar, String path) throws IOException {
        try (ZipInputStream zip = new ZipInputStream(jar)) {
            for (ZipEntry entry; (entry = zip.getNextEntry()) != null; ) {
                if (entry.getName().equals(path)) {
                    return true;
                }
            }
        }
        return false;
    }
}
