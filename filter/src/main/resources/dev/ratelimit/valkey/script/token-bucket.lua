-- token-bucket.lua: a bucket of `burst` tokens refilled at `limit` tokens per `window`.
--
-- A chunk of the limiter script: the bucket of bucket.lua (read, finish, refund; see there),
-- stored as its debt. Its state is one string "<d>:<ts>:<w>:<l>:<g>", or
-- "<d>:<ts>:<w>:<l>:<from>:<to>:<lent>:<pool>:<g>" once a refund or a local lease touched it:
-- the debt d in ticks at ms ts, the writer's window w and limit l, the marks and the leases'
-- accounts (see bucket.lua), and the generation g last.

local LONG = '^(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+):(%d+)$'

local function decode(key, value)
  local d, ts, w, l, from, to, lent, pool, g = string.match(value, LONG)
  if d then
    return tonumber(d), tonumber(ts), tonumber(w), tonumber(l), tonumber(g), tonumber(from), tonumber(to),
      tonumber(lent), tonumber(pool)
  end
  local g5
  d, ts, w, l, g5 = fields(key, value, 5)
  return d, ts, w, l, g5, 0, 0, 0, 0
end

local function encode(d, at, window, limit, gen, from, to, lent, pool)
  local head = int(d) .. ':' .. int(at) .. ':' .. int(window) .. ':' .. int(limit) .. ':'
  if from == 0 and to == 0 and lent == 0 and pool == 0 then
    return head .. int(gen)
  end
  return head .. int(from) .. ':' .. int(to) .. ':' .. int(lent) .. ':' .. int(pool) .. ':' .. int(gen)
end

return bucket_algorithm(decode, encode)
