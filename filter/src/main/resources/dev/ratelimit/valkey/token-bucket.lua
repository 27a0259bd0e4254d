-- token-bucket.lua: a bucket of `burst` tokens refilled at `limit` tokens per `window`.
--
-- A chunk of the limiter script: it returns the two functions the dispatcher calls for every
-- rule of this algorithm. The prelude's helpers (idiv, cdiv, int, ttl, fields, bucket_debt) are
-- in scope.
--
-- read(key, now, limit, window, burst, cost) -> allowed, d, expires
--   key      the state key (KEYS[i])
--   now      the time in ms (server TIME or the client's clock)
--   limit    tokens added per window; window in ms; burst = the bucket's capacity
--   cost     tokens this request takes (1 <= cost <= burst, checked by the caller)
-- reads the state and returns this rule's own verdict (a boolean) and what it read;
-- finish(key, now, limit, window, burst, cost, consume, allowed, d, expires)
--   takes the tokens if consume (false: a read-only decision), on what read returned:
--   the dispatcher decides consume from every rule's verdict, so each state is read
--   once per call. Plain values, not a closure or a table: nothing is allocated.
-- finish returns allowed (0/1), remaining, reset_after_ms, wait_ms, all describing the
-- state after any write; wait_ms is the time until a request of this cost would be allowed
-- (0 if it would be now); then the two numbers that undo the write (see refund), here the
-- time of the write and 0, or -1, 0 when nothing was written.
-- refund(key, now, limit, window, burst, cost, taken_at, _) gives back what of the cost the
--   bucket cannot have refilled since: see refundable in the prelude; nothing once a rule of
--   another window or limit has written the state. Returns 1 if it gave any back.
--
-- State: one string "<d>:<ts>:<w>:<l>", the debt d (tokens missing from a full bucket) at ms
-- ts, in ticks of the rule that wrote it: one token is w ticks (its window) and l ticks (its
-- limit) come back per ms. Counting in ticks keeps the refill exact in integers: no
-- fractional token can round a request through early. Keeping the writer's w and l lets an
-- edited rule read the debt in whole tokens (see bucket_debt). A missing key is a full
-- bucket, which is why a full bucket need not be stored at all.
-- Writes a debt of d ticks at ms now, forgotten when it is refilled; a full bucket (d = 0) is
-- a missing key.
local function store(key, now, window, limit, d)
  if d == 0 then
    redis.call('DEL', key)
  else
    redis.call('SET', key, int(d) .. ':' .. int(now) .. ':' .. int(window) .. ':' .. int(limit),
      'PX', ttl(cdiv(d, limit)))
  end
end

local function read(key, now, limit, window, burst, cost)
  local capacity = burst * window
  local need = cost * window

  local d, expires = 0, nil
  local value = redis.call('GET', key)
  if value then
    local stored, ts, w, l = fields(key, value, 4)
    d, expires = bucket_debt(stored, ts, w, l, now, window, limit, burst)
  end

  local allowed = d + need <= capacity
  return allowed, d, expires
end

local function finish(key, now, limit, window, burst, cost, consume, allowed, d, expires)
  local capacity = burst * window
  local need = cost * window
  if consume then
    -- A counted rejection may overdraw the bucket, by at most one full bucket: the hammering
    -- client stays locked out after it stops for at most twice the time to refill.
    d = math.min(d + need, 2 * capacity)
    expires = now + cdiv(d, limit)
    store(key, now, window, limit, d)
  end

  local remaining = 0
  if d < capacity then
    remaining = idiv(capacity - d, window)
  end
  local reset_after, wait = 0, 0
  if d > 0 then
    -- Never past the moment the state itself is forgotten (only an edit makes that earlier).
    reset_after = math.min(cdiv(d, limit), expires - now)
  end
  if d + need > capacity then
    wait = math.min(cdiv(d + need - capacity, limit), expires - now)
  end
  return allowed and 1 or 0, remaining, reset_after, wait, consume and now or -1, 0
end

local function refund(key, now, limit, window, burst, cost, taken_at)
  local value = redis.call('GET', key)
  if not value then
    return 0
  end
  local _, _, w, l = fields(key, value, 4)
  if w ~= window or l ~= limit then
    -- Written since by an edited rule (or another plan): its refill since the units were
    -- taken may have been faster than this rule's, so nothing is known to be owed.
    return 0
  end
  local allowed, d = read(key, now, limit, window, burst, cost)
  local back = refundable(d, now, limit, window, cost, taken_at)
  if back == 0 then
    return 0
  end
  store(key, now, window, limit, d - back)
  return 1
end

return { read = read, finish = finish, refund = refund }
