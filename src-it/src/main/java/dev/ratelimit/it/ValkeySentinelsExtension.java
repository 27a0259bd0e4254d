package dev.ratelimit.it;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Gives each test class a Sentinel topology (a primary, a replica and three sentinels):
 * {@code @ExtendWith(ValkeySentinelsExtension.class)}, then take a {@link ValkeySentinels} as a
 * parameter of the constructor, a test or a {@code @BeforeEach} method. One topology per class,
 * started when first asked for and stopped after the class; a topology that cannot start fails
 * the class, it is never skipped.
 */
public final class ValkeySentinelsExtension implements AfterAllCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(ValkeySentinelsExtension.class);

    @Override
    public void afterAll(ExtensionContext context) {
        ValkeySentinels topology = context.getStore(NAMESPACE).remove(ValkeySentinels.class, ValkeySentinels.class);
        if (topology != null) {
            topology.close();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == ValkeySentinels.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        ExtensionContext classContext = context;
        while (classContext.getParent().isPresent() && classContext.getTestMethod().isPresent()) {
            classContext = classContext.getParent().get();
        }
        return classContext.getStore(NAMESPACE).getOrComputeIfAbsent(ValkeySentinels.class,
                k -> ValkeySentinels.start(), ValkeySentinels.class);
    }
}
