package dev.ratelimit.cli;

import dev.ratelimit.config.FilterSettings;
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
 * for bad usage.
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
            description = "the path within the application (no context path), e.g. /api/items?page=2")
    private String path;

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
        return new ArgumentRequest(method, query < 0 ? path : path.substring(0, query), headerLines, parameters,
                principal, new LinkedHashSet<>(roles), attributeValues, remoteAddr);
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
