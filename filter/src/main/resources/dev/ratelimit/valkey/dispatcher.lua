-- dispatcher.lua: the entry point of the limiter script; decides several rules in one call.
--
-- The script the limiter loads is: prelude.lua, then each algorithm's file wrapped as
-- ALGORITHMS['<id>'] = (function() <file> end)(), then this file.
--
-- KEYS[i]   the state key of rule i
-- ARGV[1]   the time in ms from the client's clock, or -1 to read the server's TIME
-- ARGV[2]   1 to acquire, 0 to peek (decide without writing anything), 2 to record a
--           rejection decided elsewhere (a cluster's other slot group rejected the request):
--           only count_rejected rules write, and the request is never allowed
-- ARGV[3..] seven values per rule i, starting at ARGV[3 + 7 * (i - 1)]:
--           algorithm id, limit, window ms, burst, cost, count_rejected (1/0), shadow (1/0)
--
-- Reply: { all_allowed (0/1), then for each rule i: allowed (0/1), remaining,
--          reset_after_ms, wait_ms }
-- where wait_ms is the time until a request of the same cost would be allowed by rule i as
-- its state is after this call (0 if it would be now): a rejected request may retry after
-- the longest wait of its enforcing rules, including rules the rejection itself charged.
--
-- Or an error "RATELIMIT_STATE <i> <message>" when the state of rule i cannot be read (a key
-- of another type, a value in another form): a fault of that key, not of the server.
--
-- All-or-nothing: every rule is decided before any is written. If all allow, all consume;
-- if any rejects, only rules with count_rejected record the attempt and the others are left
-- exactly as they were. A shadow rule only observes: its verdict does not count towards
-- all_allowed, and when the request passes it counts exactly as it would alone.
local now = tonumber(ARGV[1])
if now < 0 then
  -- The server's clock: one clock for every app instance. TIME is allowed in scripts since
  -- scripts replicate their effects, not their source.
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  TTL_SLACK = 10000
end
local mode = ARGV[2]
local acquire = mode == '1'

local rules = {}
for i = 1, #KEYS do
  local base = 3 + 7 * (i - 1)
  local algorithm = ALGORITHMS[ARGV[base]]
  if not algorithm then
    return redis.error_reply('unknown algorithm ' .. tostring(ARGV[base]))
  end
  rules[i] = {
    run = algorithm,
    limit = tonumber(ARGV[base + 1]),
    window = tonumber(ARGV[base + 2]),
    burst = tonumber(ARGV[base + 3]),
    cost = tonumber(ARGV[base + 4]),
    count_rejected = ARGV[base + 5] == '1',
    shadow = ARGV[base + 6] == '1',
  }
end

-- Runs rule i; a failure of its key (WRONGTYPE, an unreadable value, arithmetic on it) ends
-- the script with an error naming the rule. The decide pass reads every key before anything is written, so
-- such a failure leaves every state as it was.
local function run(i, consume_if_allowed, consume_if_rejected)
  local r = rules[i]
  local ok, result = pcall(r.run, KEYS[i], now, r.limit, r.window, r.burst, r.cost,
    consume_if_allowed, consume_if_rejected)
  if not ok then
    -- Only WRONGTYPE and an unreadable value (the prelude's `fields`) are about this key; any
    -- other error (OOM, NOPERM, READONLY after a failover...) is the server's and goes back as
    -- it is, so that it counts as a failure of the store.
    local message = type(result) == 'table' and tostring(result.err) or tostring(result)
    if not (string.find(message, '^WRONGTYPE') or string.find(message, '^state of ')) then
      error(result, 0)
    end
    error('RATELIMIT_STATE ' .. i .. ' ' .. message, 0)
  end
  return result
end

local function decide()
  local results = {}
  local all_allowed = 1
  if mode == '2' then
    all_allowed = 0
    for i = 1, #rules do
      results[i] = run(i, rules[i].count_rejected, rules[i].count_rejected)
    end
  elseif #rules == 1 then
    -- One rule needs no second pass: it decides and writes in one go.
    results[1] = run(1, acquire, acquire and rules[1].count_rejected)
    if not rules[1].shadow then
      all_allowed = results[1][1]
    end
  else
    for i = 1, #rules do
      results[i] = run(i, false, false)
      if results[i][1] == 0 and not rules[i].shadow then
        all_allowed = 0
      end
    end
    if acquire then
      for i = 1, #rules do
        local r = rules[i]
        if all_allowed == 1 then
          -- Enforcing rules all allowed, so they consume; a shadow rule counts as if alone.
          results[i] = run(i, true, (not r.shadow) or r.count_rejected)
        elseif r.count_rejected then
          results[i] = run(i, true, true)
        end
      end
    end
  end

  local reply = { all_allowed }
  for i = 1, #results do
    for j = 1, 4 do
      reply[#reply + 1] = results[i][j]
    end
  end
  return reply
end

local ok, reply = pcall(decide)
if not ok then
  return redis.error_reply(type(reply) == 'table' and tostring(reply.err) or tostring(reply))
end
return reply
