-- Drops the oldest raw ledger lines received before a time: KEYS, ARGV and the reply are
-- described at `TRIM_LEDGER_LUA` in `retention.rs`.
local lines = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1)
local before = tonumber(ARGV[1])
local n = 0
for _, line in ipairs(lines) do
  local rx = string.match(line, '^{"rx":(%d+),')
  if not rx or tonumber(rx) >= before then break end
  n = n + 1
end
if n > 0 then redis.call('LTRIM', KEYS[1], n, -1) end
return n
