package dev.ratelimit.it;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives each test class a real Valkey: {@code @ExtendWith(ValkeyExtension.class)}, then take a
 * {@link ValkeyServer} as a parameter of a test, a {@code @BeforeEach}/{@code @BeforeAll}
 * method or the constructor. One server per class, stopped after it. When no server can be
 * had the class fails with instructions: it is never skipped.
 */
public final class ValkeyExtension implements BeforeAllCallback, AfterAllCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(ValkeyExtension.class);

    @Override
    public void beforeAll(ExtensionContext context) {
        server(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        ValkeyServer server = context.getStore(NAMESPACE).remove(ValkeyServer.class, ValkeyServer.class);
        if (server != null) {
            server.close();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == ValkeyServer.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return server(context);
    }

    private static ValkeyServer server(ExtensionContext context) {
        ExtensionContext classContext = context;
        while (classContext.getParent().isPresent() && classContext.getTestMethod().isPresent()) {
            classContext = classContext.getParent().get();
        }
        return classContext.getStore(NAMESPACE).getOrComputeIfAbsent(ValkeyServer.class,
                k -> ValkeyServer.provide(), ValkeyServer.class);
    }
}
