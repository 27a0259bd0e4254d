-- sliding-log.lua: an exact sliding window kept as a sorted set of request times.
--
-- An algorithm of the limiter script (the interface is in dispatcher.lua).
-- read returns: verdict, count, expires (1 <= cost <= limit <= 10,000, checked by the caller).
-- Its next_ms is when the oldest counted entry leaves the window; 0 with none counted.
-- Undo values: the ms of the entries and the number of the call that added them. Its refund
-- removes exactly those members, those still there (the oldest may have been trimmed since), if
-- they are still in the window of the rule that took them.
--
-- State: a sorted set with one member per unit taken, scored by its time in ms. An entry at
-- time t is inside the window while t > now - window. Members are
-- "<ms>:<seq>:<call>:<window>": seq is zero-padded, so that two units taken in the same
-- millisecond never collapse into one and the set's tie order (lexicographic) is the order they
-- were added in; call is the number of the call that added it (see member in the prelude);
-- window is that of the rule that wrote the entry. The newest entry's time + window is when the whole
-- set is forgotten (its TTL): a later rule with a longer window does not bring back entries
-- the rule that wrote them no longer needed.

-- The time from which the whole set is forgotten: its newest entry's time plus its window.
local function forgotten_at(key)
  local top = redis.call('ZREVRANGE', key, 0, 0, 'WITHSCORES')
  if not top[1] then
    return nil
  end
  local written_by = tonumber(string.match(top[1], ':(%d+)$'))
  if not written_by then
    error('state of ' .. key .. ' is not in the expected form: ' .. top[1], 0)
  end
  return tonumber(top[2]) + written_by
end

-- The time until c units fit beside the count entries in the window: it must shed
-- (count + c - limit) of them; the last of those to leave is the k-th oldest, and it leaves at
-- its time + window (never past the moment the state is forgotten).
local function wait_for(c, key, in_window, count, limit, window, expires, now)
  local k = count + c - limit
  local entry = redis.call('ZRANGEBYSCORE', key, in_window, '+inf', 'WITHSCORES', 'LIMIT', k - 1, 1)
  return math.min(math.max(1, tonumber(entry[2]) + window - now), expires - now)
end

local function read(call, key, limit, window, burst, cost)
  local now = call.now
  local since = now - window
  local in_window = '(' .. int(since)

  local count = 0
  local expires = forgotten_at(key)
  if expires and now >= expires then
    expires = nil
  end
  if expires then
    count = redis.call('ZCOUNT', key, in_window, '+inf')
  end
  local allowed = count + cost <= limit

  return allowed, count, expires
end

local function finish(call, key, limit, window, burst, cost, consume, _, _, _, allowed, count, expires)
  local now = call.now
  local since = now - window
  local seq = -1
  local in_window = '(' .. int(since)
  if consume then
    if expires then
      redis.call('ZREMRANGEBYSCORE', key, '-inf', int(since))
    else
      -- Entries the writing rule already forgot must not come back with this write.
      redis.call('DEL', key)
    end
    -- Continue the sequence of this millisecond after its highest member, if any.
    seq = 0
    local last = redis.call('ZREVRANGEBYSCORE', key, int(now), int(now), 'LIMIT', 0, 1)
    if last[1] then
      seq = tonumber(string.match(last[1], '^%d+:(%d+):')) + 1
    end
    add_members(key, now, now, seq, cost, window, call.id)
    -- Only the newest `limit` entries can ever decide anything: the window holds too many
    -- exactly until the oldest of them leaves. Counting rejected requests therefore never
    -- makes the set larger than the limit.
    redis.call('ZREMRANGEBYRANK', key, 0, -(limit + 1))
    count = redis.call('ZCARD', key)
    expires = forgotten_at(key)
    redis.call('PEXPIRE', key, ttl(call, expires - now))
  end

  local remaining = math.max(0, limit - count)
  local reset_after = 0
  if count > 0 then
    -- Fully restored when the newest entry leaves the window.
    local newest = redis.call('ZREVRANGEBYSCORE', key, '+inf', in_window, 'WITHSCORES', 'LIMIT', 0, 1)
    -- An entry in the window has t > now - window, so this is at least 1 ms.
    reset_after = math.min(tonumber(newest[2]) + window - now, expires - now)
  end

  local next_after, wait = 0, 0
  if count > 0 then
    next_after = wait_for(remaining + 1, key, in_window, count, limit, window, expires, now)
  end
  if count + cost > limit then
    wait = wait_for(cost, key, in_window, count, limit, window, expires, now)
  end
  return allowed and 1 or 0, remaining, reset_after, next_after, wait, consume and now or -1, consume and call.id or 0, 0
end

local function refund(call, key, limit, window, burst, cost, ms, taker)
  local now = call.now
  -- Only entries still in the window are given back: one that has left it no longer counts by
  -- its rule, and stays (a rule edited to a longer window may still count it: removing it would
  -- make room the reply does not report).
  if ms <= now - window then
    return 0
  end
  local in_window = '(' .. int(now - window)
  local before = redis.call('ZCOUNT', key, in_window, '+inf')
  -- The call's members are among those of its millisecond (at most the limit and a cost); at
  -- most `cost` of them go (a settlement by actual cost gives back part of what a call took).
  local mine = {}
  local removed = 0
  local suffix = ':' .. int(taker) .. ':' .. int(window)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, int(ms), int(ms))) do
    if removed + #mine >= cost then
      break
    end
    if string.sub(m, -#suffix) == suffix then
      mine[#mine + 1] = m
      if #mine == MEMBER_BATCH then
        redis.call('ZREM', key, unpack(mine))
        removed = removed + #mine
        mine = {}
      end
    end
  end
  if #mine > 0 then
    redis.call('ZREM', key, unpack(mine))
  end
  -- The TTL is left as it was: the newest entry's time + window decides reads (forgotten_at),
  -- and a TTL that outlives the state by a little costs nothing.
  return redis.call('ZCOUNT', key, in_window, '+inf') < before and 1 or 0
end

return { read = read, finish = finish, refund = refund }
