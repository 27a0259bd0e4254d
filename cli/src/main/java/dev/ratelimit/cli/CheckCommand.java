package dev.ratelimit.cli;

import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.valkey.ValkeySettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code ratelimit check FILE}: the settings read and validated exactly as the filter does at
 * deployment. Every problem, each naming the property and its value, and status 1; or the rules
 * as understood, and status 0.
 */
@Command(name = "check", mixinStandardHelpOptions = true,
        description = "Checks a settings file (environment variables override it, as in the container).")
final class CheckCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "a microprofile-config.properties file")
    private Path file;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Optional<FilterSettings> read = SettingsFile.settings(file, err);
        if (read.isEmpty()) {
            return 1;
        }
        FilterSettings settings = read.get();
        if (!settings.enabled()) {
            out.println(file + ": valid; rate limiting is off (ratelimit.enabled=false)");
            return 0;
        }
        out.println(file + ": valid; " + settings.rules().size() + " rule(s), Valkey " + valkey(settings));
        for (RuleSettings rule : settings.rules()) {
            out.println(RuleDescription.of(rule));
        }
        return 0;
    }

    /**
     * The Valkey the filter would use, as its own logs say it: a cluster and a Sentinel-managed
     * primary named as such (the URL alone would misstate where the filter connects), and never
     * a password.
     */
    private static String valkey(FilterSettings settings) {
        if (settings.valkey().isEmpty()) {
            return "(none: the in-process limiter)";
        }
        ValkeySettings valkey = settings.valkey().get();
        String url = ValkeySettings.redact(valkey.url());
        return valkey.sentinel()
                .map(s -> "Sentinel primary '" + s.master() + "' via " + String.join(",", s.nodes()) + " (" + url + ")")
                .orElse(valkey.cluster() ? "Cluster at " + url : url);
    }
}
