-- prelude.lua: integer helpers shared by every algorithm of the limiter script.
--
-- Valkey's Lua numbers are IEEE doubles. Integers are exact up to 2^53, and the Java side
-- refuses a rule whose largest product (max(limit, burst) x window in ms) passes 2^50, so
-- every value below stays an exact integer as long as divisions go through these helpers.

-- floor(a / b) for integers a >= 0 and b > 0. The double division can round up across an
-- integer for large operands; the two comparisons put the quotient back where it belongs.
local function idiv(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

-- ceil(a / b) for integers a >= 0 and b > 0: "never early" waits are always rounded up.
local function cdiv(a, b)
  local q = idiv(a, b)
  if q * b < a then
    q = q + 1
  end
  return q
end

-- An integer as decimal text. Lua 5.1 turns numbers into text with "%.14g", which would
-- write a 15-digit value in exponent form; state strings and score bounds must not. A state of
-- several numbers is written with one string.format of "%d"s instead: it is on every write.
local function int(x)
  return string.format('%d', x)
end

-- The call being run, passed to every algorithm function as `call` (nothing of a call is kept
-- in the library between calls):
--   call.now        its time in ms: ARGV[1] from the client's clock, or -1 for the server's TIME
--                   (one clock for every app instance; TIME is allowed since effects, not code,
--                   are replicated)
--   call.id         the number the caller chose for it (a deciding call's ARGV[3]; 0 for a
--                   refund): a state it starts is of this generation, and a concurrency rule
--                   names its permits after it
--   call.ttl_slack  extra life given to every key when time comes from the client's clock: the
--                   app servers' clocks need not agree with the server's, and every state
--                   records its own expiry in its value, so the TTL only has to outlive it,
--                   never to match it
local function begin_call(time_argument, id)
  -- The server's clock is asked for as "-1": compared as text, it needs no number parsed (any
  -- other text is parsed, and one that is no number fails the call).
  local now = -1
  if time_argument ~= '-1' then
    now = tonumber(time_argument)
  end
  if now < 0 then
    local time = redis.call('TIME')
    return { now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000), id = id, ttl_slack = 0 }
  end
  return { now = now, id = id, ttl_slack = 10000 }
end

-- How far a charge (work done, its cost known after the response; dispatcher.lua's mode 3) may
-- put a key beyond its quota: at most this many full windows (fixed window, sliding window
-- counter) or buckets (token bucket, GCRA) counted, so that every product stays below 2^53 (the
-- Java side bounds limit x window by 2^50). What goes beyond is dropped, and the charge says so.
local DEBT_BUCKETS = 8

-- The TTL, in ms, for a state that stops mattering `ms` from the call's now.
local function ttl(call, ms)
  return ms + call.ttl_slack
end

-- The fields of a state value "<n>:<n>:...", as numbers, by a pattern of that many "(%d+)"
-- joined by ':'; an error (a data error of this one key, reported by the dispatcher) when the
-- value is not in that form. One string.match, no table: this runs on every decision.
--
-- The last field of every string state is its generation: the number of the call (call.id)
-- that started the units it holds. A refund names the generation it charged and gives nothing
-- back to a state of another one, so units taken after a reset, or after an edit dropped the
-- reservation's units, are never given back in its place. A value of the form before
-- generations (one field fewer) reads as generation 0, which no call has: it gives nothing back.
local FIELDS = { [2] = '^(%d+):(%d+)$', [3] = '^(%d+):(%d+):(%d+)$', [4] = '^(%d+):(%d+):(%d+):(%d+)$',
  [5] = '^(%d+):(%d+):(%d+):(%d+):(%d+)$', [6] = '^(%d+):(%d+):(%d+):(%d+):(%d+):(%d+)$' }
-- The error of a state no rule of the limiter wrote (reported for its key and rule).
local function unreadable(key, value)
  error('state of ' .. key .. ' is not in the expected form: ' .. value, 0)
end

local function fields(key, value, count)
  local a, b, c, d, e, f = string.match(value, FIELDS[count])
  if not a then
    a, b, c, d, e, f = string.match(value .. ':0', FIELDS[count])
  end
  if not a then
    unreadable(key, value)
  end
  return tonumber(a), tonumber(b), tonumber(c), tonumber(d), tonumber(e), tonumber(f)
end

-- The generation a write gives its state: the one it read when the write keeps every unit of
-- it (`kept`, the read's generation or nil), else a new one, this call's number. A state of the
-- form before generations (0) starts a new one too.
local function generation(call, kept)
  if kept and kept > 0 then
    return kept
  end
  return call.id
end

-- The call format's counts (values per rule in a deciding call's ARGV and in its reply, and in a
-- refund's ARGV) are not written here: ScriptFormat.java owns them and LimiterScript puts them
-- in front of this file, as RULE_ARGS, RULE_REPLY and REFUND_ARGS; dispatcher.lua and
-- refund.lua document the format.

-- The sliding log's and the concurrency permits' sorted-set members: one per unit,
-- "<ms>:<seq>:<window>", seq zero-padded so that members of one millisecond sort in the order
-- they were added (a permit has its call's number where the log has the ms). A log's member
-- also names the call that added it, "<ms>:<seq>:<call>:<window>": seq restarts once the
-- members of a millisecond are gone (a reset), the call's number never does, so a refund
-- removes its own units and never those of a later call that reused their ms and seq. A call
-- adds or removes them in batches: Lua takes a bounded number of arguments.
local MEMBER_BATCH = 500

local function member(ms, seq, window, call)
  if call then
    return string.format('%d:%012d:%d:%d', ms, seq, call, window)
  end
  return string.format('%d:%012d:%d', ms, seq, window)
end

-- Adds the `cost` members ms:seq.. of this window (and call, if given), all with the given score.
local function add_members(key, score, ms, seq, cost, window, call)
  local i = 0
  while i < cost do
    local args = {}
    for j = i, math.min(cost, i + MEMBER_BATCH) - 1 do
      args[#args + 1] = int(score)
      args[#args + 1] = member(ms, seq + j, window, call)
    end
    redis.call('ZADD', key, unpack(args))
    i = i + MEMBER_BATCH
  end
end

-- Removes exactly the members add_members added, those still there.
local function remove_members(key, ms, seq, cost, window)
  local i = 0
  while i < cost do
    local members = {}
    for j = i, math.min(cost, i + MEMBER_BATCH) - 1 do
      members[#members + 1] = member(ms, seq + j, window)
    end
    redis.call('ZREM', key, unpack(members))
    i = i + MEMBER_BATCH
  end
end
