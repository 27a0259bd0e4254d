package dev.ratelimit.cli;

import dev.ratelimit.config.FilterSettings;
import dev.ratelimit.config.InvalidSettingsException;
import dev.ratelimit.config.MicroProfileSettingsSource;
import dev.ratelimit.config.SettingsReader;
import dev.ratelimit.config.SettingsSource;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;
import java.util.Set;
import java.util.logging.Logger;

/**
 * A settings file read as the filter reads its application's: the file stands in for the WAR's
 * {@code META-INF/microprofile-config.properties}, and MicroProfile Config adds environment
 * variables and system properties over it, with the same names and the same precedence.
 */
final class SettingsFile {

    /** SmallRye Config's logger, held: a logger nobody references may be collected, with its filter. */
    private static final Logger SMALLRYE = Logger.getLogger("io.smallrye.config");
    /** The id of SmallRye Config's warning of a property set twice in one source. */
    private static final String DUPLICATE = "SRCFG01007";

    private SettingsFile() {
    }

    /**
     * The settings of a file.
     *
     * @param file a {@code microprofile-config.properties} file
     * @return the source the filter's reader reads
     * @throws IllegalArgumentException when the file cannot be read, naming it
     */
    static SettingsSource read(Path file) {
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw new IllegalArgumentException("cannot read the settings file " + file.toAbsolutePath());
        }
        try {
            // A class path of one directory holding the file where an application has it.
            Path root = Files.createTempDirectory("ratelimit-settings");
            root.toFile().deleteOnExit();
            Path metaInf = Files.createDirectories(root.resolve("META-INF"));
            metaInf.toFile().deleteOnExit();
            Path copy = Files.copy(file, metaInf.resolve("microprofile-config.properties"),
                    StandardCopyOption.REPLACE_EXISTING);
            copy.toFile().deleteOnExit();
            ClassLoader loader = new URLClassLoader(new URL[] {root.toUri().toURL()}, SettingsFile.class.getClassLoader());
            // MicroProfile Config warns of a property set twice naming the copy, and printing the
            // value it replaced (a password, maybe): said here instead, by the file's name and lines.
            String copied = copy.toString();
            SMALLRYE.setFilter(record -> !(String.valueOf(record.getMessage()).contains(DUPLICATE)
                    && String.valueOf(record.getMessage()).contains(copied)));
            PropertyLines.duplicates(file, PropertyLines.of(file)).forEach(SettingsReader::warn);
            return named(MicroProfileSettingsSource.forClassLoader(loader), copied, file.toAbsolutePath().toString());
        } catch (MalformedURLException e) {
            throw new IllegalStateException(e);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy the settings file " + file.toAbsolutePath(), e);
        }
    }

    /**
     * The settings of a file, read and validated exactly as the filter does at deployment; what
     * is wrong said on {@code err}, each problem in one line (an unreadable file, or one too
     * large for the heap, too), never a stack trace.
     *
     * @param file a {@code microprofile-config.properties} file
     * @param err  where problems are said
     * @return the settings, or empty when something was said
     */
    static Optional<FilterSettings> settings(Path file, PrintWriter err) {
        try {
            return Optional.of(SettingsReader.read(read(file)));
        } catch (InvalidSettingsException e) {
            err.println(e.getMessage());
        } catch (RuntimeException e) {
            err.println("ratelimit: " + e.getMessage());
        } catch (OutOfMemoryError e) {
            err.println("ratelimit: the settings file " + file.toAbsolutePath() + " is too large to read (" + e.getMessage()
                    + "); give java more memory (-Xmx)");
        }
        return Optional.empty();
    }

    /**
     * The source, where it says where it looked, naming the file given rather than the
     * temporary copy read: an empty or misnamed file must point at the file the operator wrote.
     */
    private static SettingsSource named(SettingsSource source, String copy, String file) {
        return new SettingsSource() {
            @Override
            public Optional<String> get(String name) {
                return source.get(name);
            }

            @Override
            public Set<String> names() {
                return source.names();
            }

            @Override
            public boolean fromEnvironment(String name) {
                return source.fromEnvironment(name);
            }

            @Override
            public String whereLooked() {
                return source.whereLooked().replace("file:" + copy, file).replace(copy, file);
            }
        };
    }
}
