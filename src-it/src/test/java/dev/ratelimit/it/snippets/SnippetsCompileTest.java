package dev.ratelimit.it.snippets;

import org.junit.jupiter.api.Test;

import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every Java example a reader is shown compiles against today's API: the {@code <pre>{@code …}}
 * blocks of the published modules' Javadoc, and the {@code ```java} blocks of the README, the
 * changelog and {@code docs/}. Each is compiled in a class extending {@link SnippetContext} (the
 * names the examples take as given); statements go in a method, type declarations become member
 * types; a body written {@code { ... }} is one the example leaves out.
 */
class SnippetsCompileTest {

    private static final Path ROOT = Path.of("..");
    private static final Pattern JAVADOC = Pattern.compile("<pre>\\{@code\\n(.*?)\\n\\s*\\*\\s*}</pre>", Pattern.DOTALL);
    private static final Pattern MARKDOWN = Pattern.compile("```java\\n(.*?)\\n```", Pattern.DOTALL);
    private static final Pattern DECLARATION = Pattern.compile(
            "^(@\\w+[^\\n]*\\n)*(public |abstract |final )*(class|interface|record|enum) ", Pattern.MULTILINE);
    private static final String IMPORTS = """
            import dev.ratelimit.*;
            import dev.ratelimit.local.*;
            import dev.ratelimit.resilient.*;
            import dev.ratelimit.servlet.*;
            import dev.ratelimit.valkey.*;
            import dev.ratelimit.jakarta.*;
            import java.time.*;
            import java.util.List;
            import java.util.concurrent.TimeUnit;
            import java.util.Map;
            import java.util.OptionalLong;
            import jakarta.servlet.*;
            import jakarta.servlet.annotation.*;
            import jakarta.ws.rs.*;
            import jakarta.ws.rs.core.Response;
            import jakarta.enterprise.context.*;
            import io.micrometer.core.instrument.Meter;
            import io.micrometer.core.instrument.config.MeterFilter;
            import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
            """;

    /** One example and where a reader finds it. */
    record Snippet(String where, String code) {
    }

    @Test
    void everyExampleCompiles() throws IOException {
        List<Snippet> snippets = new ArrayList<>();
        for (String module : List.of("filter", "jakarta", "micrometer")) {
            try (Stream<Path> files = Files.walk(ROOT.resolve(module).resolve("src/main/java"))) {
                files.filter(p -> p.toString().endsWith(".java")).sorted().forEach(p -> snippets.addAll(javadoc(p)));
            }
        }
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        if (Files.exists(ROOT.resolve("CHANGELOG.md"))) {
            pages.add(ROOT.resolve("CHANGELOG.md"));
        }
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        pages.forEach(p -> snippets.addAll(markdown(p)));
        assertThat(snippets).as("examples found").hasSizeGreaterThanOrEqualTo(8);

        List<String> failures = new ArrayList<>();
        for (int i = 0; i < snippets.size(); i++) {
            String errors = compile("Snippet" + i, snippets.get(i).code());
            if (!errors.isEmpty()) {
                failures.add(snippets.get(i).where() + ":\n" + snippets.get(i).code() + "\n" + errors);
            }
        }
        assertThat(failures).as("examples that do not compile").isEmpty();
    }

    /** A broken example is caught: the test can fail. */
    @Test
    void anExampleThatDoesNotCompileIsCaught() {
        assertThat(compile("Broken", "Rule r = Rule.fixedWindow(\"a\", 5);")).contains("fixedWindow");
        assertThat(compile("Unknown", "limiter.acquireAll(notDeclared);")).contains("notDeclared");
        assertThat(compile("Fine", "Decision d = limiter.acquire(Rule.fixedWindow(\"a\", 5, Duration.ofMinutes(1)), \"k\");"))
                .isEmpty();
    }

    private static List<Snippet> javadoc(Path file) {
        String text = read(file);
        List<Snippet> found = new ArrayList<>();
        Matcher m = JAVADOC.matcher(text);
        while (m.find()) {
            String code = m.group(1).lines().map(l -> l.replaceFirst("^\\s*\\* ?", "")).reduce("", (a, b) -> a + b + "\n");
            found.add(new Snippet(ROOT.relativize(file) + " line " + line(text, m.start()), code.replace("&#64;", "@")));
        }
        return found;
    }

    private static List<Snippet> markdown(Path file) {
        String text = read(file);
        List<Snippet> found = new ArrayList<>();
        Matcher m = MARKDOWN.matcher(text);
        while (m.find()) {
            found.add(new Snippet(ROOT.relativize(file) + " line " + line(text, m.start()), m.group(1)));
        }
        return found;
    }

    /** The compiler's errors for one example, empty when it compiles. */
    static String compile(String name, String code) {
        String body = code.replace("{ ... }", "{ throw new UnsupportedOperationException(); }");
        String source = "package snippets;\n" + IMPORTS + "@SuppressWarnings(\"unused\")\nclass " + name
                + " extends dev.ratelimit.it.snippets.SnippetContext {\n"
                + (DECLARATION.matcher(body).find() ? body
                : "Object run() throws Exception {\nif (true) {\n" + body + "\n}\nreturn null;\n}\n") + "}\n";
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///snippets/" + name + ".java"),
                JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
                return source;
            }
        };
        Path out;
        try {
            out = Files.createTempDirectory("snippet");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        boolean ok = javac.getTask(null, null, diagnostics, List.of("-proc:none", "-d", out.toString(),
                "-classpath", System.getProperty("java.class.path")), null, List.of(file)).call();
        StringBuilder errors = new StringBuilder();
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR) {
                errors.append("  line ").append(d.getLineNumber()).append(": ").append(d.getMessage(null)).append('\n');
            }
        }
        return ok ? "" : errors.length() > 0 ? errors.toString() : "did not compile";
    }

    private static int line(String text, int offset) {
        return (int) text.substring(0, offset).chars().filter(c -> c == '\n').count() + 1;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
