-- sliding-window-counter.lua: the current and previous fixed windows, the previous one
-- weighted by how much of it still overlaps the sliding window.
--
-- An algorithm of the limiter script (the interface is in dispatcher.lua).
-- read returns: verdict, cur, prev, expires, gen.
-- Its next_ms is when one more unit fits beside the remaining ones taken now; 0 with nothing
-- counted in either window.
-- Undo values: the start of the window charged and the state's generation. Its refund takes the
-- cost off the count of that window, if it is still the current one and its count is still the
-- one the units went into. A window that has rolled over is left alone: its count already weighs
-- as the previous window's, and the weight it had when decisions were made is history.
--
-- State: one string "<s>:<tw>:<c>:<p>:<x>:<g>": c units counted in the window starting at ms
-- s, the last of them at ms tw; p units in the window before it (so before s); the state is
-- forgotten at ms x (the end of the window after s, when c stops weighing). g is the number of
-- the call that started the count c (see fields in the prelude): a write keeps it only when it
-- adds to c as it is, every unit of it, in the same window s; a count moved to another window
-- or cut by an edit, or started after a reset, has a new one, and a refund of another
-- generation gives nothing back.
--
-- Reading it places each count in the window of the current rule that its latest unit could
-- fall in: c in the current window if tw is in it, else in the previous one, else nowhere;
-- p likewise with its latest possible time s - 1. For an unedited rule that is exactly "c is
-- the current count, or the previous one a window later". For an edited window it never
-- counts a unit in an older window than it may have come in (never granting more than the
-- new rule allows), and x keeps the old rule's end (never blocking longer than it said).
--
-- The estimate is  cur + prev * (window - elapsed) / window.  Everything below is that
-- estimate multiplied by `window`, so it stays in integers and the comparison is exact.
-- Writes the state "<s>:<tw>:<c>:<p>:<x>" (see above), which lives until x.
local function store(call, key, s, tw, c, p, x, g)
  redis.call('SET', key, string.format('%d:%d:%d:%d:%d:%d', s, tw, c, p, x, g), 'PX', ttl(call, x - call.now))
end

-- The time until c units fit, for counts that do not let them in now (c <= limit): the
-- estimate cur + prev × (window - e) / window must fall to limit - c.
local function wait_for(c, cur, prev, elapsed, window, limit)
  -- Inside this window the previous count's weight must fall to `room`:
  -- prev * (window - e) <= room  <=>  e >= window - floor(room / prev).
  local room = (limit - c - cur) * window
  local at = window
  if room >= 0 and prev > 0 then
    at = window - idiv(room, prev)
  end
  if at < window then
    return at - elapsed
  end
  -- Otherwise in the next window, where this window's count is the previous one:
  -- cur * (window - e) <= (limit - c) * window  <=>  e >= window - floor(...).
  local next_at = 0
  if cur > 0 then
    next_at = math.max(0, window - idiv((limit - c) * window, cur))
  end
  return (window - elapsed) + next_at
end

local function read(call, key, limit, window, burst, cost)
  local now = call.now
  local start = now - now % window
  local elapsed = now - start

  local cur, prev, expires, gen = 0, 0, nil, nil
  local value = redis.call('GET', key)
  if value then
    local s, tw, c, p, x, g = fields(key, value, 6)
    if now < x then
      expires = x
      if s == start and c <= DEBT_BUCKETS * limit then
        -- This window's count, read whole: a write adds to it, in its generation.
        gen = g
      end
      if tw >= start then
        cur = cur + c
      elseif tw >= start - window then
        prev = prev + c
      end
      if s > start then
        cur = cur + p
      elseif s > start - window then
        prev = prev + p
      end
    end
  end
  -- A count above the limit (a charge's debt, or an edit that lowered the limit) weighs as
  -- counted, up to the debt bound, which keeps every product in exact range; the counts as they
  -- are (raw) tell a charge whether the key owes more than this rule's bound already.
  local cur_raw, prev_raw = cur, prev
  cur = math.min(cur, DEBT_BUCKETS * limit)
  prev = math.min(prev, DEBT_BUCKETS * limit)

  local prev_weight = prev * (window - elapsed)
  local allowed = (cur + cost) * window + prev_weight <= limit * window

  return allowed, cur, prev, expires, gen, cur_raw, prev_raw
end

local function finish(call, key, limit, window, burst, cost, consume, _, _, _, allowed, cur, prev, expires, gen,
                      cur_raw, prev_raw)
  local now = call.now
  local start = now - now % window
  local elapsed = now - start
  local prev_weight = prev * (window - elapsed)
  if consume and call.charge and (cur_raw > DEBT_BUCKETS * limit or prev_raw > DEBT_BUCKETS * limit) then
    -- Work done on a key that owes more than this rule's bound already (a larger plan's debt):
    -- nothing more fits, and a write would cut that debt down to this rule's bound.
    allowed = false
    consume = false
  elseif consume then
    if call.charge then
      -- Work done: counted in this window beyond the limit, up to the debt bound; it weighs on
      -- this window and, as the previous one, on the next.
      allowed = cur + cost <= DEBT_BUCKETS * limit
      cur = math.min(cur + cost, DEBT_BUCKETS * limit)
    else
      -- A counted rejection can fill the window but not overfill it: past `limit` the window
      -- rejects anyway, and an unbounded count would only lengthen the lockout into the next one.
      cur = math.min(cur + cost, math.max(limit, cur))
    end
    -- The current count weighs on decisions until the end of the next window.
    expires = start + 2 * window
    gen = generation(call, gen)
    store(call, key, start, now, cur, prev, expires, gen)
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

  local next_after, wait = 0, 0
  if remaining < limit then
    -- A client that takes its remaining units now gets the next one soonest: units taken in
    -- this window weigh less once it ends, so more comes when one fits beside all of them.
    next_after = wait_for(1, cur + remaining, prev, elapsed, window, limit)
  end
  if (cur + cost) * window + prev_weight > limit * window then
    wait = wait_for(cost, cur, prev, elapsed, window, limit)
  end
  if expires then
    -- Never past the moment the state itself is forgotten (only an edit makes that earlier).
    reset_after = math.min(reset_after, expires - now)
    next_after = math.min(next_after, expires - now)
    wait = math.min(wait, expires - now)
  end
  return allowed and 1 or 0, remaining, reset_after, next_after, wait, consume and start or -1, consume and gen or 0, 0
end

local function refund(call, key, limit, window, burst, cost, charged_start, charged_gen)
  local now = call.now
  local value = redis.call('GET', key)
  if not value then
    return 0
  end
  local s, tw, c, p, x, g = fields(key, value, 6)
  if s ~= charged_start or g ~= charged_gen or now >= s + window or now >= x then
    return 0
  end
  store(call, key, s, tw, math.max(0, c - cost), p, x, g)
  return 1
end

return { read = read, finish = finish, refund = refund }
