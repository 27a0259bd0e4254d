package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;

/** Sub-resources for {@link SubResourceChecksTest}. */
final class CheckedSubResources {

    private CheckedSubResources() {
    }

    /** A locator declared to return Object. */
    @Path("objloc")
    public static class ObjectLocator {
        @Path("sub")
        public Object sub() {
            return new WrongSub();
        }
    }

    /** Names no rule. */
    public static class WrongSub {
        @GET
        @RateLimited("nope")
        public String get() {
            return "wrong";
        }
    }

    /** A locator declared to return an interface. */
    @Path("ifloc")
    public static class InterfaceLocator {
        @Path("sub")
        public SubApi sub() {
            return new SubImpl();
        }
    }

    /** The sub-resource's API. */
    public interface SubApi {
        @GET
        String get();
    }

    /** Its implementation, annotated with no rule of the settings. */
    public static class SubImpl implements SubApi {
        @Override
        @RateLimited("nope")
        public String get() {
            return "impl";
        }
    }

    /** A locator to a sub-resource with a class-level annotation. */
    @Path("cls")
    public static class ClassLocator {
        @Path("sub")
        public ClassSub sub() {
            return new ClassSub();
        }
    }

    /** Limited by its class's annotation. */
    @RateLimited("m1")
    public static class ClassSub {
        @GET
        @Path("{user}")
        public String get(@PathParam("user") String user) {
            return "cls " + user;
        }
    }

    /** A root resource with a class-level annotation and a locator. */
    @Path("mixed")
    @RateLimited("m1")
    public static class ClassLevelWithLocator {
        @GET
        @Path("{user}")
        public String get(@PathParam("user") String user) {
            return "mixed " + user;
        }

        @Path("sub")
        public ClassSub sub() {
            return new ClassSub();
        }
    }
}
