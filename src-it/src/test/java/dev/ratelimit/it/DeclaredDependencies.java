package dev.ratelimit.it;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The dependencies a POM (or the README's POM snippet) declares, each with the version it gets:
 * its own, or for one of ours without a version, the version of the BOM it imports. Only the
 * top level is read (a profile's dependencies are not what the snippet shows), and no property
 * is expanded: the README's snippet has none, so the POM it is compared with may have none either.
 *
 * @param imports      the BOMs imported in {@code <dependencyManagement>}
 * @param dependencies the {@code <dependencies>}, in the order declared
 */
record DeclaredDependencies(List<Dependency> imports, List<Dependency> dependencies) {

    /** Our groupId: a dependency of ours may leave its version to our BOM. */
    static final String OURS = "dev.ratelimit";

    /**
     * One declared dependency.
     *
     * @param scope its declared scope, {@code compile} when none is declared
     */
    record Dependency(String groupId, String artifactId, String version, String scope) {

        /** groupId:artifactId, what a version is chosen for. */
        String key() {
            return groupId + ":" + artifactId;
        }

        /** The file name Maven gives its JAR in {@code WEB-INF/lib}. */
        String jarName() {
            return artifactId + "-" + version + ".jar";
        }

        @Override
        public String toString() {
            return key() + ":" + version + ("compile".equals(scope) ? "" : " (" + scope + ")");
        }
    }

    /**
     * Reads a POM file.
     *
     * @param pom the file
     * @return what its top level declares
     * @throws Exception if it cannot be read or parsed
     */
    static DeclaredDependencies ofPom(Path pom) throws Exception {
        return of(Files.readString(pom), pom.toString());
    }

    /**
     * Reads a whole POM given as text (the README's quick start).
     *
     * @param pom   the POM's XML
     * @param where what to name in a failure
     * @return what its top level declares
     * @throws Exception if it does not parse
     */
    static DeclaredDependencies ofPom(String pom, String where) throws Exception {
        return of(pom, where);
    }

    /**
     * Reads the XML of a POM snippet ({@code <dependencyManagement>} and {@code <dependencies>},
     * as the README shows them) by wrapping it in a {@code <project>}.
     *
     * @param snippet the XML
     * @param where   what to name in a failure
     * @return what it declares
     * @throws Exception if it does not parse
     */
    static DeclaredDependencies ofSnippet(String snippet, String where) throws Exception {
        return of("<project>" + snippet + "</project>", where);
    }

    private static DeclaredDependencies of(String xml, String where) throws Exception {
        Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        Element project = document.getDocumentElement();
        List<Dependency> imports = new ArrayList<>();
        Element management = child(project, "dependencyManagement");
        if (management != null) {
            for (Dependency managed : list(child(management, "dependencies"), null, where)) {
                if ("import".equals(managed.scope())) {
                    imports.add(managed);
                }
            }
        }
        String bomVersion = imports.stream().filter(bom -> bom.groupId().equals(OURS))
                .map(Dependency::version).findFirst().orElse(null);
        return new DeclaredDependencies(List.copyOf(imports),
                list(child(project, "dependencies"), bomVersion, where));
    }

    private static List<Dependency> list(Element dependencies, String bomVersion, String where) {
        List<Dependency> list = new ArrayList<>();
        if (dependencies == null) {
            return list;
        }
        for (Node node = dependencies.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element dependency && dependency.getTagName().equals("dependency")) {
                String groupId = text(dependency, "groupId");
                String artifactId = text(dependency, "artifactId");
                String version = text(dependency, "version");
                if (version == null && OURS.equals(groupId)) {
                    version = bomVersion;
                }
                if (version == null || version.contains("${")) {
                    throw new AssertionError(where + ": " + groupId + ":" + artifactId
                            + " has no literal version (version=" + version + ") and no BOM of ours gives it one");
                }
                String scope = text(dependency, "scope");
                list.add(new Dependency(groupId, artifactId, version, scope == null ? "compile" : scope));
            }
        }
        return list;
    }

    private static Element child(Element parent, String name) {
        for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
            if (node instanceof Element element && element.getTagName().equals(name)) {
                return element;
            }
        }
        return null;
    }

    private static String text(Element parent, String name) {
        Element element = child(parent, name);
        return element == null ? null : element.getTextContent().trim();
    }
}
