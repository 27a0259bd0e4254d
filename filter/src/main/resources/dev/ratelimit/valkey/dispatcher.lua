-- dispatcher.lua: the entry point of the limiter; decides several rules in one call.
--
-- The limiter loads one Valkey Functions library: prelude.lua, then each algorithm's file
-- wrapped as ALGORITHMS['<id>'] = (function() <file> end)(), then this file, which returns
-- the function the library registers as <name>, called as FCALL <name> <#KEYS> KEYS... ARGV...
-- (and refund.lua, registered as <name>_refund).
-- Everything outside that returned function runs once, when the library is loaded.
--
-- KEYS[i]   the state key of rule i
-- ARGV[1]   the time in ms from the client's clock, or -1 to read the server's TIME
-- ARGV[2]   1 to acquire, 0 to peek (decide without writing anything), 2 to record a
--           rejection decided elsewhere (a cluster's other slot group rejected the request):
--           only count_rejected rules write, and the request is never allowed
-- ARGV[3]   a number the caller chose for this call, unique among its calls (1 to 2^53):
--           the leases a concurrency rule takes are named after it, so that a caller whose
--           reply was lost still knows what to release
-- ARGV[4..] RULE_ARGS (8) values per rule i, starting at ARGV[4 + RULE_ARGS * (i - 1)]:
--           algorithm id, limit, window ms, burst, cost, count_rejected (1/0), shadow (1/0),
--           lend: how many of the cost a local lease takes beside the request's own units (a
--           bucket keeps the account, see bucket.lua; 0 for none); for a calendar window
--           (fixed-window only) the window is the text "b0,b1,b2,b3" of four period starts in
--           epoch ms (see fixed-window.lua)
--
-- Reply: { all_allowed (0/1), then RULE_REPLY (7) values for each rule i, from 2 + RULE_REPLY * (i - 1):
--          allowed (0/1), remaining, reset_after_ms, next_ms, wait_ms, undo_a, undo_b }
-- where next_ms is the time until rule i makes more quota available (the effective window;
-- 0 when none will come, its quota being full; see each algorithm's file), wait_ms is the time until a request of the same cost would be allowed by rule i as
-- its state is after this call (0 if it would be now): a rejected request may retry after
-- the longest wait of its enforcing rules, including rules the rejection itself charged;
-- undo_a and undo_b say what rule i wrote, for refund.lua to give it back (undo_a = -1: rule i
-- wrote nothing).
--
-- Or an error "RATELIMIT_STATE <i> <message>" when the state of rule i cannot be read (a key
-- of another type, a value in another form): a fault of that key, not of the server.
--
-- All-or-nothing: every rule's state is read once and decided before any is written. If all
-- allow, all consume; if any rejects, only rules with count_rejected record the attempt and the
-- others are left exactly as they were. A shadow rule only observes: its verdict does not count towards
-- all_allowed, and when the request passes it counts exactly as it would alone.

-- The rule being run, so that an error can name it: one pcall per call, not one per rule.
local current = 0

-- Rule i's algorithm and its numbers. ARGV of rule i start at 4 + RULE_ARGS * (i - 1).
local function rule(ARGV, i)
  local base = 4 + RULE_ARGS * (i - 1)
  -- A calendar window (fixed-window only) comes as its period boundaries "b0,b1,b2,b3", which
  -- are not a number: the algorithm reads the text (see fixed-window.lua).
  return ALGORITHMS[ARGV[base]], tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]) or ARGV[base + 2],
    tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4])
end

local function counts_rejected(ARGV, i)
  return ARGV[4 + RULE_ARGS * (i - 1) + 5] == '1'
end

local function shadow(ARGV, i)
  return ARGV[4 + RULE_ARGS * (i - 1) + 6] == '1'
end

local function lend(ARGV, i)
  return tonumber(ARGV[4 + RULE_ARGS * (i - 1) + 7])
end

