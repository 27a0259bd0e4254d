-- token-bucket.lua: a bucket of `burst` tokens refilled at `limit` tokens per `window`.
--
-- A chunk of the limiter script: it returns the function the dispatcher calls for every rule
-- of this algorithm. The prelude's helpers (idiv, cdiv, int) are in scope.
--
-- function(key, now, limit, window, burst, cost, consume_if_allowed, consume_if_rejected)
--   key      the state key (KEYS[i])
--   now      the time in ms (server TIME or the client's clock)
--   limit    tokens added per window; window in ms; burst = the bucket's capacity
--   cost     tokens this request takes (1 <= cost <= burst, checked by the caller)
--   consume_if_allowed / consume_if_rejected: whether to take the tokens when this rule's own
--            verdict is allow / reject (both false: a read-only decision)
-- returns { allowed (0/1), remaining, reset_after_ms, retry_after_ms }, all describing the
-- state after any write.
--
-- State: one hash { t = tokens x window, ts = ms of the last update }. Holding tokens scaled
-- by the window makes the refill exactly `limit` units per ms, so all arithmetic is on
-- integers: no fractional token can round a request through early. A missing key is a full
-- bucket, which is why a full bucket need not be stored at all.
return function(key, now, limit, window, burst, cost, consume_if_allowed, consume_if_rejected)
  local capacity = burst * window
  local need = cost * window

  local units = capacity
  local state = redis.call('HMGET', key, 't', 'ts')
  local stored_units, stored_at = tonumber(state[1]), tonumber(state[2])
  if stored_units and stored_at then
    -- A clock that went backwards refills nothing rather than draining the bucket.
    local elapsed = math.max(0, now - stored_at)
    units = math.min(capacity, stored_units + elapsed * limit)
  end

  local allowed = units >= need
  if (allowed and consume_if_allowed) or (not allowed and consume_if_rejected) then
    -- A counted rejection may overdraw the bucket, by at most one full bucket: the hammering
    -- client stays locked out after it stops for at most twice the time to refill.
    units = math.max(units - need, -capacity)
    redis.call('HSET', key, 't', int(units), 'ts', int(now))
    -- The state matters only until the bucket is full again (need >= window, so this is >= 1).
    redis.call('PEXPIRE', key, cdiv(capacity - units, limit))
  end

  local remaining = 0
  if units > 0 then
    remaining = idiv(units, window)
  end
  local reset_after = cdiv(capacity - units, limit)
  local retry_after = 0
  if not allowed then
    retry_after = cdiv(need - units, limit)
  end
  return { allowed and 1 or 0, remaining, reset_after, retry_after }
end
