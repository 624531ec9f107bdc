-- Request mixes for wrk, driven by tests/bench/loads.py.
--
-- Script arguments (after wrk's "--"):
--   /path=weight         one entry of the mix (WebBench: seeds-digest §000), at least one
--   version=1.0          send HTTP/1.0 requests: one request per connection (wrk reconnects)
--   cookie=NAME:v1,v2    send "NAME=<value>" cookies, the value cycling over v1, v2, ...
--   new-visitor=N        ... except on every N-th request, which carries no cookie
--
-- Every thread builds the same deterministic cycle of requests: the paths by smooth
-- weighted round robin (nginx's upstream algorithm: each path spread evenly over the
-- cycle instead of bunched), cookies cycling independently; each thread starts at its own
-- offset in it. response() counts statuses, X-Server values, "content-type server" pairs
-- (which pool answered which kind of file) and Set-Cookie headers. done() prints one line
-- "WEBBENCH_RESULT <json>" with wrk's summary and those counts.

local threads = {}
local thread_count = 0

function setup(thread)
   thread:set("thread_index", thread_count)
   thread_count = thread_count + 1
   table.insert(threads, thread)
end

local sequence = {}
local position = 0
statuses = {}  -- globals: read back from each thread in done()
servers = {}
routes = {}
set_cookies = { count = 0 }

local function parse_args(args)
   local options = { mix = {}, cookies = {}, version = "1.1", new_visitor = 0 }
   for _, arg in ipairs(args) do
      local path, weight = arg:match("^(/.*)=(%d+)$")
      local key, value = arg:match("^([%w-]+)=(.*)$")
      if path then
         table.insert(options.mix, { path = path, weight = tonumber(weight), current = 0 })
      elseif key == "version" then
         options.version = value
      elseif key == "new-visitor" then
         options.new_visitor = tonumber(value)
      elseif key == "cookie" then
         local name, list = value:match("^([^:]+):(.+)$")
         local values = {}
         for v in list:gmatch("[^,]+") do table.insert(values, v) end
         table.insert(options.cookies, { name = name, values = values })
      else
         error("bad argument: " .. arg)
      end
   end
   assert(#options.mix > 0, "no mix given: pass /path=weight arguments after --")
   return options
end

local function smooth_weighted_paths(entries)
   local total = 0
   for _, entry in ipairs(entries) do total = total + entry.weight end
   local paths = {}
   for i = 1, total do
      local best = nil
      for _, entry in ipairs(entries) do
         entry.current = entry.current + entry.weight
         if best == nil or entry.current > best.current then best = entry end
      end
      best.current = best.current - total
      paths[i] = best.path
   end
   return paths
end

local function gcd(a, b)
   while b ~= 0 do a, b = b, a % b end
   return a
end

local function lcm(a, b) return math.floor(a / gcd(a, b)) * b end  -- LuaJIT: no //

local function cookie_header(options, n)
   if #options.cookies == 0 or (options.new_visitor > 0 and n % options.new_visitor == 0) then
      return nil
   end
   local parts = {}
   for _, cookie in ipairs(options.cookies) do
      table.insert(parts, cookie.name .. "=" .. cookie.values[n % #cookie.values + 1])
   end
   return table.concat(parts, "; ")
end

local function build_cycle(options)
   local paths = smooth_weighted_paths(options.mix)
   local length = #paths
   if #options.cookies > 0 then
      length = lcm(length, math.max(options.new_visitor, 1))
      for _, cookie in ipairs(options.cookies) do length = lcm(length, #cookie.values) end
   end
   local cycle = {}
   for n = 0, length - 1 do
      local cookie = cookie_header(options, n)
      local request = wrk.format("GET", paths[n % #paths + 1], cookie and { Cookie = cookie } or nil)
      if options.version == "1.0" then
         request = request:gsub(" HTTP/1%.1\r\n", " HTTP/1.0\r\n", 1)
      end
      cycle[n + 1] = request
   end
   return cycle
end

function init(args)
   sequence = build_cycle(parse_args(args))
   -- 37 is prime to the WebBench cycle (99) and small, so threads start at distinct points.
   position = (thread_index * 37) % #sequence
end

function request()
   position = position % #sequence + 1
   return sequence[position]
end

local function header(headers, name)
   -- HAProxy lower-cases header names on HTTP/1, nginx does not.
   return headers[name] or headers[name:lower()]
end

function response(status, headers, body)
   local key = tostring(status)
   statuses[key] = (statuses[key] or 0) + 1
   local server = header(headers, "X-Server") or "none"
   servers[server] = (servers[server] or 0) + 1
   local kind = (header(headers, "Content-Type") or "none"):match("^[^;]+")
   local route = kind .. " " .. server
   routes[route] = (routes[route] or 0) + 1
   if header(headers, "Set-Cookie") then set_cookies.count = set_cookies.count + 1 end
end

local function to_json(value)
   if type(value) == "table" then
      local parts = {}
      for k, v in pairs(value) do
         table.insert(parts, string.format("%q:%s", tostring(k), to_json(v)))
      end
      table.sort(parts)
      return "{" .. table.concat(parts, ",") .. "}"
   end
   return tostring(value)
end

local function merge_counts(name)
   local merged = {}
   for _, thread in ipairs(threads) do
      for k, v in pairs(thread:get(name)) do merged[k] = (merged[k] or 0) + v end
   end
   return merged
end

function done(summary, latency, requests)
   local result = {
      requests = summary.requests,
      duration_us = summary.duration,
      bytes = summary.bytes,
      errors = summary.errors,
      latency_us = {
         mean = math.floor(latency.mean),
         p50 = latency:percentile(50),
         p90 = latency:percentile(90),
         p99 = latency:percentile(99),
         max = latency.max,
      },
      statuses = merge_counts("statuses"),
      servers = merge_counts("servers"),
      routes = merge_counts("routes"),
      set_cookies = merge_counts("set_cookies").count or 0,
   }
   io.write("WEBBENCH_RESULT " .. to_json(result) .. "\n")
end
