package dev.ratelimit.cli;

import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.valkey.KeyState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;


/**
 * {@code ratelimit inspect RULE KEY-VALUE...}: a key's state in words, consuming nothing: what a
 * request would get now, when the next unit comes, when the quota is full again, the raw state
 * and its TTL.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Shows a key's state as the limiter would decide it now, consuming nothing.")
final class InspectCommand extends StoreCommand {

    @Mixin
    private KeyArguments key;

    @Override
    int run(Store store) {
        RuleSettings settings = store.rule(key.rule);
        KeyState state = store.inspector().inspect(decidingRule(settings),
                store.key(settings, key.values), settings.cost());
        out().println(options.json ? StateJson.write(StateJson.of(state)) : state.describe());
        if (!options.json && options.plan == null && !settings.plans().isEmpty()) {
            // The state is one per key whatever the plan; the verdict and limit depend on it.
            out().println("  (decided with the rule's own limit; its plans "
                    + String.join(", ", settings.plans().keySet().stream().sorted().toList())
                    + " decide with theirs: --plan P)");
        }
        return 0;
    }
}
