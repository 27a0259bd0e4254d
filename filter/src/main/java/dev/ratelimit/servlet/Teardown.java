package dev.ratelimit.servlet;

/**
 * Runs the steps of a shutdown so that each is tried whatever the others do. A container may
 * already be tearing the application down when it calls {@code destroy()}: its class loader
 * may refuse new classes, a close may throw. Nothing here throws; each failure is logged once,
 * and the next step runs.
 */
final class Teardown {

    private static final System.Logger LOG = System.getLogger(Teardown.class.getName());

    private Teardown() {
    }

    /** One step of a shutdown. */
    @FunctionalInterface
    interface Step {
        void run() throws Exception;
    }

    /**
     * Runs one step; a failure is logged, never thrown.
     *
     * @param what what the step releases, for the log line
     * @param step the step, or null for nothing to do
     * @return true when it ran without failing
     */
    static boolean quietly(String what, Step step) {
        if (step == null) {
            return true;
        }
        try {
            step.run();
            return true;
        } catch (Exception | LinkageError e) {
            LOG.log(System.Logger.Level.WARNING, "RateLimitFilter could not release " + what
                    + " while being destroyed; the other resources were released: " + e, e);
            return false;
        }
    }
}
