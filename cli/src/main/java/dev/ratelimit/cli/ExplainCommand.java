package dev.ratelimit.cli;

import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.RequestPath;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code ratelimit explain FILE METHOD PATH [options]}: what the filter, with these settings,
 * does with one request: which rules count it, the client address each sees, the key each
 * builds, the Valkey key it lives under and the plan it gets; for the others, why not. Decided
 * by the filter's own code; status 0 when explained, 1 for unreadable or invalid settings, 2
 * for bad usage, which includes a PATH the container answers 400 (no filter sees it).
 */
@Command(name = "explain", mixinStandardHelpOptions = true,
        description = "Explains which rules a request falls under, its client address, keys, Valkey keys and plans.")
final class ExplainCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "a microprofile-config.properties file")
    private Path file;

    @Parameters(index = "1", paramLabel = "METHOD", description = "the HTTP method, e.g. GET")
    private String method;

    @Parameters(index = "2", paramLabel = "PATH",
            description = "the path as sent or as an access log has it, e.g. /api/items;jsessionid=1?page=2, read as the"
                    + " container reads it (path parameters dropped, %%nn decoded, . and .. resolved); within the"
                    + " application, unless --context-path. One the container answers 400 is refused (status 2)")
    private String path;

    @Option(names = "--context-path", paramLabel = "PATH", defaultValue = "",
            description = "the application's context path, e.g. /shop: PATH is then the whole path, as an access log"
                    + " has it, and must be under it (default: none, PATH is within the application)")
    private String contextPath;

    @Option(names = {"-H", "--header"}, paramLabel = "NAME:VALUE", description = "a request header (repeatable)")
    private List<String> headers = new ArrayList<>();

    @Option(names = "--param", paramLabel = "NAME=VALUE", description = "a request parameter (repeatable)")
    private List<String> params = new ArrayList<>();

    @Option(names = "--attribute", paramLabel = "NAME=VALUE",
            description = "a request attribute the application sets, e.g. for attribute plans (repeatable)")
    private List<String> attributes = new ArrayList<>();

    @Option(names = "--principal", paramLabel = "NAME", description = "the authenticated user")
    private String principal;

    @Option(names = "--role", paramLabel = "ROLE", description = "a role of the authenticated user (repeatable)")
    private List<String> roles = new ArrayList<>();

    @Option(names = "--remote-addr", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "the peer's address, a client's or a proxy's (default: ${DEFAULT-VALUE})")
    private String remoteAddr;

    @Option(names = "--json", description = "one JSON object instead of lines")
    private boolean json;

    @Override
    public Integer call() {
        ArgumentRequest request = request();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Optional<FilterSettings> read = SettingsFile.settings(file, err);
        if (read.isEmpty()) {
            return 1;
        }
        FilterSettings settings = read.get();
        Explanation explained = Explanation.of(settings, request);
        if (json) {
            out.println(ExplanationJson.of(explained));
        } else {
            ExplanationText.print(explained, out);
        }
        return 0;
    }

    /** The request the arguments describe; a malformed argument is bad usage (status 2). */
    private ArgumentRequest request() {
        if (!path.startsWith("/")) {
            throw usage("PATH must start with '/' (the path within the application): '" + path + "'");
        }
        String within = withinContext(canonical());
        if (method.isEmpty() || !method.chars().allMatch(c -> c > ' ' && c < 127)) {
            throw usage("METHOD must be a token, e.g. GET: '" + method + "'");
        }
        if (!roles.isEmpty() && principal == null) {
            throw usage("--role needs --principal: a request nobody authenticated has no roles");
        }
        int query = path.indexOf('?');
        List<Map.Entry<String, String>> parameters = new ArrayList<>(
                query < 0 ? List.of() : ArgumentRequest.query(path.substring(query + 1)));
        for (String param : params) {
            parameters.add(pair("--param", param, '='));
        }
        List<Map.Entry<String, String>> headerLines = new ArrayList<>();
        for (String header : headers) {
            Map.Entry<String, String> line = pair("--header", header, ':');
            headerLines.add(Map.entry(line.getKey(), line.getValue().strip()));
        }
        Map<String, String> attributeValues = new LinkedHashMap<>();
        for (String attribute : attributes) {
            Map.Entry<String, String> pair = pair("--attribute", attribute, '=');
            attributeValues.put(pair.getKey(), pair.getValue());
        }
        return new ArgumentRequest(method, within, headerLines, parameters, principal, new LinkedHashSet<>(roles),
                attributeValues, remoteAddr);
    }

    /** PATH as the container reads it; one it answers 400 is bad usage: no filter would see it. */
    private String canonical() {
        try {
            return RequestPath.canonical(path);
        } catch (IllegalArgumentException e) {
            throw usage("PATH " + e.getMessage());
        }
    }

    /**
     * The path within the application: what follows the context path, which the container
     * matches on the path it read (so a ';jsessionid' or a '..' in it is read first).
     */
    private String withinContext(String read) {
        if (contextPath.isEmpty() || contextPath.equals("/")) {
            return read;
        }
        if (!contextPath.startsWith("/") || contextPath.endsWith("/")) {
            throw usage("--context-path must start with '/' and not end with one, as getContextPath() gives it, e.g."
                    + " /shop: '" + contextPath + "'");
        }
        if (read.equals(contextPath)) {
            throw usage("PATH '" + path + "' is the context path itself: the container redirects it to " + contextPath
                    + "/ and no filter sees it");
        }
        if (!read.startsWith(contextPath + "/")) {
            throw usage("PATH '" + path + "' (read as " + read + ") is not under the context path " + contextPath);
        }
        return read.substring(contextPath.length());
    }

    /** {@code name<separator>value}, the name not empty. */
    private Map.Entry<String, String> pair(String option, String text, char separator) {
        int at = text.indexOf(separator);
        if (at <= 0) {
            throw usage(option + " must be NAME" + separator + "VALUE: '" + text + "'");
        }
        return Map.entry(text.substring(0, at).strip(), text.substring(at + 1));
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }
}
