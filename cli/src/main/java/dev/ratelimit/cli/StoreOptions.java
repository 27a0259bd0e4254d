package dev.ratelimit.cli;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/** The options of every command that talks to Valkey: where the settings are, and the output's form. */
final class StoreOptions {

    @Option(names = {"-s", "--settings"}, paramLabel = "FILE",
            description = "a microprofile-config.properties file (environment variables override it, as in the"
                    + " container); without it, environment variables and system properties alone")
    Path settings;

    @Option(names = "--json", description = "one JSON object instead of text")
    boolean json;

    @Option(names = "--plan", paramLabel = "PLAN", description = "decide with this plan's limits (a rule with plans)")
    String plan;
}
