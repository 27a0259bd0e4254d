package dev.ratelimit.servlet;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The response the filter passes on when an annotated resource method may hold the request for
 * a slot to come ({@code max-delay} on a method rule). A Jakarta REST filter cannot suspend a
 * request: it stops the method ({@code abortWith}) and the request is held by the filter
 * instead, then dispatched again at its slot. What Jakarta REST writes for the stopped method
 * must not reach the client: once {@link #hold()} is called, this wrapper drops everything
 * written through it (status, headers, body, commits) and the real response stays untouched
 * for the dispatch at the slot.
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

    HoldableResponse(HttpServletResponse response) {
        super(response);
    }

    /** From now on, nothing written through this wrapper reaches the client. */
    void hold() {
        held = true;
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
        unlessHeld(() -> super.setHeader(name, value));
    }

    @Override
    public void addHeader(String name, String value) {
        unlessHeld(() -> super.addHeader(name, value));
    }

    @Override
    public void setIntHeader(String name, int value) {
        unlessHeld(() -> super.setIntHeader(name, value));
    }

    @Override
    public void addIntHeader(String name, int value) {
        unlessHeld(() -> super.addIntHeader(name, value));
    }

    @Override
    public void setDateHeader(String name, long date) {
        unlessHeld(() -> super.setDateHeader(name, date));
    }

    @Override
    public void addDateHeader(String name, long date) {
        unlessHeld(() -> super.addDateHeader(name, date));
    }

    @Override
    public void addCookie(Cookie cookie) {
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
