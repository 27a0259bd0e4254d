-- token-bucket.lua: a bucket of `burst` tokens refilled at `limit` tokens per `window`.
--
-- A chunk of the limiter script: it returns the two functions the dispatcher calls for every
-- rule of this algorithm. The prelude's helpers (idiv, cdiv, int, ttl, fields, bucket_debt) are
-- in scope.
--
-- read(key, now, limit, window, burst, cost) -> allowed, d, expires, gen
--   key      the state key (KEYS[i])
--   now      the time in ms (server TIME or the client's clock)
--   limit    tokens added per window; window in ms; burst = the bucket's capacity
--   cost     tokens this request takes (1 <= cost <= burst, checked by the caller)
-- reads the state and returns this rule's own verdict (a boolean) and what it read;
-- finish(key, now, limit, window, burst, cost, consume, allowed, d, expires, gen)
--   takes the tokens if consume (false: a read-only decision), on what read returned:
--   the dispatcher decides consume from every rule's verdict, so each state is read
--   once per call. Plain values, not a closure or a table: nothing is allocated.
-- finish returns allowed (0/1), remaining, reset_after_ms, next_ms, wait_ms, all describing
-- the state after any write; next_ms is the time until more quota is made available (the
-- effective window, draft-11's t: when the next whole unit is back; 0 with the bucket full); wait_ms is the time until a request of this cost
-- would be allowed (0 if it would be now); then the two numbers that undo the write (see refund), here the
-- time of the write and the state's generation, or -1, 0 when nothing was written.
-- refund(key, now, limit, window, burst, cost, taken_at, gen) gives back what of the cost the
--   bucket cannot have refilled since: see refundable in the prelude; nothing once a rule of
--   another window or limit has written the state, nor to a debt of another generation.
--   Returns 1 if it gave any back.
--
-- State: one string "<d>:<ts>:<w>:<l>:<g>", the debt d (tokens missing from a full bucket) at
-- ms ts, in ticks of the rule that wrote it: one token is w ticks (its window) and l ticks (its
-- limit) come back per ms. g is the number of the call that started the debt (see fields in
-- the prelude): a write keeps it only when it adds to a debt read whole, by the rule that wrote
-- it; a debt started on a full bucket (after a reset, say) or read by an edited rule has a new
-- one. Counting in ticks keeps the refill exact in integers: no
-- fractional token can round a request through early. Keeping the writer's w and l lets an
-- edited rule read the debt in whole tokens (see bucket_debt). A missing key is a full
-- bucket, which is why a full bucket need not be stored at all.
-- Writes a debt of d ticks at ms now, forgotten when it is refilled; a full bucket (d = 0) is
-- a missing key.
local function store(key, now, window, limit, d, gen)
  if d == 0 then
    redis.call('DEL', key)
  else
    redis.call('SET', key, int(d) .. ':' .. int(now) .. ':' .. int(window) .. ':' .. int(limit) .. ':' .. int(gen),
      'PX', ttl(cdiv(d, limit)))
  end
end

-- The time until a debt of d ticks allows c units (it must fall to capacity - c * window), never
-- past the moment the state is forgotten.
local function wait_for(c, d, window, capacity, limit, expires, now)
  return math.min(cdiv(d + c * window - capacity, limit), expires - now)
end

local function read(key, now, limit, window, burst, cost)
  local capacity = burst * window
  local need = cost * window

  local d, expires, gen = 0, nil, nil
  local value = redis.call('GET', key)
  if value then
    local stored, ts, w, l, g = fields(key, value, 5)
    d, expires = bucket_debt(stored, ts, w, l, now, window, limit, burst)
    gen = kept_generation(g, d, stored, w, l, window, limit, burst)
  end

  local allowed = d + need <= capacity
  return allowed, d, expires, gen
end

local function finish(key, now, limit, window, burst, cost, consume, allowed, d, expires, gen)
  local capacity = burst * window
  local need = cost * window
  if consume then
    -- A counted rejection may overdraw the bucket, by at most one full bucket: the hammering
    -- client stays locked out after it stops for at most twice the time to refill.
    d = math.min(d + need, 2 * capacity)
    expires = now + cdiv(d, limit)
    gen = generation(gen)
    store(key, now, window, limit, d, gen)
  end

  local remaining = 0
  if d < capacity then
    remaining = idiv(capacity - d, window)
  end
  local reset_after, next_after, wait = 0, 0, 0
  if d > 0 then
    next_after = wait_for(remaining + 1, d, window, capacity, limit, expires, now)
    -- Never past the moment the state itself is forgotten (only an edit makes that earlier).
    reset_after = math.min(cdiv(d, limit), expires - now)
  end
  if d + need > capacity then
    wait = wait_for(cost, d, window, capacity, limit, expires, now)
  end
  return allowed and 1 or 0, remaining, reset_after, next_after, wait, consume and now or -1, consume and gen or 0
end

local function refund(key, now, limit, window, burst, cost, taken_at, charged_gen)
  local value = redis.call('GET', key)
  if not value then
    return 0
  end
  local _, _, w, l, g = fields(key, value, 5)
  if w ~= window or l ~= limit or g ~= charged_gen then
    -- Written since by an edited rule (or another plan): its refill since the units were
    -- taken may have been faster than this rule's, so nothing is known to be owed; or a debt
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
