package dev.ratelimit.it;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.ServletHolder;

import java.io.IOException;
import java.util.List;

/**
 * Servlets that make one client request go through several dispatches, or complete
 * asynchronously, as real applications do: a forward, an async servlet, an async dispatch, a
 * {@code sendError} and an exception (both shown an error page).
 */
final class DispatchServlets {

    /** The error page of the test app, itself behind the filter (ERROR dispatch). */
    static final String ERROR_PAGE = "/error-page";

    private DispatchServlets() {
    }

    /** Holders named by the path each is mapped to. */
    static List<ServletHolder> holders() {
        return List.of(
                holder("/forward", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response)
                            throws ServletException, IOException {
                        request.getRequestDispatcher("/forwarded").forward(request, response);
                    }
                }),
                holder("/async", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) {
                        AsyncContext async = request.startAsync();
                        async.start(() -> {
                            try {
                                async.getResponse().setContentType("text/plain");
                                async.getResponse().getWriter().write("async done");
                            } catch (IOException e) {
                                throw new IllegalStateException(e);
                            } finally {
                                async.complete();
                            }
                        });
                    }
                }),
                holder("/async-dispatch", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) {
                        request.startAsync().dispatch("/dispatched");
                    }
                }),
                holder("/send-error", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
                        response.sendError(404);
                    }
                }),
                holder("/throw", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) {
                        throw new IllegalStateException("thrown by the application");
                    }
                }),
                holder("/redirect", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
                        String how = request.getParameter("how");
                        if (!"1".equals(request.getParameter("async"))) {
                            redirect(response, how);
                            return;
                        }
                        // As Jersey and Spring start it: with the pair the servlet was handed.
                        AsyncContext async = request.startAsync(request, response);
                        async.start(() -> {
                            try {
                                redirect((HttpServletResponse) async.getResponse(), how);
                            } catch (IOException e) {
                                throw new IllegalStateException(e);
                            } finally {
                                async.complete();
                            }
                        });
                    }
                }),
                holder("/original", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) {
                        // What an application sees of the async context it starts: the filter changes nothing.
                        AsyncContext async = request.startAsync();
                        async.start(() -> {
                            try {
                                async.getResponse().getWriter().write("original " + async.hasOriginalRequestAndResponse());
                            } catch (IOException e) {
                                throw new IllegalStateException(e);
                            } finally {
                                async.complete();
                            }
                        });
                    }
                }),
                holder("/redirect-then-dispatch", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) {
                        // The status is a 3xx before the async dispatch, whose filter pass must not put the fields back.
                        response.setStatus(302);
                        response.setHeader("Location", "/");
                        request.startAsync().dispatch("/dispatched");
                    }
                }),
                holder("/hold", new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
                        Hold.entered.countDown();
                        try {
                            if (!Hold.release.await(30, java.util.concurrent.TimeUnit.SECONDS)) {
                                throw new IllegalStateException("never released");
                            }
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                        response.setContentType("text/plain");
                        response.getWriter().write("held");
                    }
                }),
                holder(ERROR_PAGE, new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
                        response.setContentType("text/plain");
                        response.getWriter().write("error page");
                    }
                }));
    }

    /**
     * Answers a redirection: {@code how=send} by {@code sendRedirect}, {@code how=status} by
     * {@code setStatus(302)} and {@code Location}, {@code how=undo} by a 302 replaced with a 200;
     * {@code how=error-404} and {@code how=error-503} by a 302 replaced by {@code sendError}, and
     * {@code how=reset} by a 302 dropped with {@code reset()} before a 200 is written.
     */
    private static void redirect(HttpServletResponse response, String how) throws IOException {
        switch (how) {
            case "send" -> response.sendRedirect("/");
            case "status" -> {
                response.setStatus(302);
                response.setHeader("Location", "/");
            }
            case "undo" -> {
                response.setStatus(302);
                response.setStatus(200);
                response.setContentType("text/plain");
                response.getWriter().write("not redirected after all");
            }
            // A 302 replaced by an error: with an error page (404, an ERROR dispatch) or without (503).
            case "error-404" -> {
                response.setStatus(302);
                response.sendError(404);
            }
            case "error-503" -> {
                response.setStatus(302);
                response.sendError(503);
            }
            // A 302 replaced by a reset, then a 200 written.
            case "reset" -> {
                response.setStatus(302);
                response.setHeader("Location", "/");
                response.reset();
                response.setContentType("text/plain");
                response.getWriter().write("not redirected after all");
            }
            default -> throw new IllegalArgumentException(how);
        }
    }

    /**
     * Holds {@code /hold} requests until the test releases them: an in-flight request without
     * any timing. {@link #reset} before each use.
     */
    static final class Hold {
        static volatile java.util.concurrent.CountDownLatch entered = new java.util.concurrent.CountDownLatch(1);
        static volatile java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(0);

        private Hold() {
        }

        static void reset() {
            entered = new java.util.concurrent.CountDownLatch(1);
            release = new java.util.concurrent.CountDownLatch(1);
        }
    }

    private static ServletHolder holder(String path, HttpServlet servlet) {
        ServletHolder holder = new ServletHolder(path, servlet);
        holder.setAsyncSupported(true);
        return holder;
    }
}
