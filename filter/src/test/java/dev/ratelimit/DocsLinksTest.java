package dev.ratelimit;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every relative link of the Markdown pages (README, CONTRIBUTING, CHANGELOG, {@code docs/})
 * resolves: its file exists, and its {@code #anchor}, if any, is a heading of that file (as a
 * forge renders it: lower case, punctuation dropped, spaces as hyphens). Links inside code blocks
 * are code, not links.
 */
class DocsLinksTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*]\\(([^)\\s]+)\\)");

    @Test
    void everyRelativeLinkResolves() {
        List<String> broken = new ArrayList<>();
        int checked = 0;
        for (Path page : pages()) {
            for (String target : links(read(page))) {
                if (target.matches("^[a-z]+:.*")) {
                    continue;
                }
                checked++;
                String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
                String anchor = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
                Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(ROOT.relativize(page) + ": " + target + " (no file " + ROOT.relativize(resolved) + ")");
                } else if (anchor != null && !anchors(resolved).contains(anchor)) {
                    broken.add(ROOT.relativize(page) + ": " + target + " (no heading #" + anchor + " in "
                            + ROOT.relativize(resolved) + ")");
                }
            }
        }
        assertThat(checked).as("relative links checked").isGreaterThan(40);
        assertThat(broken).as("links that go nowhere").isEmpty();
    }

    @Test
    void aLinkToNothingIsCaught() {
        assertThat(links("see [a](a.md) and `[b](b.md)`\n```\n[c](c.md)\n```\n[d](d.md#x)")).containsExactly("a.md", "d.md#x");
        assertThat(anchor("Scaling out: Sentinel or Cluster")).isEqualTo("scaling-out-sentinel-or-cluster");
        assertThat(anchor("What bounds the server's cost")).isEqualTo("what-bounds-the-servers-cost");
    }

    private static List<Path> pages() {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md"), ROOT.resolve("CONTRIBUTING.md"),
                ROOT.resolve("CHANGELOG.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    /** The link targets of a page, outside fenced blocks and inline code. */
    static List<String> links(String text) {
        List<String> targets = new ArrayList<>();
        boolean fenced = false;
        for (String line : text.split("\n")) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (fenced) {
                continue;
            }
            Matcher m = LINK.matcher(line.replaceAll("`[^`]*`", ""));
            while (m.find()) {
                targets.add(m.group(1));
            }
        }
        return targets;
    }

    private static Set<String> anchors(Path file) {
        Set<String> anchors = new HashSet<>();
        if (!file.toString().endsWith(".md")) {
            return anchors;
        }
        boolean fenced = false;
        for (String line : read(file).split("\n")) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
            } else if (!fenced && line.matches("^#{1,6} .*")) {
                anchors.add(anchor(line.replaceFirst("^#+ ", "")));
            }
        }
        return anchors;
    }

    static String anchor(String heading) {
        return heading.strip().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}\\- _]", "").replace(' ', '-');
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
