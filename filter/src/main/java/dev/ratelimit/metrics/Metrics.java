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
    /** Numbers each {@code Metrics} of this class loader; with the deployment, unique enough in a JVM. */
    private static final java.util.concurrent.atomic.AtomicLong REGISTRATIONS =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime());
    private final String deployment;
    private final long registration = REGISTRATIONS.incrementAndGet();
    private volatile KeyOperations keyOperations = KeyOperations.NONE;

    /**
     * Counters for the given rules.
     *
     * @param ruleNames   the rules
     * @param breakerOpen whether the store's circuit breaker is open now
     * @param application the application's listener, or {@link RateLimitListener#NONE}; whatever it
     *                    throws is caught and logged once
     * @param deployment  the deployment (virtual server and context path; empty when unknown): its
     *                    redeployment takes over its MBean names
     */
    public Metrics(List<String> ruleNames, BooleanSupplier breakerOpen, RateLimitListener application,
                   String deployment) {
        this.breakerOpen = breakerOpen;
        this.deployment = deployment;
        for (String name : ruleNames) {
            rules.put(name, newRule(name));
        }
        this.application = GuardedListener.of(application);
    }

    private RuleMetrics newRule(String name) {
        return new RuleMetrics(breakerOpen, deployment, registration, name, () -> keyOperations);
    }

    /**
     * What the rules' MBeans do for their {@code inspect} and {@code reset} operations.
     *
     * @param operations the filter's
     */
    public void keyOperations(KeyOperations operations) {
        this.keyOperations = java.util.Objects.requireNonNull(operations, "operations");
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
    public void onDelay(String rule, long nanos) {
        RuleMetrics metrics = rules.get(rule);
        if (metrics != null) {
            metrics.recordDelay(nanos);
        }
        application.onDelay(rule, nanos);
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
                RuleMetrics metrics = newRule(name);
                rules.put(name, metrics);
                register(name, metrics);
            }
        }
    }

    /**
     * Registers one MBean per rule, {@code dev.ratelimit:type=RateLimiter,rule=<name>}. When
     * another application in the same JVM took that name, {@code ,instance=<n>} is added; when
     * it is this application's earlier deployment, still there while this one starts (a hot
     * redeploy), its MBean is replaced, so one application redeployed keeps its names.
     */
    public synchronized void registerMBeans() {
        rules.forEach(this::register);
    }

    private void register(String name, RuleMetrics metrics) {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        for (int instance = 1; instance < 100; instance++) {
            try {
                ObjectName objectName = objectName(name, instance);
                server.registerMBean(metrics, objectName);
                registered.add(objectName);
                return;
            } catch (InstanceAlreadyExistsException e) {
                if (takeOver(server, instance, name, metrics)) {
                    return;
                }
                // another application has it: try the next instance number
            } catch (JMException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "Cannot register the JMX MBean of rule {0}: {1}", name, e.toString());
                return;
            }
        }
    }

    /** Replaces the MBean at a name when this application's earlier deployment registered it. */
    private boolean takeOver(MBeanServer server, int instance, String name, RuleMetrics metrics) {
        try {
            ObjectName objectName = objectName(name, instance);
            if (deployment.isEmpty() || !deployment.equals(server.getAttribute(objectName, "Deployment"))) {
                return false;
            }
            server.unregisterMBean(objectName);
            server.registerMBean(metrics, objectName);
            registered.add(objectName);
            return true;
        } catch (JMException | RuntimeException e) {
            return false; // gone meanwhile, or not ours: the next instance number
        }
    }

    private static ObjectName objectName(String rule, int instance) throws JMException {
        return new ObjectName("dev.ratelimit:type=RateLimiter,rule=" + rule + (instance == 1 ? "" : ",instance=" + instance));
    }

    /**
     * Unregisters the MBeans registered by {@link #registerMBeans()}, those still its own: a
     * redeployment of the application may have taken their names over.
     */
    public synchronized void unregisterMBeans() {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        for (ObjectName name : registered) {
            try {
                if (Long.valueOf(registration).equals(server.getAttribute(name, "Registration"))) {
                    server.unregisterMBean(name);
                }
            } catch (JMException e) {
                // already gone
            }
        }
        registered.clear();
    }
}
