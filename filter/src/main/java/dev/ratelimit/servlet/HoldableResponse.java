package dev.ratelimit.servlet;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The response the filter passes on when an annotated resource method may hold the request for
 * a slot to come ({@code max-delay} on a method rule). A Jakarta REST filter cannot suspend a
 * request: it stops the method ({@code abortWith}) and the request is held by the filter
 * instead, then dispatched again at its slot. What Jakarta REST writes for the stopped method
 * must not reach the client: once {@link #hold()} is called, this wrapper drops everything
 * written through it (status, headers, body, commits). What the layers after the filter wrote
 * before (a filter's header or cookie, which it writes again when it runs at the slot) is taken
 * back then: the status and the headers they touched are as the filter passed them on.
 */
final class HoldableResponse extends HttpServletResponseWrapper {

    /** A body written while held goes nowhere. */
    private static final ServletOutputStream NOWHERE = new ServletOutputStream() {
        @Override
        public boolean isReady() {
            return true;
        }

        @Override
        public void setWriteListener(WriteListener listener) {
            // Never written to the client: nothing to wait for.
        }

        @Override
        public void write(int b) {
            // Dropped: see the class's comment.
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            // Dropped.
        }
    };

    private volatile boolean held;
    /** The headers written through this wrapper, each with its values before the first write. */
    private final Map<String, List<String>> touched = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
    /** The status before the first write of one through this wrapper; -1: none written. */
    private int statusBefore = -1;

    HoldableResponse(HttpServletResponse response) {
        super(response);
    }

    /**
     * From now on, nothing written through this wrapper reaches the client; what was written
     * through it before is taken back, unless the response is committed.
     */
    void hold() {
        Map<String, List<String>> undo;
        int status;
        synchronized (this) {
            held = true;
            undo = new TreeMap<>(touched);
            status = statusBefore;
        }
        HttpServletResponse response = (HttpServletResponse) getResponse();
        if (response.isCommitted()) {
            return;
        }
        if (status >= 0) {
            response.setStatus(status);
        }
        undo.forEach((name, values) -> {
            // A null value removes the field (Servlet 6; Jetty and Tomcat both do).
            response.setHeader(name, null);
            values.forEach(value -> response.addHeader(name, value));
        });
    }

    /** Notes a header's values before this wrapper first writes it. */
    private void touch(String name) {
        synchronized (this) {
            if (!held && name != null && !touched.containsKey(name)) {
                touched.put(name, List.copyOf(((HttpServletResponse) getResponse()).getHeaders(name)));
            }
        }
    }

    /** Whether the request was held for its slot by a later layer. */
    boolean held() {
        return held;
    }

    private void unlessHeld(Runnable write) {
        if (!held) {
            write.run();
        }
    }

    @Override
    public void setStatus(int status) {
        synchronized (this) {
            if (!held && statusBefore < 0) {
                statusBefore = getStatus();
            }
        }
        unlessHeld(() -> super.setStatus(status));
    }

    @Override
    public void sendError(int status) throws IOException {
        if (!held) {
            super.sendError(status);
        }
    }

    @Override
    public void sendError(int status, String message) throws IOException {
        if (!held) {
            super.sendError(status, message);
        }
    }

    @Override
    public void sendRedirect(String location) throws IOException {
        if (!held) {
            super.sendRedirect(location);
        }
    }

    @Override
    public void setHeader(String name, String value) {
        touch(name);
        unlessHeld(() -> super.setHeader(name, value));
    }

    @Override
    public void addHeader(String name, String value) {
        touch(name);
        unlessHeld(() -> super.addHeader(name, value));
    }

    @Override
    public void setIntHeader(String name, int value) {
        touch(name);
        unlessHeld(() -> super.setIntHeader(name, value));
    }

    @Override
    public void addIntHeader(String name, int value) {
        touch(name);
        unlessHeld(() -> super.addIntHeader(name, value));
    }

    @Override
    public void setDateHeader(String name, long date) {
        touch(name);
        unlessHeld(() -> super.setDateHeader(name, date));
    }

    @Override
    public void addDateHeader(String name, long date) {
        touch(name);
        unlessHeld(() -> super.addDateHeader(name, date));
    }

    @Override
    public void addCookie(Cookie cookie) {
        touch("Set-Cookie");
        unlessHeld(() -> super.addCookie(cookie));
    }

    @Override
    public void setTrailerFields(Supplier<Map<String, String>> supplier) {
        unlessHeld(() -> super.setTrailerFields(supplier));
    }

    @Override
    public void setContentType(String type) {
        unlessHeld(() -> super.setContentType(type));
    }

    @Override
    public void setContentLength(int length) {
        unlessHeld(() -> super.setContentLength(length));
    }

    @Override
    public void setContentLengthLong(long length) {
        unlessHeld(() -> super.setContentLengthLong(length));
    }

    @Override
    public void setCharacterEncoding(String encoding) {
        unlessHeld(() -> super.setCharacterEncoding(encoding));
    }

    @Override
    public void setLocale(Locale locale) {
        unlessHeld(() -> super.setLocale(locale));
    }

    @Override
    public void setBufferSize(int size) {
        unlessHeld(() -> super.setBufferSize(size));
    }

    @Override
    public void flushBuffer() throws IOException {
        if (!held) {
            super.flushBuffer();
        }
    }

    @Override
    public void resetBuffer() {
        unlessHeld(super::resetBuffer);
    }

    @Override
    public void reset() {
        unlessHeld(super::reset);
    }

    @Override
    public ServletOutputStream getOutputStream() throws IOException {
        return held ? NOWHERE : super.getOutputStream();
    }

    @Override
    public PrintWriter getWriter() throws IOException {
        return held ? new PrintWriter(OutputStream.nullOutputStream()) : super.getWriter();
    }
}
