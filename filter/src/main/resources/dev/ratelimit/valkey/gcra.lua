-- gcra.lua: the generic cell rate algorithm, the token bucket's model in one timestamp.
--
-- A chunk of the limiter script: it returns the function the dispatcher calls for every rule
-- of this algorithm. The prelude's helpers (idiv, cdiv, int) are in scope.
--
-- function(key, now, limit, window, burst, cost, consume_if_allowed, consume_if_rejected)
--   key      the state key (KEYS[i])
--   now      the time in ms (server TIME or the client's clock)
--   limit    units per window; window in ms; burst = how many units may arrive at once
--   cost     units this request takes (1 <= cost <= burst, checked by the caller)
--   consume_if_allowed / consume_if_rejected: whether to take the units when this rule's own
--            verdict is allow / reject (both false: a read-only decision)
-- returns { allowed (0/1), remaining, reset_after_ms, retry_after_ms }, all describing the
-- state after any write.
--
-- State: one string "<ms>:<frac>", the theoretical arrival time TAT = ms + frac / limit.
--
-- One unit's emission interval is window / limit ms. Measured in ticks of 1 / limit ms it is
-- exactly `window` ticks, so the arithmetic below works on d = (TAT - now) in ticks, an
-- integer; d plays the part of (capacity - tokens) in the token bucket.
return function(key, now, limit, window, burst, cost, consume_if_allowed, consume_if_rejected)
  local tolerance = burst * window
  local need = cost * window

  local d = 0
  local value = redis.call('GET', key)
  if value then
    local ms, frac = string.match(value, '^(%d+):(%d+)$')
    if ms then
      -- A TAT in the past is "now" (a full bucket). One further ahead than the largest debt
      -- can only come from a clock that went backwards; it is held to that debt.
      d = math.min(math.max(0, (tonumber(ms) - now) * limit + tonumber(frac)), 2 * tolerance)
    end
  end

  local allowed = d + need <= tolerance
  if (allowed and consume_if_allowed) or (not allowed and consume_if_rejected) then
    -- A counted rejection pushes the TAT further, up to one full burst of debt.
    d = math.min(d + need, 2 * tolerance)
    local whole = idiv(d, limit)
    redis.call('SET', key, int(now + whole) .. ':' .. int(d - whole * limit), 'PX', cdiv(d, limit))
  end

  local remaining = 0
  if d < tolerance then
    remaining = idiv(tolerance - d, window)
  end
  local reset_after = cdiv(d, limit)
  local retry_after = 0
  if not allowed then
    retry_after = cdiv(d + need - tolerance, limit)
  end
  return { allowed and 1 or 0, remaining, reset_after, retry_after }
end
