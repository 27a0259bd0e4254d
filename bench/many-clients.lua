-- wrk script: each request comes from one of CLIENTS client addresses (default 10,000), as
-- forwarded by a trusted proxy (the filter trusts 127.0.0.1 in bench/http-overhead.sh's "many"
-- runs), so that every request is decided on one of that many keys.
local clients = tonumber(os.getenv("CLIENTS") or "10000")

function setup(thread)
  thread:set("seed", math.random(1, 1000000))
end

function init(args)
  math.randomseed(seed)
end

function request()
  local n = math.random(0, clients - 1)
  local ip = "10." .. math.floor(n / 65536) % 256 .. "." .. math.floor(n / 256) % 256 .. "." .. n % 256
  return wrk.format(nil, nil, { ["X-Forwarded-For"] = ip })
end
