-- WebBench request mix for wrk (seeds-digest §000), driven by tests/bench/webbench.py.
--
-- Script arguments are "path=weight" pairs. Every thread builds the same deterministic
-- cycle of sum(weights) requests with smooth weighted round robin (nginx's upstream
-- algorithm: each path is spread evenly over the cycle instead of bunched), starts at
-- its own offset in it, and counts statuses and X-Server values of the answers. done()
-- prints one line "WEBBENCH_RESULT <json>" with wrk's summary and those counts.

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

local function parse_mix(args)
   local entries = {}
   for _, arg in ipairs(args) do
      local path, weight = arg:match("^(.+)=(%d+)$")
      assert(path, "bad mix argument: " .. arg)
      table.insert(entries, { path = path, weight = tonumber(weight), current = 0 })
   end
   assert(#entries > 0, "no mix given: pass path=weight arguments after --")
   return entries
end

local function smooth_weighted_cycle(entries)
   local total = 0
   for _, entry in ipairs(entries) do total = total + entry.weight end
   local cycle = {}
   for i = 1, total do
      local best = nil
      for _, entry in ipairs(entries) do
         entry.current = entry.current + entry.weight
         if best == nil or entry.current > best.current then best = entry end
      end
      best.current = best.current - total
      cycle[i] = wrk.format("GET", best.path)
   end
   return cycle
end

function init(args)
   sequence = smooth_weighted_cycle(parse_mix(args))
   -- 37 is prime to any cycle length used here, so threads start at distinct points.
   position = (thread_index * 37) % #sequence
end

function request()
   position = position % #sequence + 1
   return sequence[position]
end

function response(status, headers, body)
   local key = tostring(status)
   statuses[key] = (statuses[key] or 0) + 1
   -- HAProxy lower-cases header names on HTTP/1, nginx does not.
   local server = headers["X-Server"] or headers["x-server"] or "none"
   servers[server] = (servers[server] or 0) + 1
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
   }
   io.write("WEBBENCH_RESULT " .. to_json(result) .. "\n")
end
