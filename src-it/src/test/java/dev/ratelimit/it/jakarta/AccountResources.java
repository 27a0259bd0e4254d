package dev.ratelimit.it.jakarta;

import dev.ratelimit.jakarta.RateLimited;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.ws.rs.BeanParam;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;

/**
 * Resources of {@link OneAccountTest}: requests decided by the filter and an annotation
 * together, keys from what a method receives, locators and sub-resources.
 */
final class AccountResources {

    private AccountResources() {
    }

    /** The example's greeting: three a minute per name, the name a path parameter. */
    @Path("greet/{name}")
    public static class Greet {

        /** Greets. */
        @GET
        @RateLimited("greet")
        public String greet(@PathParam("name") String name) {
            return "hello, " + name;
        }
    }

    /** Keys from what a method receives: a default, and a converted number. */
    @Path("received")
    public static class Received {

        /** Per user, "anonymous" when none is named. */
        @GET
        @Path("user")
        @RateLimited("user")
        public String user(@QueryParam("user") @DefaultValue("anonymous") String user) {
            return "user " + user;
        }

        /** Per item, a number: 7, 07 and +7 are one item. */
        @GET
        @Path("item")
        @RateLimited("item")
        public String item(@QueryParam("id") int id) {
            return "item " + id;
        }

        /** Per user, from a bean parameter's field. */
        @GET
        @Path("bean")
        @RateLimited("user")
        public String bean(@BeanParam Who who) {
            return "user " + who.user;
        }
    }

    /** A bean parameter: the user from the query, "anonymous" by default. */
    public static class Who {
        /** The user. */
        @QueryParam("user")
        @DefaultValue("anonymous")
        public String user;
    }

    /** A route rule's path with an annotated method under it: both layers decide one request. */
    @Path("mix")
    public static class Mix {

        /** Limited by the filter's rule a and its own b. */
        @GET
        @RateLimited("b")
        public String mixed() {
            return "mixed";
        }

        /** Limited by the filter's rule a only. */
        @GET
        @Path("other")
        public String other() {
            return "other";
        }
    }

    /** A plain resource where the README's reset rule must not reach: it names none. */
    @Path("accounts")
    public static class Accounts {

        /** Answers whatever the parameters. */
        @GET
        public String list(@QueryParam("accountId") String accountId) {
            return "accounts";
        }
    }

    /** A locator with an annotation: no filter sees it, so the start must fail. */
    @Path("shop")
    public static class AnnotatedLocator {

        /** The items, behind a limit that would never be applied. */
        @Path("items")
        @RateLimited("greet")
        public Items items() {
            return new Items();
        }
    }

    /** The sub-resource of the shop. */
    public static class Items {

        /** Lists. */
        @GET
        public String list() {
            return "items";
        }
    }

    /** A locator whose sub-resource names no rule of the settings: the start must fail. */
    @Path("typo")
    public static class TypoLocator {

        /** The sub-resource. */
        @Path("sub")
        public Typo sub() {
            return new Typo();
        }
    }

    /** A sub-resource method naming an unknown rule. */
    public static class Typo {

        /** Lists. */
        @GET
        @RateLimited("no-such-rule")
        public String list() {
            return "typo";
        }
    }

    /** A locator whose sub-resource is limited: decided when a request reaches it. */
    @Path("library")
    public static class Library {

        /** The books of a shelf. */
        @Path("{shelf}")
        public Books shelf(@PathParam("shelf") String shelf) {
            return new Books();
        }
    }

    /** A limited sub-resource. */
    public static class Books {

        /** Lists, per shelf. */
        @GET
        @RateLimited("shelf")
        public String list(@PathParam("shelf") String shelf) {
            return "books of " + shelf;
        }
    }

    /** Welcome mails through a CDI bean: the example's welcome rule, per address. */
    @Path("welcome/{address}")
    public static class Welcome {

        private final MailService mails;

        @Context
        private HttpServletRequest request;

        Welcome(MailService mails) {
            this.mails = mails;
        }

        /** Sends one, the address from the path. */
        @POST
        public String welcome(@PathParam("address") long address) {
            BatchResetResource.CURRENT.set(request);
            try {
                mails.sendWelcome(address);
                return "welcome mail queued for " + address;
            } finally {
                BatchResetResource.CURRENT.remove();
            }
        }
    }
}