-- Whether rule i takes its units, given its own verdict and the request's.
local function consumes(ARGV, i, mode, verdict, all_allowed)
  if mode == '1' and all_allowed == 1 then
    -- Enforcing rules all allowed, so they consume; a shadow rule counts as if alone.
    return verdict or counts_rejected(ARGV, i)
  end
  -- Rejected, here or elsewhere (mode 2): only the attempts that count are recorded.
  return mode ~= '0' and counts_rejected(ARGV, i)
end

-- One rule, the common case: read, decide, finish, with nothing kept in between.
local function decide_one(KEYS, ARGV, now, mode)
  current = 1
  local algorithm, limit, window, burst, cost = rule(ARGV, 1)
  local verdict, a, b, c, d, e, f = algorithm.read(KEYS[1], now, limit, window, burst, cost)
  local all_allowed = 0
  if mode ~= '2' and (verdict or shadow(ARGV, 1)) then
    all_allowed = 1
  end
  local consume = consumes(ARGV, 1, mode, verdict, all_allowed)
  -- finish also gets the rule's count_rejected flag (the fixed window reads it, for its t) and
  -- its lend (a bucket's leases' account), then what read returned.
  local allowed, remaining, reset_after, next_after, wait, undo_a, undo_b = algorithm.finish(KEYS[1], now, limit,
    window, burst, cost, consume, counts_rejected(ARGV, 1), lend(ARGV, 1), verdict, a, b, c, d, e, f)
  return { all_allowed, allowed, remaining, reset_after, next_after, wait, undo_a, undo_b }
end

local function decide(KEYS, ARGV, now, mode)
  local n = #KEYS
  if n == 1 then
    return decide_one(KEYS, ARGV, now, mode)
  end
  local verdicts, as, bs, cs, ds, es, fs = {}, {}, {}, {}, {}, {}, {}
  local all_allowed = mode == '2' and 0 or 1
  -- Every state is read, and every verdict known, before anything is written.
  for i = 1, n do
    current = i
    local algorithm, limit, window, burst, cost = rule(ARGV, i)
    verdicts[i], as[i], bs[i], cs[i], ds[i], es[i], fs[i] = algorithm.read(KEYS[i], now, limit, window, burst, cost)
    if not verdicts[i] and not shadow(ARGV, i) then
      all_allowed = 0
    end
  end

  local reply = { all_allowed }
  for i = 1, n do
    current = i
    local algorithm, limit, window, burst, cost = rule(ARGV, i)
    local consume = consumes(ARGV, i, mode, verdicts[i], all_allowed)
    local at = 2 + RULE_REPLY * (i - 1)
    reply[at], reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5], reply[at + 6] =
      algorithm.finish(KEYS[i], now, limit, window, burst, cost, consume, counts_rejected(ARGV, i), lend(ARGV, i),
        verdicts[i], as[i], bs[i], cs[i], ds[i], es[i], fs[i])
  end
  return reply
end

return function(KEYS, ARGV)
  local now = clock(ARGV[1])
  CALL_ID = tonumber(ARGV[3])
  for i = 1, #KEYS do
    local id = ARGV[4 + RULE_ARGS * (i - 1)]
    if not ALGORITHMS[id] then
      return redis.error_reply('unknown algorithm ' .. tostring(id))
    end
  end
  local ok, reply = pcall(decide, KEYS, ARGV, now, ARGV[2])
  if ok then
    return reply
  end
  -- Only WRONGTYPE and an unreadable value (the prelude's `fields`) are about the key of the
  -- rule being run; any other error (OOM, NOPERM, READONLY after a failover...) is the
  -- server's and goes back as it is, so that it counts as a failure of the store. The decide
  -- pass reads every key before anything is written, so such a failure leaves every state as
  -- it was.
  local message = type(reply) == 'table' and tostring(reply.err) or tostring(reply)
  if string.find(message, '^WRONGTYPE') or string.find(message, '^state of ') then
    return redis.error_reply('RATELIMIT_STATE ' .. current .. ' ' .. message)
  end
  return redis.error_reply(message)
end
