-- concurrency.lua: at most `limit` units in progress at once, each a permit with a timeout.
--
-- An algorithm of the limiter script (the interface is in dispatcher.lua); the window is the
-- permit's timeout in ms, burst is not used, 1 <= cost <= limit <= 10,000 (checked by the caller),
-- and it is never asked to consume a rejection (count-rejected does not apply).
-- read returns: verdict, count (the permits held).
-- Its remaining is the permits free, reset_after the time until every permit held has timed out,
-- next_ms until the next one has (0 with none held), wait until enough of them have for this
-- cost: all upper bounds, since a permit is usually released long before its timeout.
-- Undo values: the call's number (chosen by the caller) and 0. Its refund releases exactly the
-- permits that call took; 1 if any of them still counted (had not timed out). A caller whose
-- reply was lost knows its call's number, so it can release permits it never heard of; one that
-- releases before the call has even run gets 0 and may try again.
--
-- State: a sorted set with one member per permit, "<call>:<seq>:<timeout>", scored by the time it
-- times out (its time + timeout). A permit counts while its score is > now, so each keeps the
-- timeout it was taken with whatever the rule says later; timed-out permits are reclaimed by
-- the next write. call is the number of the call that took it (unique per caller and call,
-- chosen by the caller), seq numbers the permits of a cost > 1. The key lives until its last
-- permit times out.

local function read(call, key, limit, window, burst, cost)
  local now = call.now
  local count = redis.call('ZCOUNT', key, '(' .. int(now), '+inf')
  return count + cost <= limit, count
end

-- The time until c permits fit beside the count held: (count + c - limit) must time out; the
-- last of them to go is the k-th soonest.
local function wait_for(c, key, live, count, limit, now)
  local k = count + c - limit
  local permit = redis.call('ZRANGEBYSCORE', key, live, '+inf', 'WITHSCORES', 'LIMIT', k - 1, 1)
  return tonumber(permit[2]) - now
end

local function finish(call, key, limit, window, burst, cost, consume, _, _, _, allowed, count)
  local now = call.now
  local live = '(' .. int(now)
  if consume then
    -- Permits their holders never released come back here, in the same atomic call.
    redis.call('ZREMRANGEBYSCORE', key, '-inf', int(now))
    local expires = now + window
    add_members(key, expires, call.id, 0, cost, window)
    count = redis.call('ZCARD', key)
    local newest = redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')
    redis.call('PEXPIRE', key, ttl(call, tonumber(newest[2]) - now))
  end

  local remaining = math.max(0, limit - count)
  local reset_after, next_after, wait = 0, 0, 0
  if count > 0 then
    local newest = redis.call('ZREVRANGEBYSCORE', key, '+inf', live, 'WITHSCORES', 'LIMIT', 0, 1)
    reset_after = tonumber(newest[2]) - now
    next_after = wait_for(remaining + 1, key, live, count, limit, now)
    if remaining > 0 then
      -- Permits taken now time out after this rule's timeout, sooner than older ones after an
      -- edit that shortened it: one more fits when the first of those goes.
      next_after = math.min(next_after, window)
    end
  end
  if count + cost > limit then
    wait = wait_for(cost, key, live, count, limit, now)
  end
  return allowed and 1 or 0, remaining, reset_after, next_after, wait, consume and call.id or -1, 0, 0
end

local function refund(call, key, limit, window, burst, cost, taker, seq)
  local now = call.now
  -- Only permits still counting are given back: one that has timed out was given back already.
  local live = '(' .. int(now)
  local before = redis.call('ZCOUNT', key, live, '+inf')
  remove_members(key, taker, seq, cost, window)
  return redis.call('ZCOUNT', key, live, '+inf') < before and 1 or 0
end

return { read = read, finish = finish, refund = refund }
