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
--           only count_rejected rules write, and the request is never allowed; 3 to charge
--           work already done (a cost known after the response): every rule takes its cost
--           whatever it has left, into debt (see DEBT_BUCKETS in the prelude), and its allowed
--           says whether the whole cost was taken (0: the debt reached its bound, the rest dropped)
-- ARGV[3]   a number the caller chose for this call, unique among its calls (1 to 2^53):
--           the permits a concurrency rule takes are named after it, so that a caller whose
--           reply was lost still knows what to release
-- ARGV[4..] RULE_ARGS (9) values per rule i, starting at ARGV[4 + RULE_ARGS * (i - 1)]:
--           algorithm id, limit, window ms, burst, cost, count_rejected (1/0), shadow (1/0),
--           lend: how many of the cost a local lease takes beside the request's own units (a
--           bucket keeps the account, see bucket.lua; 0 for none), max_delay: the ms a request
--           may be admitted ahead of its slot (buckets only, see bucket.lua; 0 for none); for a
--           calendar window (fixed-window only) the window is the text "b0,b1,b2,b3" of four
--           period starts in epoch ms (see fixed-window.lua)
--
-- Reply: { all_allowed (0/1), then RULE_REPLY (8) values for each rule i, from 2 + RULE_REPLY * (i - 1):
--          allowed (0/1), remaining, reset_after_ms, next_ms, wait_ms, undo_where, undo_which, queue }
-- where next_ms is the time until rule i makes more quota available (the effective window,
-- draft-11's t; 0 when none will come, its quota being full; see each algorithm's file), wait_ms
-- is the time until a request of the same cost would be allowed by rule i as its state is after
-- this call (0 if it would be now, delayed by at most its max_delay): a rejected request may
-- retry after the longest wait of its enforcing rules, including rules the rejection itself
-- charged; undo_where and undo_which say what rule i wrote, for refund.lua to give it back
-- (undo_where = -1: rule i wrote nothing); queue is 0 for a request allowed now, and for one a
-- bucket with a max_delay allowed for a slot to come, the debt (ticks) its take left, or would
-- leave (a peek): its slot is cdiv(queue - burst * window, limit) ms after now, and its refund
-- is given it (see held_back in bucket.lua).
--
-- Or an error "RATELIMIT_STATE <i> <message>" when the state of rule i cannot be read (a key
-- of another type, a value in another form): a fault of that key, not of the server.
--
-- All-or-nothing: every rule's state is read once and decided before any is written. If all
-- allow, all consume; if any rejects, only rules with count_rejected record the attempt and the
-- others are left exactly as they were. A shadow rule only observes: its verdict does not count
-- towards all_allowed, and when the request passes it counts exactly as it would alone.
--
-- The algorithm interface, the same for every file in ALGORITHMS (each file documents only its
-- state, what its read returns and what its undo values are):
--
-- read(call, key, limit, window, burst, cost, max_delay) -> verdict, ...
--   call    the call being run (see begin_call in the prelude: its now, id and TTL slack)
--   key     the state key (KEYS[i]); limit, window (ms, or a calendar window's boundaries),
--           burst and cost as the call gave them, checked by the caller (1 <= cost <= limit,
--           or <= burst for a bucket; a charge's cost may be more, see call.charge); max_delay
--           the ms a bucket may admit ahead of a slot (0 for every other algorithm)
--   reads the state and returns the rule's own verdict (a boolean), then what it read (at most
--   seven plain values, so that nothing is allocated for the common one-rule call).
-- finish(call, key, limit, window, burst, cost, consume, count_rejected, lend, max_delay, verdict, ...)
--   takes the units if consume (false: a read-only decision), on what read returned; lend is
--   how many of them a local lease takes (buckets only). With call.charge (mode 3) it takes
--   them whatever the verdict, up to the state's debt bound, and its allowed says whether
--   all were taken; a key owing more than this rule's bound already (a larger plan's debt) is
--   left as it is, and the charge is reported cut. Returns the rule's reply values above,
--   all describing the state after any write.
-- refund(call, key, limit, window, burst, cost, undo_where, undo_which, floor, headroom, lend)
--   gives back units a finish took, if they are still there, never units taken since in their
--   place; floor, headroom and lend only matter to a bucket (see refund.lua). Returns 0 when
--   nothing went back.

-- The rule being run, so that an error can name it: one pcall per call, not one per rule.
local current = 0

-- Where rule i's values start in ARGV, and their offsets from there (RULE_ARGS in all).
local function base(i)
  return 4 + RULE_ARGS * (i - 1)
end
local ALGORITHM, LIMIT, WINDOW, BURST, COST, COUNT_REJECTED, SHADOW, LEND, MAX_DELAY = 0, 1, 2, 3, 4, 5, 6, 7, 8

