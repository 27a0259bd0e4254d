-- token-bucket.lua: a bucket of `burst` tokens refilled at `limit` tokens per `window`.
--
-- A chunk of the limiter script: the bucket of bucket.lua (read, finish, refund; see there),
-- stored as its debt. Its state is one string "<d>:<ts>:<w>:<l>:<g>", or
-- "<d>:<ts>:<w>:<l>:<from>:<to>:<lent>:<pool>:<g>" once a refund or a local lease touched it:
-- the debt d in ticks at ms ts, the writer's window w and limit l, the marks and the leases'
-- accounts (see bucket.lua), and the generation g last.

local SHORT = '^(%d+):(%d+):(%d+):(%d+):(%d+)$'
local LONG = '^(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+)$'

-- The common form first: one string.match per read for a key no refund or lease touched.
local function decode(key, value)
  local d, ts, w, l, g = string.match(value, SHORT)
  if d then
    return tonumber(d), tonumber(ts), tonumber(w), tonumber(l), tonumber(g), 0, 0, 0, 0
  end
  local from, to, lent, pool
  d, ts, w, l, from, to, lent, pool, g = string.match(value, LONG)
  if d then
    return tonumber(d), tonumber(ts), tonumber(w), tonumber(l), tonumber(g), tonumber(from), tonumber(to),
      tonumber(lent), tonumber(pool)
  end
  -- The form before generations, or an error naming the key.
  d, ts, w, l, g = fields(key, value, 5)
  return d, ts, w, l, g, 0, 0, 0, 0
end

local function encode(d, at, window, limit, gen, from, to, lent, pool)
  -- One format call: this runs on every write.
  if from == 0 and to == 0 and lent == 0 and pool == 0 then
    return string.format('%d:%d:%d:%d:%d', d, at, window, limit, gen)
  end
  return string.format('%d:%d:%d:%d:%d:%d:%d:%d:%d', d, at, window, limit, from, to, lent, pool, gen)
end

return bucket_algorithm(decode, encode)
