package dev.ratelimit.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A path as sent read as the container reads it: every row of the example table of the Servlet
 * 6.0 specification, §3.5.2, the decoded path of those it dispatches and a refusal (400) for the
 * others.
 */
class RequestPathTest {

    /** Encoded path, then the path dispatched: the table's rows without a rejection. */
    static Stream<List<String>> dispatched() {
        return Stream.of(
                List.of("/foo/bar", "/foo/bar"),
                List.of("/foo/bar;jsessionid=1234", "/foo/bar"),
                List.of("/foo/bar/", "/foo/bar/"),
                List.of("/foo/bar/;jsessionid=1234", "/foo/bar/"),
                List.of("/foo;/bar;", "/foo/bar"),
                List.of("/foo;/bar;/;", "/foo/bar/"),
                List.of("/foo/b%25r", "/foo/b%r"),
                List.of("/foo/./bar", "/foo/bar"),
                List.of("/foo/././bar", "/foo/bar"),
                List.of("/./foo/bar", "/foo/bar"),
                List.of("/foo/bar/.", "/foo/bar"),
                List.of("/foo/bar/./", "/foo/bar/"),
                List.of("/foo/bar/./;", "/foo/bar/"),
                List.of("/foo/.bar", "/foo/.bar"),
                List.of("/foo/../bar", "/bar"),
                List.of("/foo/./../bar", "/bar"),
                List.of("/foo/bar/..", "/foo"),
                List.of("/foo/bar/../", "/foo/"),
                List.of("/foo/bar/../;", "/foo/"),
                List.of("/foo/..bar", "/foo/..bar"),
                List.of("/foo/.../bar", "/foo/.../bar"),
                List.of("/foo//bar", "/foo/bar"),
                List.of("//foo//bar//", "/foo/bar/"),
                List.of("/foo//../bar", "/bar"),
                List.of("/foo%E2%82%ACbar", "/foo\u20acbar"),
                List.of("/foo%20bar", "/foo bar"),
                List.of("/foo/bar?q", "/foo/bar"),
                List.of("/foo/bar/?q", "/foo/bar/"),
                List.of("/foo/bar;?q", "/foo/bar"),
                List.of("/", "/"),
                List.of("//", "/"),
                List.of("/.", "/"),
                List.of("/./", "/"),
                List.of("/?q", "/"));
    }

    @ParameterizedTest
    @MethodSource("dispatched")
    void aPathTheContainerDispatchesIsReadAsItReadsIt(List<String> row) {
        assertThat(RequestPath.canonical(row.get(0))).isEqualTo(row.get(1));
    }

    /** The table's rows with a rejection: every one a 400. */
    static Stream<String> refused() {
        return Stream.of("foo/bar", "/foo%00/bar/", "/foo%7Fbar", "/foo%2Fbar", "/foo%2Fb%25r", "/foo\\bar", "/foo%5Cbar",
                "/foo;%2F/bar", "/foo/%2e/bar", "/foo/.;/bar", "/foo/%2e;/bar", "/foo/.%2Fbar", "/foo/.%5Cbar",
                "/foo/bar/.;", "/foo/../../bar", "/../foo/bar", "/foo/%2e%2E/bar", "/foo/%2e%2e/%2E%2E/bar",
                "/foo/..;/bar", "/foo/%2e%2E;/bar", "/foo/..%2Fbar", "/foo/..%5Cbar", "/foo/bar/..;",
                "/;/foo;/;/bar/;/;", "/foo/;/../bar", "/foo%E2%82", "/foo%E2%82bar", "/foo%-1/bar", "/foo%XX/bar",
                "/foo%/bar", "/foo/bar%0", "/good%20/bad%/%20mix%", "/foo/bar#f", "/foo/bar?q#f", "/foo/bar/#f",
                "/foo/bar/?q#f", "/foo/bar;#f", "/foo/bar;?q#f", "/;/", "/..", "/../", "foo/bar/", "./foo/bar/",
                "%2e/foo/bar/", "../foo/bar/", ".%2e/foo/bar/", ";/foo/bar/", "/#f", "#f", "?q");
    }

    @ParameterizedTest
    @MethodSource("refused")
    void aSuspiciousPathIsRefusedAsTheContainerRefusesIt(String path) {
        assertThatThrownBy(() -> RequestPath.canonical(path)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("'" + path + "' ").hasMessageContaining("400 Bad Request");
    }

    @Test
    void eachRefusalSaysWhy() {
        assertThatThrownBy(() -> RequestPath.canonical("/p/a%2Fb")).hasMessageContaining("an encoded '/' (%2F)");
        assertThatThrownBy(() -> RequestPath.canonical("/p/../../x")).hasMessageContaining("above the root");
        assertThatThrownBy(() -> RequestPath.canonical("/p/100%")).hasMessageContaining("write '%' as %25");
        assertThatThrownBy(() -> RequestPath.canonical("/p/%FF")).hasMessageContaining("not UTF-8");
        assertThatThrownBy(() -> RequestPath.canonical("/p/a%1Fb")).hasMessageContaining("control character");
    }

    @Test
    void aPathTypedDecodedIsTakenAsItself() {
        assertThat(RequestPath.canonical("/p/A b")).isEqualTo("/p/A b");
        assertThat(RequestPath.canonical("/p/caf\u00e9")).isEqualTo(RequestPath.canonical("/p/caf%C3%A9"));
        assertThat(RequestPath.canonical("/p/\uD83D\uDE00")).isEqualTo(RequestPath.canonical("/p/%F0%9F%98%80"));
        // Only ASCII hexadecimal digits: not the digits of other scripts.
        assertThatThrownBy(() -> RequestPath.canonical("/p/%\u0663\u0663")).hasMessageContaining("hexadecimal");
        // Reserved characters encoded are data, not delimiters; C1 characters are dispatched.
        assertThat(RequestPath.canonical("/p/a%3Bb%3Fc%23d")).isEqualTo("/p/a;b?c#d");
        assertThat(RequestPath.canonical("/p/a%C2%85b")).isEqualTo("/p/a\u0085b");
    }
}
