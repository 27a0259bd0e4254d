package dev.ratelimit.config;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settings' names are API: {@code settings-names.txt} lists every name of 1.0, and each must
 * still be read, under its name or, renamed, as an old name {@link SettingsReader#RENAMED} still
 * reads with a warning. A name dropped from the reader (and so from the README, which
 * {@link SettingsDocumentationTest} holds equal to what is read) without that path fails here; a
 * new name joins the list, and so the API, in the change that adds it.
 */
class SettingsNamesTest {

    @Test
    void everyNameOfTheListIsStillReadAndEveryNameReadIsListed() throws IOException {
        Set<String> listed = listed();
        Set<String> read = SettingsDocumentationTest.documentedNames();
        Set<String> readOrRenamed = new TreeSet<>(read);
        SettingsReader.RENAMED.forEach((now, old) -> {
            if (read.contains(SettingsReader.PREFIX + "rule.*." + now)) {
                readOrRenamed.add(SettingsReader.PREFIX + "rule.*." + old);
            }
            if (read.contains(SettingsReader.PREFIX + now)) {
                readOrRenamed.add(SettingsReader.PREFIX + old);
            }
        });
        assertThat(readOrRenamed).as("names read, with the old names of renamed ones, against settings-names.txt")
                .containsAll(listed);
        assertThat(listed).as("settings-names.txt lists every name read (add a new one there)").containsAll(read);
    }

    private static Set<String> listed() throws IOException {
        try (var in = SettingsNamesTest.class.getResourceAsStream("settings-names.txt")) {
            assertThat(in).as("settings-names.txt beside this test").isNotNull();
            Set<String> names = new TreeSet<>();
            new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().map(String::trim)
                    .filter(line -> !line.isEmpty() && !line.startsWith("#")).forEach(names::add);
            return names;
        }
    }
}
