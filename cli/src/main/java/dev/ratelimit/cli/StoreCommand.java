package dev.ratelimit.cli;

import dev.ratelimit.RateLimitException;
import dev.ratelimit.Rule;
import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.config.RuleSettings;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * A command that talks to Valkey: opens the settings and the store, runs, closes, and turns
 * every failure into one line on standard error and status 1, never a stack trace.
 */
abstract class StoreCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    /** Where the settings are, the output's form, the plan: every such command's. */
    @Mixin
    StoreOptions options;

    /** The command's work; its exit status. */
    abstract int run(Store store);

    /**
     * Checks what picocli does not (a number's range) before anything is opened.
     *
     * @throws picocli.CommandLine.ParameterException for bad usage, status 2
     */
    void checkUsage() {
    }

    /** The command as picocli sees it. */
    final CommandSpec spec() {
        return spec;
    }

    /** The rule a request is decided by: the plan asked for with {@code --plan}, or the rule's own. */
    final Rule decidingRule(RuleSettings rule) {
        return Store.planRule(rule, Optional.ofNullable(options.plan));
    }

    /** Standard output. */
    final PrintWriter out() {
        return spec.commandLine().getOut();
    }

    @Override
    public final Integer call() {
        // Outside the try, which turns every failure into status 1: picocli answers this one 2.
        checkUsage();
        PrintWriter err = spec.commandLine().getErr();
        try (Store store = Store.open(options)) {
            return run(store);
        } catch (InvalidSettingsException e) {
            err.println(e.getMessage());
        } catch (Store.Problem e) {
            err.println("ratelimit " + spec.name() + ": " + e.getMessage());
        } catch (IllegalArgumentException e) {
            // An unreadable settings file: its message names the file; the type says nothing more.
            err.println("ratelimit " + spec.name() + ": " + e.getMessage());
        } catch (RateLimitException e) {
            err.println("ratelimit " + spec.name() + ": Valkey could not be asked: " + e.getMessage());
        } catch (RuntimeException e) {
            err.println("ratelimit " + spec.name() + ": " + e);
        } catch (OutOfMemoryError e) {
            // A settings file or a reply too large for the heap: one line, as every failure.
            err.println("ratelimit " + spec.name() + ": out of memory (" + e.getMessage() + "); give java more (-Xmx)");
        }
        err.flush();
        return 1;
    }
}
