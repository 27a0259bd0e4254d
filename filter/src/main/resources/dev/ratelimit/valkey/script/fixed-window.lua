-- fixed-window.lua: a counter per window aligned to the epoch (INCR + EXPIRE NX semantics), or
-- per calendar period (a day, week or month in a time zone; see period below).
--
-- An algorithm of the limiter script (the interface is in dispatcher.lua).
-- read returns: verdict, count, ends, gen (what the state holds now; ends and gen nil for none).
-- Its next_ms is the counted window's end, or the current one's if sooner (after an edit of the
-- window) while a unit is left to take, also with nothing counted.
-- A charge (dispatcher.lua's mode 3) counts in the window of its own time, beyond the limit up
-- to DEBT_BUCKETS windows' worth: the window refuses until it ends, and the debt ends with it.
-- Undo values: the end of the window charged and the state's generation. Its refund gives the
-- cost back to the window that ends there, if that window is still the current one and its count
-- is still the one the units went into.
--
-- State: one string "<end ms>:<count>:<gen>", the units counted in the window that ends at
-- `end`; it expires then. gen is the number of the call that started the count (see fields in
-- the prelude): a count carries every unit of its generation until it expires, so a refund of
-- the same generation finds its units there, and one of a count started since (after a reset,
-- or after an edited window ended the old count early) finds another generation. The end is kept in the value, not only in the TTL, so that the
-- client-clock mode (whose time need not match the server's) still sees a new window as
-- empty. Keeping the end rather than the start also survives an edit of the window: the
-- count weighs until the window it was counted in ends, never longer, and then joins the
-- new rule's window if more units are counted before that.

-- The window containing `now`: its start and end. A rolling window (a number of ms) is aligned
-- to the epoch, so every app instance agrees on where it starts. A calendar window (a day, week
-- or month in a time zone, of varying length) comes as the text "b0,b1,b2,b3": the starts of
-- four consecutive periods the client computed around its own now; the period is the one of
-- the three that holds this call's now, on whichever clock the call runs. A now outside all of
-- them (a clock off the client's by more than a period) is an error, a failure of the call,
-- never a count in a period nobody named.
local function period(now, window)
  if type(window) == 'number' then
    local start = now - now % window
    return start, start + window
  end
  local b0, b1, b2, b3 = string.match(window, '^(%d+),(%d+),(%d+),(%d+)$')
  if not b0 then
    error('RATELIMIT_CALENDAR window is not four period boundaries: ' .. tostring(window), 0)
  end
  b0, b1, b2, b3 = tonumber(b0), tonumber(b1), tonumber(b2), tonumber(b3)
  if now >= b1 and now < b2 then
    return b1, b2
  elseif now >= b0 and now < b1 then
    return b0, b1
  elseif now >= b2 and now < b3 then
    return b2, b3
  end
  error('RATELIMIT_CALENDAR now ' .. int(now) .. ' is outside the calendar periods from ' .. int(b0) .. ' to '
    .. int(b3) .. ': the clocks differ by more than a period', 0)
end

-- Writes count units in the window that ends at `ends`; the TTL is exactly what is left of the
-- window, the state being worthless after it. An empty window (count = 0) is a missing key.
local function store(call, key, ends, count, gen)
  if count == 0 then
    redis.call('DEL', key)
  else
    redis.call('SET', key, string.format('%d:%d:%d', ends, count, gen), 'PX', ttl(call, ends - call.now))
  end
end

local function read(call, key, limit, window, burst, cost)
  local now = call.now
  -- Checked before anything is read: a now outside the calendar's periods decides nothing.
  period(now, window)

  local count, ends, gen = 0, nil, nil
  local value = redis.call('GET', key)
  if value then
    local stored_end, stored_count, stored_gen = fields(key, value, 3)
    if now < stored_end then
      ends, count, gen = stored_end, stored_count, stored_gen
    end
  end

  local allowed = count + cost <= limit
  return allowed, count, ends, gen
end

local function finish(call, key, limit, window, burst, cost, consume, count_rejected, _, _, allowed, count, ends, gen)
  local now = call.now
  local start, stop = period(now, window)
  if consume and call.charge and count >= DEBT_BUCKETS * limit then
    -- Work done on a key that owes this rule's whole bound already (a larger plan's debt):
    -- nothing more fits, and a write would only move the count's end to this rule's window.
    allowed = false
    consume = false
  elseif consume then
    -- The count goes on whole (an edited window only moves its end), so its generation does.
    gen = generation(call, gen)
    if call.charge then
      -- Work done: counted in the window it is charged in, beyond the limit up to the debt bound.
      allowed = count + cost <= DEBT_BUCKETS * limit
      count = math.min(count + cost, DEBT_BUCKETS * limit)
    else
      count = count + cost
    end
    ends = stop
    store(call, key, ends, count, gen)
  end

  local remaining = math.max(0, limit - count)
  -- Units come back only when the window ends, all at once; with nothing counted, the current
  -- aligned window still ends then. A count kept from a rule of another window ends at its own
  -- end, unless a write moves it to this window's end first: the sooner of the two while a unit
  -- can still be taken (the client that takes it moves the end), or an attempt is recorded
  -- (count_rejected, the dispatcher's own flag of the rule). Otherwise nothing can move it, and
  -- more comes only at its own end.
  local next_after = stop - now
  if count > 0 then
    next_after = math.min(ends, stop) - now
    if count >= limit and not count_rejected then
      next_after = ends - now
    end
  end
  local reset_after, wait = 0, 0
  if count > 0 then
    reset_after = ends - now
  end
  if count + cost > limit then
    -- Once the counted window ends the count is gone and cost <= limit: that moment is it.
    wait = ends - now
  end
  return allowed and 1 or 0, remaining, reset_after, next_after, wait, consume and ends or -1, consume and gen or 0, 0
end

local function refund(call, key, limit, window, burst, cost, charged_end, charged_gen)
  local now = call.now
  local value = redis.call('GET', key)
  if not value then
    return 0
  end
  local ends, count, gen = fields(key, value, 3)
  -- A window that has ended (or was replaced by another) is not touched: its count is gone;
  -- nor a count started since the units were taken: they are not among it.
  if ends ~= charged_end or gen ~= charged_gen or now >= ends then
    return 0
  end
  store(call, key, ends, math.max(0, count - cost), gen)
  return 1
end

return { read = read, finish = finish, refund = refund }
