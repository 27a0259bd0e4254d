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
-- write a 15-digit value in exponent form; state strings and score bounds must not.
local function int(x)
  return string.format('%d', x)
end
