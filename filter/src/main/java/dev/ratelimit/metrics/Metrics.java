package dev.ratelimit.metrics;

import dev.ratelimit.RateLimitListener;
import dev.ratelimit.internal.GuardedListener;

import javax.management.InstanceAlreadyExistsException;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

/**
 * Every rule's counters, published as JMX MBeans and passed on to the application's
 * {@link RateLimitListener}. Itself a listener: the filter reports each event once, here.
 */
public final class Metrics implements RateLimitListener {

    private static final System.Logger LOG = System.getLogger(Metrics.class.getName());

    /** Concurrent: a refresh of the settings may add rules while requests are counted. */
    private final Map<String, RuleMetrics> rules = new java.util.concurrent.ConcurrentHashMap<>();
    private final BooleanSupplier breakerOpen;
    private final RateLimitListener application;
    private final List<ObjectName> registered = new ArrayList<>();

    /**
     * Counters for the given rules.
     *
     * @param ruleNames   the rules
     * @param breakerOpen whether the store's circuit breaker is open now
     * @param application the application's listener, or {@link RateLimitListener#NONE}; whatever it
     *                    throws is caught and logged once
     */
    public Metrics(List<String> ruleNames, BooleanSupplier breakerOpen, RateLimitListener application) {
        this.breakerOpen = breakerOpen;
        for (String name : ruleNames) {
            rules.put(name, new RuleMetrics(breakerOpen));
        }
        this.application = GuardedListener.of(application);
    }

    /**
     * One rule's counters.
     *
     * @param rule the rule's name
     * @return its counters
     */
    public RuleMetrics rule(String rule) {
        return rules.get(rule);
    }

    @Override
    public void onEvent(String rule, Event event) {
        RuleMetrics metrics = rules.get(rule);
        if (metrics != null) {
            metrics.record(event);
        }
        application.onEvent(rule, event);
    }

    @Override
    public void onDecisionTime(String rule, long nanos) {
        RuleMetrics metrics = rules.get(rule);
        if (metrics != null) {
            metrics.recordDecisionTime(nanos);
        }
        application.onDecisionTime(rule, nanos);
    }

    @Override
    public void onClose() {
        application.onClose();
    }

    @Override
    public void onBreakerChange(boolean open) {
        application.onBreakerChange(open);
    }

    /**
     * Counters, and their MBeans, for rules a refresh of the settings added.
     *
     * @param ruleNames every rule now configured; those known already are left as they are
     */
    public synchronized void addRules(List<String> ruleNames) {
        for (String name : ruleNames) {
            if (!rules.containsKey(name)) {
                RuleMetrics metrics = new RuleMetrics(breakerOpen);
                rules.put(name, metrics);
                register(name, metrics);
            }
        }
    }

    /**
     * Registers one MBean per rule, {@code dev.ratelimit:type=RateLimiter,rule=<name>}. When
     * another application in the same JVM took that name, {@code ,instance=<n>} is added.
     */
    public synchronized void registerMBeans() {
        rules.forEach(this::register);
    }

    private void register(String name, RuleMetrics metrics) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        for (int instance = 1; instance < 100; instance++) {
            try {
                ObjectName objectName = new ObjectName("dev.ratelimit:type=RateLimiter,rule=" + name
                        + (instance == 1 ? "" : ",instance=" + instance));
                server.registerMBean(metrics, objectName);
                registered.add(objectName);
                return;
            } catch (InstanceAlreadyExistsException e) {
                // another deployment has it: try the next instance number
            } catch (JMException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "Cannot register the JMX MBean of rule {0}: {1}", name, e.toString());
                return;
            }
        }
    }

    /** Unregisters the MBeans registered by {@link #registerMBeans()}. */
    public synchronized void unregisterMBeans() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        for (ObjectName name : registered) {
            try {
                server.unregisterMBean(name);
            } catch (JMException e) {
                // already gone
            }
        }
        registered.clear();
    }
}
