package dev.ratelimit.cli;

import dev.ratelimit.Rule;
import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.config.SettingsReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
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
        FilterSettings settings;
        try {
            settings = SettingsReader.read(SettingsFile.read(file));
        } catch (InvalidSettingsException e) {
            err.println(e.getMessage());
            return 1;
        } catch (RuntimeException e) {
            err.println("ratelimit: " + e.getMessage());
            return 1;
        }
        if (!settings.enabled()) {
            out.println(file + ": valid; rate limiting is off (ratelimit.enabled=false)");
            return 0;
        }
        out.println(file + ": valid; " + settings.rules().size() + " rule(s), Valkey "
                + settings.valkeyUrl().map(CheckCommand::withoutPassword).orElse("(none: the in-process limiter)"));
        for (RuleSettings rule : settings.rules()) {
            out.println(describe(rule));
        }
        return 0;
    }

    /** One rule as the filter understood it: what it matches, its key, its limits, its policy. */
    private static String describe(RuleSettings settings) {
        Rule rule = settings.rule();
        StringBuilder line = new StringBuilder("  ").append(rule.name()).append(": ")
                .append(String.join(",", settings.methods().isEmpty() ? List.of("any method") : settings.methods()))
                .append(' ').append(settings.match()).append(", key ").append(settings.key())
                .append(", ").append(limits(rule)).append(", on-failure ").append(settings.onFailure().id());
        for (Map.Entry<String, Rule> plan : settings.plans().entrySet()) {
            line.append("; plan ").append(plan.getKey()).append(": ").append(limits(plan.getValue()));
        }
        return line.toString();
    }

    /** The URL as it may be shown: its password, if any, replaced by {@code ***}. */
    static String withoutPassword(String url) {
        return url.replaceFirst("^([a-z]+://[^:/@]*:)[^@/]*@", "$1***@");
    }

    private static String limits(Rule rule) {
        return rule.algorithm().id() + " " + rule.limit() + " per " + rule.window()
                + (rule.burst() != rule.limit() ? " (burst " + rule.burst() + ")" : "");
    }
}
