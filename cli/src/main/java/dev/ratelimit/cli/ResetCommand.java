package dev.ratelimit.cli;

import dev.ratelimit.config.RuleSettings;
import dev.ratelimit.valkey.KeyState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.Map;

/**
 * {@code ratelimit reset RULE KEY-VALUE...}: forgets a key's state, so that its next request has
 * the whole quota, and says what it removed.
 */
@Command(name = "reset", mixinStandardHelpOptions = true,
        description = "Forgets a key's state (unblocks it) and says what was removed.")
final class ResetCommand extends StoreCommand {

    @Mixin
    private KeyArguments key;

    @Override
    int run(Store store) {
        RuleSettings settings = store.rule(key.rule);
        KeyState removed = store.inspector().reset(decidingRule(settings),
                store.key(settings, key.values), settings.cost());
        if (options.json) {
            out().println(StateJson.write(Map.of("removed", StateJson.of(removed))));
        } else if (removed.exists()) {
            out().println("removed " + removed.stateKey() + "; its state just before:");
            out().println(removed.describe());
        } else {
            out().println("nothing to remove: " + removed.stateKey() + " holds no state (the key has its whole quota)");
        }
        return 0;
    }
}