-- A count that is most often 0 (lend, max_delay): compared as text first, since a number
-- parsed from text costs about as much as a server call's reply, and this is on every rule.
local function count(text)
  if text == '0' then
    return 0
  end
  return tonumber(text)
end

-- Rule i's algorithm and its numbers: algorithm, limit, window, burst, cost, max_delay.
local function rule(ARGV, i)
  local at = base(i)
  -- A calendar window (fixed-window only) comes as its period boundaries "b0,b1,b2,b3", which
  -- are not a number: the algorithm reads the text (see fixed-window.lua).
  return ALGORITHMS[ARGV[at + ALGORITHM]], tonumber(ARGV[at + LIMIT]),
    tonumber(ARGV[at + WINDOW]) or ARGV[at + WINDOW], tonumber(ARGV[at + BURST]), tonumber(ARGV[at + COST]),
    count(ARGV[at + MAX_DELAY])
end

local function counts_rejected(ARGV, i)
  return ARGV[base(i) + COUNT_REJECTED] == '1'
end

local function shadow(ARGV, i)
  return ARGV[base(i) + SHADOW] == '1'
end

local function lend(ARGV, i)
  return count(ARGV[base(i) + LEND])
end

-- Whether rule i takes its units, given its own verdict and the request's.
local function consumes(ARGV, i, mode, verdict, all_allowed)
  if mode == '3' then
    return true
  end
  if mode == '1' and all_allowed == 1 then
    -- Enforcing rules all allowed, so they consume; a shadow rule counts as if alone.
    return verdict or counts_rejected(ARGV, i)
  end
  -- Rejected, here or elsewhere (mode 2): only the attempts that count are recorded.
  return mode ~= '0' and counts_rejected(ARGV, i)
end

-- One rule, the common case: read, decide, finish, with nothing kept in between.
local function decide_one(KEYS, ARGV, call, mode)
  current = 1
  local algorithm, limit, window, burst, cost, delay = rule(ARGV, 1)
  local verdict, a, b, c, d, e, f, g = algorithm.read(call, KEYS[1], limit, window, burst, cost, delay)
  local all_allowed = 0
  if mode ~= '2' and (verdict or shadow(ARGV, 1)) then
    all_allowed = 1
  end
  local consume = consumes(ARGV, 1, mode, verdict, all_allowed)
  -- finish also gets the rule's count_rejected flag (the fixed window reads it, for its t), its
  -- lend (a bucket's leases' account) and max_delay, then what read returned.
  local allowed, remaining, reset_after, next_after, wait, undo_where, undo_which, slot = algorithm.finish(call,
    KEYS[1], limit, window, burst, cost, consume, counts_rejected(ARGV, 1), lend(ARGV, 1), delay, verdict, a, b, c, d,
    e, f, g)
  return { all_allowed, allowed, remaining, reset_after, next_after, wait, undo_where, undo_which, slot }
end

local function decide(KEYS, ARGV, call, mode)
  local n = #KEYS
  if n == 1 then
    return decide_one(KEYS, ARGV, call, mode)
  end
  -- Each rule's numbers (rule's values, parsed once) and its read, whole: its verdict first,
  -- then what finish needs of it.
  local rules, reads = {}, {}
  local all_allowed = mode == '2' and 0 or 1
  -- Every state is read, and every verdict known, before anything is written.
  for i = 1, n do
    current = i
    local r = { rule(ARGV, i) }
    rules[i] = r
    reads[i] = { r[1].read(call, KEYS[i], r[2], r[3], r[4], r[5], r[6]) }
    if not reads[i][1] and not shadow(ARGV, i) then
      all_allowed = 0
    end
  end

  local reply = { all_allowed }
  for i = 1, n do
    current = i
    local r, read = rules[i], reads[i]
    local consume = consumes(ARGV, i, mode, read[1], all_allowed)
    local at = 2 + RULE_REPLY * (i - 1)
    reply[at], reply[at + 1], reply[at + 2], reply[at + 3], reply[at + 4], reply[at + 5], reply[at + 6], reply[at + 7] =
      r[1].finish(call, KEYS[i], r[2], r[3], r[4], r[5], consume, counts_rejected(ARGV, i), lend(ARGV, i), r[6],
        read[1], read[2], read[3], read[4], read[5], read[6], read[7], read[8])
  end
  return reply
end

return function(KEYS, ARGV)
  local call = begin_call(ARGV[1], tonumber(ARGV[3]))
  call.charge = ARGV[2] == '3'
  for i = 1, #KEYS do
    local id = ARGV[base(i) + ALGORITHM]
    if not ALGORITHMS[id] then
      return redis.error_reply('unknown algorithm ' .. tostring(id))
    end
  end
  local ok, reply = pcall(decide, KEYS, ARGV, call, ARGV[2])
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
