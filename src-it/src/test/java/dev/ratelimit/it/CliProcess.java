package dev.ratelimit.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code ratelimit} command as operators run it: the real runnable JAR, in a process of its
 * own, without the {@code RATELIMIT_} variables of the test's environment unless given.
 */
final class CliProcess {

    private CliProcess() {
    }

    /** What a run printed and its exit status. */
    record Run(int status, String out, String err) {
    }

    /** Runs {@code java [jvmOptions] -jar ratelimit-cli.jar args...}, its output kept in {@code dir}. */
    static Run run(Path dir, Map<String, String> environment, List<String> jvmOptions, String... args) throws Exception {
        Path jar = Path.of(System.getProperty("cli.jar", "../cli/target/ratelimit-cli.jar"));
        assertThat(jar).as("the command's JAR, built before these tests").isRegularFile();
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        command.addAll(jvmOptions);
        command.addAll(List.of("-jar", jar.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().keySet().removeIf(name -> name.startsWith("RATELIMIT_"));
        builder.environment().putAll(environment);
        Path out = Files.createTempFile(dir, "out", ".txt");
        Path err = Files.createTempFile(dir, "err", ".txt");
        Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("the command ended").isTrue();
        return new Run(process.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** Runs the command with the test's environment cleared of {@code RATELIMIT_} variables. */
    static Run run(Path dir, String... args) throws Exception {
        return run(dir, Map.of(), List.of(), args);
    }
}
