-- sliding-window-counter.lua: the current and previous fixed windows, the previous one
-- weighted by how much of it still overlaps the sliding window.
--
-- A chunk of the limiter script: it returns the two functions the dispatcher calls for every
-- rule of this algorithm. The prelude's helpers (idiv, cdiv, int, ttl, fields) are in scope.
--
-- read(key, now, limit, window, burst, cost) -> allowed, cur, prev, expires
--   key      the state key (KEYS[i])
--   now      the time in ms (server TIME or the client's clock)
--   limit    units per window; window in ms; burst is not used by this algorithm
--   cost     units this request takes (1 <= cost <= limit, checked by the caller)
-- reads the state and returns this rule's own verdict (a boolean) and what it read;
-- finish(key, now, limit, window, burst, cost, consume, allowed, cur, prev, expires)
--   takes the units if consume (false: a read-only decision), on what read returned:
--   the dispatcher decides consume from every rule's verdict, so each state is read
--   once per call. Plain values, not a closure or a table: nothing is allocated.
-- finish returns allowed (0/1), remaining, reset_after_ms, wait_ms, all describing the
-- state after any write; wait_ms is the time until a request of this cost would be allowed
-- (0 if it would be now); then the two numbers that undo the write (see refund), here the
-- start of the window charged and 0, or -1, 0 when nothing was written.
-- refund(key, now, limit, window, burst, cost, start, _) takes the cost off the count of the
--   window that starts at `start`, if that window is still the current one; returns 1 if it
--   gave it back. A window that has rolled over is left alone: its count already weighs as
--   the previous window's, and the weight it had when decisions were made is history.
--
-- State: one string "<s>:<tw>:<c>:<p>:<x>": c units counted in the window starting at ms s,
-- the last of them at ms tw; p units in the window before it (so before s); the state is
-- forgotten at ms x (the end of the window after s, when c stops weighing).
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
local function store(key, now, s, tw, c, p, x)
  redis.call('SET', key, int(s) .. ':' .. int(tw) .. ':' .. int(c) .. ':' .. int(p) .. ':' .. int(x),
    'PX', ttl(x - now))
end

local function read(key, now, limit, window, burst, cost)
  local start = now - now % window
  local elapsed = now - start

  local cur, prev, expires = 0, 0, nil
  local value = redis.call('GET', key)
  if value then
    local s, tw, c, p, x = fields(key, value, 5)
    if now < x then
      expires = x
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
      -- More than a full window of either count decides nothing more (only an edit that
      -- lowered the limit gets here); capping keeps every product in exact range.
      cur = math.min(cur, limit)
      prev = math.min(prev, limit)
    end
  end

  local prev_weight = prev * (window - elapsed)
  local allowed = (cur + cost) * window + prev_weight <= limit * window

  return allowed, cur, prev, expires
end

local function finish(key, now, limit, window, burst, cost, consume, allowed, cur, prev, expires)
  local start = now - now % window
  local elapsed = now - start
  local prev_weight = prev * (window - elapsed)
  if consume then
    -- A counted rejection can fill the window but not overfill it: past `limit` the window
    -- rejects anyway, and an unbounded count would only lengthen the lockout into the next one.
    cur = math.min(cur + cost, math.max(limit, cur))
    -- The current count weighs on decisions until the end of the next window.
    expires = start + 2 * window
    store(key, now, start, now, cur, prev, expires)
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

  local wait = 0
  if (cur + cost) * window + prev_weight > limit * window then
    -- Inside this window the previous count's weight must fall to `room`:
    -- prev * (window - e) <= room  <=>  e >= window - floor(room / prev).
    local room = (limit - cost - cur) * window
    local at = window
    if room >= 0 and prev > 0 then
      at = window - idiv(room, prev)
    end
    if at < window then
      wait = at - elapsed
    else
      -- Otherwise in the next window, where this window's count is the previous one:
      -- cur * (window - e) <= (limit - cost) * window  <=>  e >= window - floor(...).
      local next_at = 0
      if cur > 0 then
        next_at = math.max(0, window - idiv((limit - cost) * window, cur))
      end
      wait = (window - elapsed) + next_at
    end
  end
  if expires then
    -- Never past the moment the state itself is forgotten (only an edit makes that earlier).
    reset_after = math.min(reset_after, expires - now)
    wait = math.min(wait, expires - now)
  end
  return allowed and 1 or 0, remaining, reset_after, wait, consume and start or -1, 0
end

local function refund(key, now, limit, window, burst, cost, charged_start)
  local value = redis.call('GET', key)
  if not value then
    return 0
  end
  local s, tw, c, p, x = fields(key, value, 5)
  if s ~= charged_start or now >= s + window or now >= x then
    return 0
  end
  store(key, now, s, tw, math.max(0, c - cost), p, x)
  return 1
end

return { read = read, finish = finish, refund = refund }
