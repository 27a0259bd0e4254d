-- sliding-window-counter.lua: the current and previous fixed windows, the previous one
-- weighted by how much of it still overlaps the sliding window.
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
-- State: one hash { w = current window start ms, c = its count, p = previous window's count }.
--
-- The estimate is  cur + prev * (window - elapsed) / window.  Everything below is that
-- estimate multiplied by `window`, so it stays in integers and the comparison is exact.
return function(key, now, limit, window, burst, cost, consume_if_allowed, consume_if_rejected)
  local start = now - now % window
  local elapsed = now - start

  local cur, prev = 0, 0
  local state = redis.call('HMGET', key, 'w', 'c', 'p')
  local stored_start = tonumber(state[1])
  if stored_start == start then
    cur, prev = tonumber(state[2]) or 0, tonumber(state[3]) or 0
  elseif stored_start == start - window then
    -- The stored window has just become the previous one.
    prev = tonumber(state[2]) or 0
  end

  local prev_weight = prev * (window - elapsed)
  local allowed = (cur + cost) * window + prev_weight <= limit * window

  if (allowed and consume_if_allowed) or (not allowed and consume_if_rejected) then
    -- A counted rejection can fill the window but not overfill it: past `limit` the window
    -- rejects anyway, and an unbounded count would only lengthen the lockout into the next one.
    cur = math.min(cur + cost, math.max(limit, cur))
    redis.call('HSET', key, 'w', int(start), 'c', int(cur), 'p', int(prev))
    -- The current count weighs on decisions until the end of the next window.
    redis.call('PEXPIRE', key, 2 * window - elapsed)
  end

  local used = cur * window + prev_weight
  local remaining = 0
  if used < limit * window then
    remaining = idiv(limit * window - used, window)
  end

  local reset_after = 0
  if cur > 0 then
    reset_after = 2 * window - elapsed
  elseif prev > 0 then
    reset_after = window - elapsed
  end

  local retry_after = 0
  if not allowed then
    -- Inside this window the previous count's weight must fall to `room`:
    -- prev * (window - e) <= room  <=>  e >= window - floor(room / prev).
    local room = (limit - cost - cur) * window
    local at = window
    if room >= 0 and prev > 0 then
      at = window - idiv(room, prev)
    end
    if at < window then
      retry_after = at - elapsed
    else
      -- Otherwise in the next window, where this window's count is the previous one:
      -- cur * (window - e) <= (limit - cost) * window  <=>  e >= window - floor(...).
      local next_at = 0
      if cur > 0 then
        next_at = math.max(0, window - idiv((limit - cost) * window, cur))
      end
      retry_after = (window - elapsed) + next_at
    end
  end
  return { allowed and 1 or 0, remaining, reset_after, retry_after }
end
