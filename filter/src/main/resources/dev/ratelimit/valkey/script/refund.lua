-- refund.lua: gives back what an acquiring call of the dispatcher took, rule by rule.
--
-- Registered in the same library as the dispatcher (see dispatcher.lua), as <name>_refund,
-- and called as FCALL <name>_refund <#KEYS> KEYS... ARGV...
--
-- KEYS[i]   the state key of rule i, as in the acquiring call
-- ARGV[1]   the time in ms from the client's clock, or -1 to read the server's TIME
-- ARGV[2..] REFUND_ARGS (10) values per rule i, starting at ARGV[2 + REFUND_ARGS * (i - 1)]:
--           algorithm id, limit, window ms, burst, cost, undo_where, undo_which, floor, headroom,
--           lend: the rule as it was when the units were taken, the units to give back, the two
--           numbers the acquiring call's reply gave for it (what it wrote; see each algorithm's
--           undo values), and for a bucket's local lease what it knows of the refill the bucket
--           would have lost without it and the units its take lent (see refundable and
--           lease_pool in bucket.lua; -1, 0, 0 for a reservation, -1, its slot less one ms, 0
--           for a delayed one)
--
-- Reply: { given_back for each rule i }: 0 when there was nothing left to give back (the state
-- expired, its window rolled over, it was reset, or it cannot be read); else a bucket's ticks
-- given back (its caller keeps its own account of the key by them, see Lease.java), and 1 for
-- the other algorithms.
--
-- Each algorithm's refund gives back at most what was taken and never leaves a state better
-- than empty (a bucket fuller than its burst, a count below zero). Rules are independent: a
-- refund is a correction after the fact, not part of the all-or-nothing decision. Each rule is
-- given back by its algorithm's refund (see the interface in dispatcher.lua).

return function(KEYS, ARGV)
  local call = begin_call(ARGV[1], 0)
  local reply = {}
  for i = 1, #KEYS do
    local base = 2 + REFUND_ARGS * (i - 1)
    local algorithm = ALGORITHMS[ARGV[base]]
    if not algorithm then
      return redis.error_reply('unknown algorithm ' .. tostring(ARGV[base]))
    end
    local ok, given = pcall(algorithm.refund, call, KEYS[i], tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2]),
      tonumber(ARGV[base + 3]), tonumber(ARGV[base + 4]), tonumber(ARGV[base + 5]), tonumber(ARGV[base + 6]),
      tonumber(ARGV[base + 7]), tonumber(ARGV[base + 8]), tonumber(ARGV[base + 9]))
    if not ok then
      -- An unreadable state (another type, another form) keeps what it has; any other error
      -- (OOM, READONLY...) is the server's and goes back as it is.
      local message = type(given) == 'table' and tostring(given.err) or tostring(given)
      if not (string.find(message, '^WRONGTYPE') or string.find(message, '^state of ')) then
        return redis.error_reply(message)
      end
      given = 0
    end
    reply[i] = given
  end
  return reply
end
