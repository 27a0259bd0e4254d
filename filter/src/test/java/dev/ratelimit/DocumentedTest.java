package dev.ratelimit;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.spi.ToolProvider;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every public type and member of the main sources has a Javadoc comment: the JDK's own doclint
 * (its "missing" group, for public and protected elements) is run over them, and any
 * "no comment" it reports fails. A compact record constructor's components are described by the
 * record's {@code @param} tags, so doclint's "no @param" there is not counted. What doclint lets
 * through (a default constructor, a record component without its {@code @param}, an empty
 * comment) is {@link DocGaps}'s.
 */
class DocumentedTest {

    @Test
    void everyPublicTypeAndMemberHasAJavadocComment() throws IOException {
        List<String> undocumented = doclintMissing(ArchitectureTest.SOURCES).stream()
                .filter(message -> message.contains("no comment"))
                .toList();
        assertThat(undocumented).as("public types and members without a Javadoc comment").isEmpty();
    }

    /** What doclint does not report: default constructors, record components, empty comments ({@link DocGaps}). */
    @Test
    void noPublicMemberIsLeftWithNothingSaid() throws IOException {
        assertThat(DocGaps.of(ArchitectureTest.SOURCES, classPath()))
                .as("public elements whose Javadoc says nothing, which doclint lets through").isEmpty();
    }

    /** Doclint's "missing" warnings for public and protected elements, as javac prints them. */
    static List<String> doclintMissing(Path sourceRoot) throws IOException {
        List<String> sources;
        try (Stream<Path> files = Files.walk(sourceRoot)) {
            sources = files.filter(file -> file.toString().endsWith(".java"))
                    .map(Path::toString).toList();
        }
        List<String> arguments = new ArrayList<>(List.of("-Xdoclint:missing/protected",
                // javac stops reporting at 100 warnings unless told otherwise.
                "-Xmaxwarns", "100000", "-proc:none", "-implicit:none", "-encoding", "UTF-8",
                "-classpath", classPath(), "-d", Files.createDirectories(Path.of("target/doclint-classes")).toString()));
        arguments.addAll(sources);
        StringWriter output = new StringWriter();
        // The JDK's javac through java.util.spi.ToolProvider: no module of ours has to read java.compiler.
        ToolProvider javac = ToolProvider.findFirst("javac").orElseThrow();
        int status;
        try (PrintWriter out = new PrintWriter(output)) {
            status = javac.run(out, out, arguments.toArray(String[]::new));
        }
        assertThat(status).as("the main sources compile for doclint:%n%s", output).isZero();
        return output.toString().lines().filter(line -> line.contains(": warning: ")).toList();
    }

    /** The test's own class path (and module path, if any): what the main sources compile against. */
    private static String classPath() {
        return Stream.of(System.getProperty("jdk.module.path"), System.getProperty("java.class.path"))
                .filter(path -> path != null && !path.isEmpty())
                .collect(Collectors.joining(File.pathSeparator));
    }
}
