-- Keep-alive clients with think time, for the multiplexing benchmark (tests/bench/multiplex.py).
--
-- Script arguments: <path> <think_ms> [<connections per thread>]. Every connection sends
-- one GET for <path>, reads the answer, thinks, and sends the next. The think time is drawn
-- uniformly from [think/2, 3*think/2] so the clients, which all connect at once, drift apart
-- instead of firing in lock step. A new connection sends its first request within
-- min(think, 5 s) of connecting, as a browser does: a proxy rightly times out a connection
-- that stays silent before its first request (HAProxy's "timeout http-request"). wrk
-- calls delay() once per connection first, so the first <connections per thread> calls of
-- a thread are those first requests. done() prints "WEBBENCH_RESULT <json>" like webbench.lua.

local threads = {}
local thread_count = 0

function setup(thread)
   thread:set("thread_index", thread_count)
   thread_count = thread_count + 1
   table.insert(threads, thread)
end

local FIRST_REQUEST_WITHIN_MS = 5000
local request_text = nil
local low, high, first_high = 0, 0, 0
local first_requests = 0  -- delay() calls still to come for connections' first requests
statuses = {}

function init(args)
   assert(#args == 2 or #args == 3, "usage: -- <path> <think_ms> [<connections per thread>]")
   request_text = wrk.format("GET", args[1])
   local think = tonumber(args[2])
   low, high = math.floor(think / 2), math.floor(think * 3 / 2)
   first_high = math.min(think, FIRST_REQUEST_WITHIN_MS)
   first_requests = tonumber(args[3] or "0")
   math.randomseed(1000 + thread_index)
end

function delay()
   if first_requests > 0 then
      first_requests = first_requests - 1
      return math.random(0, first_high)
   end
   return math.random(low, high)
end

function request()
   return request_text
end

function response(status, headers, body)
   local key = tostring(status)
   statuses[key] = (statuses[key] or 0) + 1
end

function done(summary, latency, requests)
   local merged = {}
   for _, thread in ipairs(threads) do
      for k, v in pairs(thread:get("statuses")) do merged[k] = (merged[k] or 0) + v end
   end
   local parts = {}
   for k, v in pairs(merged) do table.insert(parts, string.format("%q:%d", k, v)) end
   local errors = summary.errors
   io.write(string.format(
      'WEBBENCH_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,"statuses":{%s},' ..
      '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"latency_p99_us":%d}\n',
      summary.requests, summary.duration, summary.bytes, table.concat(parts, ","),
      errors.connect, errors.read, errors.write, errors.status, errors.timeout, latency:percentile(99)))
end
