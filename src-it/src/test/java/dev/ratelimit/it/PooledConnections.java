package dev.ratelimit.it;

import org.apache.commons.pool2.BasePooledObjectFactory;
import org.apache.commons.pool2.PooledObject;
import org.apache.commons.pool2.impl.DefaultPooledObject;
import redis.clients.jedis.Connection;

import java.util.function.Supplier;

/**
 * Makes the connections of a Jedis pool from a supplier, for test clients whose connections
 * misbehave on purpose (faults, Errors): the pool's bookkeeping is Jedis's own.
 */
public final class PooledConnections extends BasePooledObjectFactory<Connection> {

    private final Supplier<Connection> connect;

    /**
     * A factory.
     *
     * @param connect makes a connected connection
     */
    public PooledConnections(Supplier<Connection> connect) {
        this.connect = connect;
    }

    @Override
    public Connection create() {
        return connect.get();
    }

    @Override
    public PooledObject<Connection> wrap(Connection connection) {
        return new DefaultPooledObject<>(connection);
    }

    @Override
    public void destroyObject(PooledObject<Connection> pooled) {
        pooled.getObject().disconnect();
    }

    @Override
    public boolean validateObject(PooledObject<Connection> pooled) {
        return pooled.getObject().isConnected() && !pooled.getObject().isBroken();
    }
}
