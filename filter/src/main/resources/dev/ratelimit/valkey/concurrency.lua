-- concurrency.lua: at most `limit` units in progress at once, each a lease with a timeout.
--
-- A chunk of the limiter script: it returns the three functions the dispatcher and refund.lua
-- call for every rule of this algorithm. The prelude's helpers (int, ttl, add_members,
-- remove_members) are in scope.
--
-- read(key, now, limit, window, burst, cost) -> allowed, count
--   key      the state key (KEYS[i])
--   now      the time in ms (server TIME or the client's clock)
--   limit    units in progress at once; window = the lease timeout in ms; burst is not used
--   cost     units this request takes (1 <= cost <= limit <= 10,000, checked by the caller)
-- reads the state and returns this rule's own verdict (a boolean) and the live leases;
-- finish(key, now, limit, window, burst, cost, consume, count_rejected, lend, allowed, count)
--   takes the leases if consume (false: a read-only decision), on what read returned.
--   Never asked to consume a rejection: count-rejected does not apply (checked by the caller).
-- finish returns allowed (0/1), remaining, reset_after_ms, next_ms, wait_ms: remaining is the
-- leases free, reset_after the time until every lease held has timed out, next the time until
-- the next one has (the effective window; 0 with none held), wait the time until enough of
-- them have timed out for this cost; all upper bounds, since a lease is usually
-- released long before its timeout. Then the two numbers that release the leases (refund):
-- the call's number (CALL_ID, chosen by the caller) and 0, or -1, 0 when nothing was written.
-- refund(key, now, limit, window, burst, cost, call, 0) releases exactly the leases that call
--   added; returns 1 if any of them still counted (had not timed out). A caller whose reply
--   was lost knows its call's number, so it can release leases it never heard of; one that
--   releases before the call has even run gets 0 and may try again.
--
-- State: a sorted set with one member per lease, "<call>:<seq>:<timeout>", scored by the time it
-- times out (its time + timeout). A lease counts while its score is > now, so each keeps the
-- timeout it was taken with whatever the rule says later; timed-out leases are reclaimed by
-- the next write. call is the number of the call that took it (unique per caller and call,
-- chosen by the caller), seq numbers the leases of a cost > 1. The key lives until its last
-- lease times out.

local function read(key, now, limit, window, burst, cost)
  local count = redis.call('ZCOUNT', key, '(' .. int(now), '+inf')
  return count + cost <= limit, count
end

-- The time until c leases fit beside the count held: (count + c - limit) must time out; the
-- last of them to go is the k-th soonest.
local function wait_for(c, key, live, count, limit, now)
  local k = count + c - limit
  local lease = redis.call('ZRANGEBYSCORE', key, live, '+inf', 'WITHSCORES', 'LIMIT', k - 1, 1)
  return tonumber(lease[2]) - now
end

local function finish(key, now, limit, window, burst, cost, consume, _, _, allowed, count)
  local live = '(' .. int(now)
  if consume then
    -- Leases their holders never released come back here, in the same atomic call.
    redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now))
    local expires = now + window
    add_members(key, expires, CALL_ID, 0, cost, window)
    count = redis.call('ZCARD', key)
    local newest = redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')
    redis.call('PEXPIRE', key, ttl(tonumber(newest[2]) - now))
  end

  local remaining = math.max(0, limit - count)
  local reset_after, next_after, wait = 0, 0, 0
  if count > 0 then
    local newest = redis.call('ZREVRANGEBYSCORE', key, '+inf', live, 'WITHSCORES', 'LIMIT', 0, 1)
    reset_after = tonumber(newest[2]) - now
    next_after = wait_for(remaining + 1, key, live, count, limit, now)
    if remaining > 0 then
      -- Leases taken now time out after this rule's timeout, sooner than older ones after an
      -- edit that shortened it: one more fits when the first of those goes.
      next_after = math.min(next_after, window)
    end
  end
  if count + cost > limit then
    wait = wait_for(cost, key, live, count, limit, now)
  end
  return allowed and 1 or 0, remaining, reset_after, next_after, wait, consume and CALL_ID or -1, 0
end

local function refund(key, now, limit, window, burst, cost, call, seq)
  -- Only leases still counting are given back: one that has timed out was given back already.
  local live = '(' .. int(now)
  local before = redis.call('ZCOUNT', key, live, '+inf')
  remove_members(key, call, seq, cost, window)
  return redis.call('ZCOUNT', key, live, '+inf') < before and 1 or 0
end

return { read = read, finish = finish, refund = refund }
