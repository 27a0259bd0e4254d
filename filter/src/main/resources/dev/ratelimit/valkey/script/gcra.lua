-- gcra.lua: the generic cell rate algorithm, the token bucket's model in one timestamp.
--
-- A chunk of the limiter script: the bucket of bucket.lua (read, finish, refund; see there),
-- stored as its theoretical arrival time. Its state is one string "<ms>:<frac>:<ts>:<w>:<l>:<g>",
-- or "<ms>:<frac>:<ts>:<w>:<l>:<from>:<to>:<lent>:<pool>:<g>" once a refund or a local lease
-- touched it: the TAT = ms + frac / l, written at ms ts by a rule of window w and limit l, the
-- marks and the leases' accounts (see bucket.lua), and the generation g last.
--
-- One unit's emission interval is w / l ms. Measured in ticks of 1 / l ms it is exactly w
-- ticks, so d = (TAT - ts) in ticks is an integer: the token bucket's debt, read and written by
-- the same bucket (edits of the rule included). A TAT at or before now (d = 0) is a missing key.

local SHORT = '^(%d+):(%d+):(%d+):(%d+):(%d+):(%d+)$'
local LONG = '^(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+)$'

-- The common form first: one string.match per read for a key no refund or lease touched.
local function decode(key, value)
  local ms, frac, ts, w, l, g = string.match(value, SHORT)
  if ms then
    ms, frac, ts, l = tonumber(ms), tonumber(frac), tonumber(ts), tonumber(l)
    return (ms - ts) * l + frac, ts, tonumber(w), l, tonumber(g), 0, 0, 0, 0
  end
  local from, to, lent, pool
  ms, frac, ts, w, l, from, to, lent, pool, g = string.match(value, LONG)
  if ms then
    ms, frac, ts, l = tonumber(ms), tonumber(frac), tonumber(ts), tonumber(l)
    return (ms - ts) * l + frac, ts, tonumber(w), l, tonumber(g), tonumber(from), tonumber(to), tonumber(lent),
      tonumber(pool)
  end
  -- The form before generations, or an error naming the key.
  ms, frac, ts, w, l, g = fields(key, value, 6)
  return (ms - ts) * l + frac, ts, w, l, g, 0, 0, 0, 0
end

-- The TAT d ticks after ms at: whole ms and the remaining ticks. One format call: this runs on
-- every write.
local function encode(d, at, window, limit, gen, from, to, lent, pool)
  local whole = idiv(d, limit)
  if from == 0 and to == 0 and lent == 0 and pool == 0 then
    return string.format('%d:%d:%d:%d:%d:%d', at + whole, d - whole * limit, at, window, limit, gen)
  end
  return string.format('%d:%d:%d:%d:%d:%d:%d:%d:%d:%d', at + whole, d - whole * limit, at, window, limit, from, to,
    lent, pool, gen)
end

return bucket_algorithm(decode, encode)
