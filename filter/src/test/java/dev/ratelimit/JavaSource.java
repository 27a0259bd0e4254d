package dev.ratelimit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A main source file as code: its comments, string and character literals blanked out (a name in
 * a comment or a message is not a use), and the package it declares.
 *
 * @param file        the file
 * @param packageName the package it declares
 * @param code        its text without comments and literals
 */
record JavaSource(Path file, String packageName, String code) {

    private static final Pattern PACKAGE = Pattern.compile("^\\s*package\\s+([\\w.]+)\\s*;", Pattern.MULTILINE);

    /**
     * Every {@code .java} file under a source root.
     *
     * @param root the source root
     * @return the files, read
     */
    static List<JavaSource> all(Path root) {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(file -> file.toString().endsWith(".java")).sorted().map(JavaSource::read).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static JavaSource read(Path file) {
        String code = code(ArchitectureTest.read(file));
        return new JavaSource(file, packageOf(code), code);
    }

    /**
     * The package a compilation unit declares.
     *
     * @param code the code, comments removed
     * @return the package name; empty for the unnamed package
     */
    static String packageOf(String code) {
        Matcher declared = PACKAGE.matcher(code);
        return declared.find() ? declared.group(1) : "";
    }

    /**
     * The text with comments and string, text block and character literals replaced by spaces,
     * line breaks kept.
     *
     * @param text Java source text
     * @return the code alone
     */
    static String code(String text) {
        StringBuilder code = new StringBuilder(text.length());
        int i = 0;
        while (i < text.length()) {
            int end;
            if (text.startsWith("//", i)) {
                end = text.indexOf('\n', i);
            } else if (text.startsWith("/*", i)) {
                end = text.indexOf("*/", i + 2) + 2;
            } else if (text.startsWith("\"\"\"", i)) {
                end = closing(text, "\"\"\"", i + 3);
            } else if (text.charAt(i) == '"' || text.charAt(i) == '\'') {
                end = closing(text, String.valueOf(text.charAt(i)), i + 1);
            } else {
                code.append(text.charAt(i++));
                continue;
            }
            end = end <= i ? text.length() : end;
            for (; i < end; i++) {
                code.append(text.charAt(i) == '\n' ? '\n' : ' ');
            }
        }
        return code.toString();
    }

    /** Just past the closing delimiter of a literal, escapes skipped; -1 if unclosed. */
    private static int closing(String text, String delimiter, int from) {
        for (int i = from; i < text.length(); i++) {
            if (text.charAt(i) == '\\') {
                i++;
            } else if (text.startsWith(delimiter, i)) {
                return i + delimiter.length();
            }
        }
        return -1;
    }
}
