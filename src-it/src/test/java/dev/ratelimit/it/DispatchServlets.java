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
                holder(ERROR_PAGE, new HttpServlet() {
                    @Override
                    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
                        response.setContentType("text/plain");
                        response.getWriter().write("error page");
                    }
                }));
    }

    private static ServletHolder holder(String path, HttpServlet servlet) {
        ServletHolder holder = new ServletHolder(path, servlet);
        holder.setAsyncSupported(true);
        return holder;
    }
}
