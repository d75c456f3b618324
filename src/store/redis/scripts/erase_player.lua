-- Erases one player of one game and environment: KEYS, ARGV and the reply are described at
-- `ERASE_PLAYER_LUA` in `erasure.rs`.
local player, tomb = ARGV[1], ARGV[2]
local days = tonumber(ARGV[3])
local changed = 0

-- Every field of a hash matching a glob pattern, with its value: read whole before any
-- field is changed.
local function scan(key, pattern)
  local found, cursor = {}, '0'
  repeat
    local page = redis.call('HSCAN', key, cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = page[1]
    for i = 1, #page[2], 2 do found[#found + 1] = {page[2][i], page[2][i + 1]} end
  until cursor == '0'
  return found
end

-- Moves a field's value to a new name.
local function move(key, old, new, value)
  redis.call('HDEL', key, old)
  redis.call('HSET', key, new, value)
  changed = changed + 1
end

-- A hash whose field is the player id itself (spends, day spends).
local function by_player(key)
  local value = redis.call('HGET', key, player)
  if value then move(key, player, tomb, value) end
end

changed = changed + redis.call('DEL', KEYS[1])
by_player(KEYS[2])
by_player(KEYS[3])

-- Idempotency records `<len>:<player>:<tx_id>` -> `<balance>|<player>|...`, and their
-- receive times under the same name.
local prefix = string.len(player) .. ':' .. player .. ':'
local renamed = string.len(tomb) .. ':' .. tomb .. ':'
for _, pair in ipairs(scan(KEYS[4], ARGV[6] .. '*')) do
  local old, record = pair[1], pair[2]
  if string.sub(old, 1, #prefix) == prefix then
    local new = renamed .. string.sub(old, #prefix + 1)
    local sep = string.find(record, '|', 1, true)
    if sep and string.sub(record, sep + 1, sep + #player + 1) == player .. '|' then
      record = string.sub(record, 1, sep) .. tomb .. string.sub(record, sep + #player + 1)
    end
    move(KEYS[4], old, new, record)
    local at = redis.call('ZSCORE', KEYS[5], old)
    if at then
      redis.call('ZREM', KEYS[5], old)
      redis.call('ZADD', KEYS[5], at, new)
    end
  end
end

-- Ledger lines: the player's `,"player_id":"<id>",` rewritten in place.
local lines = redis.call('LRANGE', KEYS[6], 0, -1)
for i, line in ipairs(lines) do
  local s, e = string.find(line, ARGV[4], 1, true)
  if s then
    redis.call('LSET', KEYS[6], i - 1, string.sub(line, 1, s - 1) .. ARGV[5] .. string.sub(line, e + 1))
    changed = changed + 1
  end
end

-- Per day: the day spends (field: the player) and the day totals
-- (`<x?><e|s>|<currency>|<player>`).
local suffix = '|' .. player
for d = 0, days - 1 do
  by_player(KEYS[7 + 3 * d])
  by_player(KEYS[8 + 3 * d])
  local totals = KEYS[9 + 3 * d]
  for _, pair in ipairs(scan(totals, '*|' .. ARGV[7])) do
    local old = pair[1]
    local head = string.sub(old, 1, #old - #suffix)
    if string.sub(old, #head + 1) == suffix and string.match(head, '^x?[es]|[^|]*$') then
      move(totals, old, head .. '|' .. tomb, pair[2])
    end
  end
end

-- Experiment exposures: `<kind><variant length>:<variant><player>`.
for k = 7 + 3 * days, #KEYS do
  for _, pair in ipairs(scan(KEYS[k], '*' .. ARGV[7])) do
    local old = pair[1]
    local len, rest = string.match(old, '^.(%d+):(.*)$')
    len = tonumber(len)
    if len and string.sub(rest, len + 1) == player then
      local head = string.sub(old, 1, #old - #player)
      move(KEYS[k], old, head .. tomb, pair[2])
    end
  end
end
return changed
