-- bucket.lua: the bucket the token bucket and GCRA both are, in one place; each of their files
-- only encodes its state (see token-bucket.lua, gcra.lua). Loaded after the prelude, whose
-- helpers are in scope.
--
-- A bucket's state: its debt d (ticks missing from a full bucket) at ms ts, in ticks of the rule
-- that wrote it: one unit is w ticks (its window in ms) and l ticks (its limit) come back per ms.
-- Counting in ticks keeps the refill exact in integers: no fractional unit can round a request
-- through early. Keeping the writer's w and l lets an edited rule read the debt in whole units
-- (see bucket_debt). g is the number of the call that started the debt (see fields in the
-- prelude): a write keeps it only when it adds to a debt read whole, by the rule that wrote it; a
-- debt started on a full bucket (after a reset, say) or read by an edited rule has a new one.
-- Once a refund or a local lease touched it, four numbers more: the stretch [from, to] of refill
-- plain refunds charged (see refundable), and the leases' `lent` and `pool` (see lease_pool). A
-- missing key is a full bucket, which is why a full bucket need not be stored at all.

-- The token bucket's and GCRA's shared model. A bucket's state is its debt at time ts: the
-- units taken and not yet refilled, in ticks of the rule that wrote it (one unit = w ticks,
-- l ticks refilled per ms, so d / w units). Returns the debt now in this rule's ticks and
-- when the stored state is forgotten (nil when there is none).
--
-- A rule edited since the write reads the debt in its own units: the same whole units owed
-- (rounded up, so an edit never grants a fraction of a unit), at most two full buckets of
-- the new rule, refilled at the new rate from ts (requests held for slots under the old rule
-- keep their slots; the new rule reads at most two buckets of their queue). The state is
-- forgotten when the rule that wrote it said it would be full again, so an edit never blocks
-- longer than the old state justified. The same for every call of the rule, whether it may hold
-- its request or not: one state reads one way.
local function bucket_debt(d, ts, w, l, now, window, limit, burst)
  local expires = ts + cdiv(d, l)
  if now >= expires then
    return 0, nil, 0
  end
  -- Written by this very rule (its window and rate): a charge's or a queue's debt of up to
  -- DEBT_BUCKETS buckets; by another (an edit, a plan), at most two of this rule's buckets.
  local bound = (w == window and l == limit) and DEBT_BUCKETS or 2
  if w ~= window then
    d = cdiv(d, w)
    -- Whole units beyond the bound are capped before scaling, so the product stays exact.
    d = math.min(d, bound * burst) * window
  end
  -- A clock that went backwards refills nothing rather than draining the bucket.
  local elapsed = math.max(0, now - ts)
  -- The debt as it is, refilled (raw), beside the one this rule decides on: a charge's debt may
  -- reach DEBT_BUCKETS buckets of the rule that wrote it (dispatcher.lua's mode 3), more than a
  -- rule of a smaller burst (a plan's) holds, which must then neither cut it nor add to it.
  local raw = math.max(0, d - elapsed * limit)
  d = math.min(d, bound * burst * window)
  if elapsed >= cdiv(d, limit) then
    return 0, expires, raw
  end
  return d - elapsed * limit, expires, raw
end

-- The time a bucket's write stamps on its state: never before the time it read there. A call
-- whose clock is behind the state's (a client clock of another thread or instance a few ms
-- behind, a refund sent by a thread that read the clock earlier) reads the debt as stored, with
-- no refill (bucket_debt); written back at its own, earlier, time, the next read would refill the
-- stretch in between a second time, and admit units the bucket never had. Its undo values still
-- name the call's own time, the earlier: a refund then charges more refill, never less. (A take
-- held for a slot names the write's time instead: see finish and held_back.)
local function write_time(now, ts)
  return math.max(now, ts)
end

-- The generation a bucket's write keeps (token bucket, GCRA; see generation): the stored one
-- g when the debt read is the stored debt whole, by the rule that wrote it (same window and
-- limit, nothing cut by a burst lowered since) and not yet refilled; else nil, a new one.
local function kept_generation(g, d, stored, w, l, window, limit, burst)
  if d > 0 and w == window and l == limit and stored <= DEBT_BUCKETS * burst * window then
    return g
  end
  return nil
end

-- The ticks a bucket's refund gives back, the state's new marks, and what it charged the leases'
-- pool. Of the `cost` units a write at ms taken_at took, it gives back all but the refill the
-- bucket would have lost had they not been taken, and never more than the debt now (d), so the
-- bucket never holds more than its burst.
--
-- Without the units, the bucket's debt would have been smaller, and at zero (a full bucket) its
-- refill is lost; with them, it is not. So a refund that gave every tick back would leave the
-- bucket fuller than it would have been. For a plain give-back (a reservation's: floor -1), the
-- bucket without the units is taken as full from taken_at on, all of whose refill is lost, but
-- for the stretch [from, to] (ms) that earlier refunds charged already (the state's marks, 0, 0
-- for none): their units were as good as not taken then, so that refill was lost once, and is
-- charged once. Twenty reservations taken together and cancelled one after another so charge the
-- refill of that time once, not twenty times over, and leave the bucket as a bucket that never
-- lent them. A refund that absorbed all it charged stretches the marks over its own time; one
-- that could not (the units had refilled before) leaves them.
--
-- A local lease's give-back (floor 0 or more, see Lease.java) knows more: the refill this
-- instance's own use of the key lost up to when it sent the give-back (`floor`, ticks), and how
-- long after that its own use would still not have filled the bucket (`headroom`, ticks counted
-- from taken_at), so at most max(floor, refill since taken_at - headroom) was lost; and the store
-- knows that no more was lost than its leases' pool (see lease_pool). It charges the lesser, and
-- leaves the marks where they are.
--
-- Other traffic since only adds debt, which only delays a bucket's filling up: a refund may give
-- back less than it could, never more (the refund fuzz contract checks it against a key that
-- never had the units).
local function refundable(d, now, limit, window, cost, taken_at, from, to, floor, headroom, pool)
  local owed = cost * window
  if floor >= 0 then
    local lost = math.max(0, floor, math.max(0, now - taken_at) * limit - headroom)
    local charge = math.min(lost, pool, owed)
    return math.max(0, math.min(owed - charge, d)), from, to, charge
  end
  local start = math.min(taken_at, now)
  local spans
  if to == 0 or start > to then
    -- No stretch charged, or one before these units were taken: all of their time.
    spans = now - start
  else
    -- Their time less the stretch charged already: before it, and after it.
    spans = math.max(0, math.min(from, now) - start) + math.max(0, now - math.max(to, start))
  end
  local lost = spans * limit
  local back = math.max(0, math.min(owed - lost, d))
  if lost > owed then
    return back, from, to, 0
  end
  if to == 0 or start > to then
    return back, start, now, 0
  end
  return back, math.min(start, from), math.max(to, now), 0
end

-- Whether a plain give-back may take its units out of a bucket whose debt d (ticks, at the key's
-- time now: write_time) is beyond its burst: requests are held for slots to come, each passing
-- at the moment the debt its take left has refilled down to the burst (queue, dispatcher.lua's
-- reply). Taking units out of the middle of that queue would let a later request take the slot
-- freed, beside the requests already held for the slots around it, so that more pass in some
-- stretch than the bucket allows. Only the last request held gives its units back, and then
-- exactly all of them: the debt is still precisely what its take left, refilled since its time
-- taken_at (nothing was taken after it, and only later ones given back, exactly), so the bucket
-- without it never was full meanwhile (its debt stayed above the burst, above the cost). Any
-- other give-back while the debt is beyond the burst gives nothing: the units stay counted and
-- their slot passes unused.
local function held_back(d, now, limit, need, taken_at, queue)
  return queue > 0 and d == queue - math.max(0, now - taken_at) * limit and d >= need
end

-- The accounts of the key's local leases (see Lease.java), kept with its state: `lent`, the
-- ticks that leases took beside their requests' own units (their units and margins) and have
-- not given back yet, and `pool`, the refill the bucket without them may have lost meanwhile,
-- which no give-back was charged yet. What a lease holds unserved is at most what it took, so
-- the bucket without the leases holds a debt of at least d - lent: it can only lose refill while
-- d <= lent. Over dt ms from a stored debt d, that is the refill after d came down to lent. A
-- give-back is charged at most the pool; the last one (nothing lent any more) empties it.
local function lease_pool(d, dt, limit, lent, pool)
  if lent <= 0 then
    return 0
  end
  return pool + math.max(0, math.max(0, dt) * limit - math.max(0, d - lent))
end

-- An algorithm of the limiter script (the interface is in dispatcher.lua) over the state as
-- `decode` reads it and `encode` writes it:
--   decode(key, value) -> stored debt (ticks), ts, w, l, g, from, to, lent, pool
--   encode(d, at, window, limit, gen, from, to, lent, pool) -> the state's value
-- 1 <= cost <= burst, checked by the caller.
-- read returns: verdict, d, expires, gen, at, lent, pool, raw: the debt now, when the state is
--   forgotten (nil: none), the generation a write keeps (nil: a new one), the time a write stamps
--   (write_time), the leases' accounts brought to it, and the debt as stored (refilled).
-- finish takes `lend` of the units for a local lease; its next_ms is when the next whole unit is
--   back, 0 with the bucket full.
-- Undo values: the time of the call (of the write, for a take held for a slot) and the
--   generation. Its refund gives back the cost less the refill the bucket would have lost
--   without it (refundable), and for a lease's give-back its `lend` units leave the leases'
--   accounts; nothing once a rule of another window or limit has written the state, nor to a
--   debt of another generation; and while requests are held for slots to come (see held_back),
--   only the last of them. Returns the ticks it gave back.
local function bucket_algorithm(decode, encode)
  -- Writes a debt of d ticks at ms at, forgotten when it is refilled; a full bucket (d = 0) is
  -- a missing key.
  local function store(call, key, at, window, limit, d, gen, from, to, lent, pool)
    if d == 0 then
      redis.call('DEL', key)
    else
      redis.call('SET', key, encode(d, at, window, limit, gen, from, to, lent, pool),
        'PX', ttl(call, cdiv(d, limit) + at - call.now))
    end
  end

  -- The time until a debt of d ticks allows c units (it must fall to capacity - c * window),
  -- never past the moment the state is forgotten.
  local function wait_for(c, d, window, capacity, limit, expires, now)
    return math.min(cdiv(d + c * window - capacity, limit), expires - now)
  end

  local function read(call, key, limit, window, burst, cost, max_delay)
    local now = call.now
    local d, expires, gen, at, lent, pool, raw = 0, nil, nil, now, 0, 0, 0
    local value = redis.call('GET', key)
    if value then
      local stored, ts, w, l, g, _, _, stored_lent, stored_pool = decode(key, value)
      if w == 0 or l == 0 then
        -- No rule has a window or a limit of 0 (the Java side refuses both): not a state of ours.
        unreadable(key, value)
      end
      d, expires, raw = bucket_debt(stored, ts, w, l, now, window, limit, burst)
      gen = kept_generation(g, d, stored, w, l, window, limit, burst)
      at = write_time(now, ts)
      if gen then
        -- The same debt, by the same rule: its leases are still out.
        lent = stored_lent
        pool = lease_pool(stored, at - ts, limit, stored_lent, stored_pool)
      end
    end
    -- A take within max_delay ms of its slot is allowed now, for that slot (see finish).
    return d + cost * window <= burst * window + max_delay * limit, d, expires, gen, at, lent, pool, raw
  end

  local function finish(call, key, limit, window, burst, cost, consume, _, lend, max_delay, allowed, d, expires, gen,
                        at, lent, pool, raw)
    local now = call.now
    local capacity = burst * window
    local need = cost * window
    -- An allowed take beyond the bucket (within max_delay, by read's verdict) is held for its
    -- slot: when the debt read has refilled enough for it. Its queue is the debt it leaves, in
    -- ticks, from which the caller works out the slot, cdiv(queue - capacity, limit) ms from now,
    -- and its refund whether it is still the last held (see held_back).
    local queue = 0
    if allowed and not call.charge and d + need > capacity then
      queue = d + need
    end
    if consume and call.charge and raw > DEBT_BUCKETS * capacity then
      -- Work done on a key that owes more than this rule's bound already (a larger plan's
      -- debt): nothing more fits, and a write would cut that debt down to this rule's bound.
      allowed = false
      consume = false
    elseif consume then
      local owed
      if call.charge then
        -- Work done: the bucket goes into debt, which refill pays, up to the debt bound.
        allowed = d + need <= DEBT_BUCKETS * capacity
        owed = math.min(d + need, DEBT_BUCKETS * capacity)
      elseif queue > 0 then
        -- A delayed take: into debt, by at most max_delay of refill beyond the bucket (bounded
        -- by the Java side so that it stays below DEBT_BUCKETS buckets).
        owed = d + need
      else
        -- A counted rejection may overdraw the bucket, by at most one full bucket: the
        -- hammering client stays locked out after it stops for at most twice the time to refill.
        owed = math.min(d + need, 2 * capacity)
      end
      -- Never below the debt read: a charge's debt beyond two buckets stays owed.
      d = math.max(d, owed)
      expires = at + cdiv(d, limit)
      gen = generation(call, gen)
      -- A take starts afresh what plain refunds charged (their units are in the debt read).
      store(call, key, at, window, limit, d, gen, 0, 0, lent + lend * window, pool)
    end

    local remaining = 0
    if d < capacity then
      remaining = idiv(capacity - d, window)
    end
    local reset_after, next_after, wait = 0, 0, 0
    if d > 0 then
      next_after = wait_for(remaining + 1, d, window, capacity, limit, expires, now)
      -- Never past the moment the state itself is forgotten (only an edit makes that earlier).
      reset_after = math.min(cdiv(d, limit), expires - now)
    end
    -- A request waits until it would be allowed, delayed by at most max_delay.
    local reach = capacity + max_delay * limit
    if d + need > reach then
      wait = wait_for(cost, d, window, reach, limit, expires, now)
    end
    -- A held take names the time it wrote (write_time), not the call's: held_back finds the last
    -- held by the debt that write left, exactly, also from a client clock behind the state's.
    local taken_at = queue > 0 and at or now
    return allowed and 1 or 0, remaining, reset_after, next_after, wait, consume and taken_at or -1,
      consume and gen or 0, queue
  end

  local function refund(call, key, limit, window, burst, cost, taken_at, charged_gen, floor, headroom, lend)
    local value = redis.call('GET', key)
    if not value then
      return 0
    end
    local _, _, w, l, g, from, to = decode(key, value)
    if w == 0 or l == 0 then
      unreadable(key, value)
    end
    if w ~= window or l ~= limit or g ~= charged_gen then
      -- Written since by an edited rule (or another plan): its refill since the units were
      -- taken may have been faster than this rule's, so nothing is known to be owed; or a debt
      -- started since (a reset): the units are not in it.
      return 0
    end
    local _, d, _, _, at, lent, pool, raw = read(call, key, limit, window, burst, cost, 0)
    if raw > d then
      -- A debt beyond this rule's bound (a charge's of a larger burst): nothing is given back
      -- rather than a debt lowered to this rule's bound.
      return 0
    end
    if floor < 0 and d > burst * window then
      -- Requests are held for slots to come: a give-back would let a later request pass beside
      -- one already held (see held_back).
      -- At the key's time, as its take named (see finish): a give-back whose clock reads behind
      -- the key's last write reads the debt as stored then, and must compare it there.
      if not held_back(d, at, limit, cost * window, taken_at, headroom) then
        return 0
      end
      store(call, key, at, window, limit, d - cost * window, g, from, to, lent, pool)
      return cost * window
    end
    if floor < 0 and headroom > 0 then
      -- A request held for a slot, given back once no request is held: the bucket without it
      -- could not be full before the ms before its slot (nothing but refill lowered the debt
      -- while requests were held, see held_back), so the refill it lost counts from there.
      taken_at = taken_at + math.max(0, cdiv(headroom - burst * window, limit) - 1)
    end
    local back, charge
    back, from, to, charge = refundable(d, at, limit, window, cost, taken_at, from, to, floor, headroom, pool)
    lent = math.max(0, lent - lend * window)
    pool = lent > 0 and math.max(0, pool - charge) or 0
    if back > 0 or lend > 0 then
      store(call, key, at, window, limit, d - back, g, from, to, lent, pool)
    end
    return back
  end

  return { read = read, finish = finish, refund = refund }
end
