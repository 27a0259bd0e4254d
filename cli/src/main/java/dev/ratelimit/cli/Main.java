package dev.ratelimit.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code ratelimit} command: {@code java -jar ratelimit-cli.jar check FILE}, {@code explain FILE METHOD PATH}. Exit status 0
 * when all is well, 1 when the settings have problems, 2 for bad usage.
 */
@Command(name = "ratelimit", mixinStandardHelpOptions = true, version = "ratelimit 1.0.0",
        description = "Operates the rate-limiting filter from the command line.",
        subcommands = {CheckCommand.class, ExplainCommand.class, InspectCommand.class, ResetCommand.class, TopCommand.class})
public final class Main implements Runnable {

    /** The JDK's property for the format of a log record on standard error. */
    private static final String LOG_FORMAT = "java.util.logging.SimpleFormatter.format";

    /** What picocli builds; use {@link #main}. */
    public Main() {
    }

    /**
     * Runs the command and exits with its status.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        // The library logs its warnings (a rule configured but not listed, a state it cannot
        // read) through java.util.logging, whose default record is two lines with a timestamp
        // and a Java method: on an operator's terminal each is one line of the tool instead.
        if (System.getProperty(LOG_FORMAT) == null) {
            System.setProperty(LOG_FORMAT, "ratelimit: %4$s: %5$s%n");
        }
        System.exit(run(args));
    }

    /**
     * Runs the command.
     *
     * @param args the command line
     * @return the exit status
     */
    static int run(String... args) {
        return new CommandLine(new Main()).execute(args);
    }

    /** Without a subcommand: the usage, and status 2. */
    @Override
    public void run() {
        throw new CommandLine.ParameterException(new CommandLine(this), "a command is needed: check, explain, inspect, reset or top");
    }
}
