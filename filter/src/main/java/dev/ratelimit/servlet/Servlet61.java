package dev.ratelimit.servlet;

import jakarta.servlet.http.HttpServletResponse;

import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The Servlet 6.1 methods the filter must see but cannot name: it compiles against Servlet 6.0
 * so as to run on 6.0 containers too. Looked up once, on first use (only a 6.1 container calls
 * them).
 */
final class Servlet61 {

    private Servlet61() {
    }

    /** {@code HttpServletResponse.sendRedirect(String, int, boolean)}, found on first use. */
    private static final class Redirect {
        static final MethodHandle SEND = find();

        private static MethodHandle find() {
            try {
                return MethodHandles.publicLookup().findVirtual(HttpServletResponse.class, "sendRedirect",
                        MethodType.methodType(void.class, String.class, int.class, boolean.class));
            } catch (NoSuchMethodException | IllegalAccessException e) {
                return null;
            }
        }
    }

    /**
     * Calls {@code response.sendRedirect(location, status, clearBuffer)}.
     *
     * @throws UnsupportedOperationException on a container older than Servlet 6.1, which has no
     *                                       such method to call
     */
    static void sendRedirect(HttpServletResponse response, String location, int status, boolean clearBuffer)
            throws IOException {
        MethodHandle send = Redirect.SEND;
        if (send == null) {
            throw new UnsupportedOperationException("sendRedirect(String, int, boolean) needs Servlet 6.1");
        }
        try {
            send.invokeExact(response, location, status, clearBuffer);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
