-- sliding-log.lua: an exact sliding window kept as a sorted set of request times.
--
-- A chunk of the limiter script: it returns the function the dispatcher calls for every rule
-- of this algorithm. The prelude's helpers (idiv, cdiv, int) are in scope.
--
-- function(key, now, limit, window, burst, cost, consume_if_allowed, consume_if_rejected)
--   key      the state key (KEYS[i])
--   now      the time in ms (server TIME or the client's clock)
--   limit    units per window; window in ms; burst is not used by this algorithm
--   cost     units this request takes (1 <= cost <= limit, checked by the caller)
--   consume_if_allowed / consume_if_rejected: whether to take the units when this rule's own
--            verdict is allow / reject (both false: a read-only decision)
-- returns { allowed (0/1), remaining, reset_after_ms, retry_after_ms }, all describing the
-- state after any write.
--
-- State: a sorted set with one member per unit taken, scored by its time in ms. An entry at
-- time s is inside the window while s > now - window. Members are "<ms>:<seq>", seq
-- zero-padded, so that two units taken in the same millisecond never collapse into one and
-- the set's tie order (lexicographic) is the order they were added in.
return function(key, now, limit, window, burst, cost, consume_if_allowed, consume_if_rejected)
  local since = now - window
  local in_window = '(' .. int(since)

  local count = redis.call('ZCOUNT', key, in_window, '+inf')
  local allowed = count + cost <= limit

  if (allowed and consume_if_allowed) or (not allowed and consume_if_rejected) then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', int(since))
    -- Continue the sequence of this millisecond after its highest member, if any.
    local seq = 0
    local last = redis.call('ZREVRANGEBYSCORE', key, int(now), int(now), 'LIMIT', 0, 1)
    if last[1] then
      seq = tonumber(string.match(last[1], ':(%d+)$')) + 1
    end
    for i = 0, cost - 1 do
      redis.call('ZADD', key, int(now), string.format('%d:%012d', now, seq + i))
    end
    -- Only the newest `limit` entries can ever decide anything: the window holds too many
    -- exactly until the oldest of them leaves. Counting rejected requests therefore never
    -- makes the set larger than the limit.
    redis.call('ZREMRANGEBYRANK', key, 0, -(limit + 1))
    count = redis.call('ZCARD', key)
  end

  local remaining = math.max(0, limit - count)
  local reset_after = 0
  if count > 0 then
    -- Fully restored when the newest entry leaves the window.
    local newest = redis.call('ZREVRANGEBYSCORE', key, '+inf', in_window, 'WITHSCORES', 'LIMIT', 0, 1)
    -- An entry in the window has s > now - window, so this is at least 1 ms.
    reset_after = tonumber(newest[2]) + window - now
    if consume_if_allowed or consume_if_rejected then
      redis.call('PEXPIRE', key, reset_after)
    end
  end

  local retry_after = 0
  if not allowed then
    -- The window must shed (count + cost - limit) entries; the last of them to leave is the
    -- k-th oldest, and it leaves at its time + window.
    local k = count + cost - limit
    local entry = redis.call('ZRANGEBYSCORE', key, in_window, '+inf', 'WITHSCORES', 'LIMIT', k - 1, 1)
    retry_after = math.max(1, tonumber(entry[2]) + window - now)
  end
  return { allowed and 1 or 0, remaining, reset_after, retry_after }
end
