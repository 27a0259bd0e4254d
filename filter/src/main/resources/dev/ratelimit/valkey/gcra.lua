-- gcra.lua: the generic cell rate algorithm, the token bucket's model in one timestamp.
--
-- A chunk of the limiter script: it returns the two functions the dispatcher calls for every
-- rule of this algorithm. The prelude's helpers (idiv, cdiv, int, ttl, fields, bucket_debt) are
-- in scope.
--
-- read(key, now, limit, window, burst, cost) -> allowed, d, expires, gen
--   key      the state key (KEYS[i])
--   now      the time in ms (server TIME or the client's clock)
--   limit    units per window; window in ms; burst = how many units may arrive at once
--   cost     units this request takes (1 <= cost <= burst, checked by the caller)
-- reads the state and returns this rule's own verdict (a boolean) and what it read;
-- finish(key, now, limit, window, burst, cost, consume, allowed, d, expires, gen)
--   takes the units if consume (false: a read-only decision), on what read returned:
--   the dispatcher decides consume from every rule's verdict, so each state is read
--   once per call. Plain values, not a closure or a table: nothing is allocated.
-- finish returns allowed (0/1), remaining, reset_after_ms, next_ms, wait_ms, all describing
-- the state after any write; next_ms is the time until more quota is made available (the
-- effective window, draft-11's t: when the next whole unit is back; 0 with the bucket full); wait_ms is the time until a request of this cost
-- would be allowed (0 if it would be now); then the two numbers that undo the write (see refund), here the
-- time of the write and the state's generation, or -1, 0 when nothing was written.
-- refund(key, now, limit, window, burst, cost, taken_at, gen) moves the TAT back by what of the
--   cost's emission intervals cannot have passed since (see refundable in the prelude), never
--   before now (a full burst); nothing once a rule of another window or limit has written the
--   state, nor to a TAT of another generation; returns 1 if it gave any back.
--
-- State: one string "<ms>:<frac>:<ts>:<w>:<l>:<g>": the theoretical arrival time
-- TAT = ms + frac / l, written at ms ts by a rule of window w and limit l; g its generation,
-- as the token bucket's (see there).
--
-- One unit's emission interval is w / l ms. Measured in ticks of 1 / l ms it is exactly w
-- ticks, so d = (TAT - now) in ticks is an integer; d plays the part of the token bucket's
-- debt, and the same shared model (bucket_debt) reads it, edits of the rule included.
-- Writes the TAT that is d ticks after ms now (whole ms and the remaining ticks), forgotten
-- when it is reached; a TAT at or before now (d = 0) is a missing key.
local function store(key, now, window, limit, d, gen)
  if d == 0 then
    redis.call('DEL', key)
  else
    local whole = idiv(d, limit)
    redis.call('SET', key, int(now + whole) .. ':' .. int(d - whole * limit) .. ':' .. int(now) .. ':'
      .. int(window) .. ':' .. int(limit) .. ':' .. int(gen), 'PX', ttl(cdiv(d, limit)))
  end
end

-- The time until a debt of d ticks allows c units (it must fall to tolerance - c * window), never
-- past the moment the state is forgotten.
local function wait_for(c, d, window, tolerance, limit, expires, now)
  return math.min(cdiv(d + c * window - tolerance, limit), expires - now)
end

local function read(key, now, limit, window, burst, cost)
  local tolerance = burst * window
  local need = cost * window

  local d, expires, gen = 0, nil, nil
  local value = redis.call('GET', key)
  if value then
    local ms, frac, ts, w, l, g = fields(key, value, 6)
    local stored = (ms - ts) * l + frac
    d, expires = bucket_debt(stored, ts, w, l, now, window, limit, burst)
    gen = kept_generation(g, d, stored, w, l, window, limit, burst)
  end

  local allowed = d + need <= tolerance
  return allowed, d, expires, gen
end

local function finish(key, now, limit, window, burst, cost, consume, allowed, d, expires, gen)
  local tolerance = burst * window
  local need = cost * window
  if consume then
    -- A counted rejection pushes the TAT further, up to one full burst of debt.
    d = math.min(d + need, 2 * tolerance)
    expires = now + cdiv(d, limit)
    gen = generation(gen)
    store(key, now, window, limit, d, gen)
  end

  local remaining = 0
  if d < tolerance then
    remaining = idiv(tolerance - d, window)
  end
  local reset_after, next_after, wait = 0, 0, 0
  if d > 0 then
    next_after = wait_for(remaining + 1, d, window, tolerance, limit, expires, now)
    reset_after = math.min(cdiv(d, limit), expires - now)
  end
  if d + need > tolerance then
    wait = wait_for(cost, d, window, tolerance, limit, expires, now)
  end
  return allowed and 1 or 0, remaining, reset_after, next_after, wait, consume and now or -1, consume and gen or 0
end

local function refund(key, now, limit, window, burst, cost, taken_at, charged_gen)
  local value = redis.call('GET', key)
  if not value then
    return 0
  end
  local _, _, _, w, l, g = fields(key, value, 6)
  if w ~= window or l ~= limit or g ~= charged_gen then
    -- Written since by an edited rule (or another plan): its emission since the units were
    -- taken may have been faster than this rule's, so nothing is known to be owed; or a TAT
    -- started since (a reset): the units are not in it.
    return 0
  end
  local allowed, d = read(key, now, limit, window, burst, cost)
  local back = refundable(d, now, limit, window, cost, taken_at)
  if back == 0 then
    return 0
  end
  store(key, now, window, limit, d - back, g)
  return 1
end

return { read = read, finish = finish, refund = refund }
