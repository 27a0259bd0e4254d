package dev.ratelimit.cli;

import picocli.CommandLine.Parameters;

import java.util.List;

/** The arguments naming one key of a rule: {@code RULE KEY-VALUE...}. */
final class KeyArguments {

    @Parameters(index = "0", paramLabel = "RULE", description = "the rule's name")
    String rule;

    @Parameters(index = "1..*", paramLabel = "KEY-VALUE", arity = "0..*",
            description = "one value per part of the rule's key (none for global), e.g. a user name, an address, a"
                    + " path as explain reads PATH (as sent, or decoded)")
    List<String> values = List.of();
}
