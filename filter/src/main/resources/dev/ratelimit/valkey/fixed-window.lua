-- fixed-window.lua: a counter per window aligned to the epoch (INCR + EXPIRE NX semantics).
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
-- State: one string "<window start ms>:<count>" that expires when its window ends. The window
-- start is kept in the value, not only in the TTL, so that the client-clock mode (whose time
-- need not match the server's) still sees a new window as empty.
return function(key, now, limit, window, burst, cost, consume_if_allowed, consume_if_rejected)
  -- Windows are aligned to the epoch, so every app instance agrees on where they start.
  local start = now - now % window
  local ends_in = start + window - now

  local count = 0
  local value = redis.call('GET', key)
  if value then
    local stored_start, stored_count = string.match(value, '^(%d+):(%d+)$')
    if tonumber(stored_start) == start then
      count = tonumber(stored_count)
    end
  end

  local allowed = count + cost <= limit
  if (allowed and consume_if_allowed) or (not allowed and consume_if_rejected) then
    count = count + cost
    -- The TTL is exactly what is left of the window: the state is worthless after it.
    redis.call('SET', key, int(start) .. ':' .. int(count), 'PX', ends_in)
  end

  local remaining = math.max(0, limit - count)
  local reset_after = 0
  if count > 0 then
    reset_after = ends_in
  end
  local retry_after = 0
  if not allowed then
    -- The next window starts empty and cost <= limit, so its first moment is the answer.
    retry_after = ends_in
  end
  return { allowed and 1 or 0, remaining, reset_after, retry_after }
end
