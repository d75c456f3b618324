-- The wallet step over exactly one event: KEYS, ARGV and the reply are described at
-- `ONE_LUA` in `script.rs`.
local function add(key, field, amount)
  redis.call('HINCRBY', key, field, amount)
end
local function step(k, a)
  local wallet = KEYS[k + 3]
  local prev = redis.call('HGET', KEYS[k + 1], ARGV[a + 1])
  if prev then
    local sep = string.find(prev, '|', 1, true)
    if sep and string.sub(prev, sep + 1) == ARGV[a + 9] then
      return 'duplicate', string.sub(prev, 1, sep - 1)
    end
    return 'conflict', '0'
  end
  local kind = ARGV[a + 2]
  local cur = ARGV[a + 3]
  local amount = ARGV[a + 4]
  local level = tonumber(redis.call('GET', KEYS[k + 2]) or '0') or 0
  -- 3 is KillLevel::SdkOff: from that level on the SDK is off and money events are refused,
  -- but for a refund (a purchase of a negative amount), which is the store's, not the game's.
  if level >= 3 and not (kind == 'purchase' and string.byte(amount) == 45) then
    return 'kill', '0'
  end
  local bal = 0
  if kind ~= 'purchase' then
    bal = tonumber(redis.call('HGET', wallet, cur) or '0') or 0
    if kind == 'spent' and ARGV[a + 6] ~= '1' and bal < tonumber(amount) then
      return 'insufficient', string.format('%d', bal)
    end
  end
  -- The first write: refused by the server, it leaves this event unwritten.
  local first
  if kind == 'earned' then
    first = redis.pcall('HINCRBY', wallet, cur, amount)
  elseif kind == 'spent' then
    first = redis.pcall('HINCRBY', wallet, cur, ARGV[a + 5])
  else
    first = redis.pcall('HINCRBY', KEYS[k + 6], ARGV[a + 10], amount)
  end
  if type(first) == 'table' and first.err then return 'error', first.err end
  if kind == 'purchase' then
    add(KEYS[k + 8], ARGV[a + 10], amount)
  else
    bal = first
  end
  -- The player's day total of this kind and currency, and the part above the day cap.
  local left, counted = 0, amount
  if kind == 'earned' or kind == 'spent' then
    local totals = KEYS[k + 9]
    local own = string.sub(kind, 1, 1) .. '|' .. cur .. '|' .. ARGV[a + 10]
    local after = redis.call('HINCRBY', totals, own, amount)
    redis.call('EXPIRE', totals, ARGV[a + 14])
    local cap, v = tonumber(ARGV[a + 13]), tonumber(amount)
    if cap and v then
      local room = cap - (after - v)
      if room < 0 then room = 0 end
      if v > room then
        left = v - room
        counted = string.format('%d', room)
        local l = string.format('%d', left)
        local held = redis.call('HINCRBY', totals, 'x' .. own, l)
        add(KEYS[k + 5], 'x' .. kind .. ':' .. cur, l)
        if held == left then add(KEYS[k + 5], 'c' .. kind .. ':' .. cur, 1) end
      end
    end
  end
  local b = string.format('%d', bal)
  redis.call('HSET', KEYS[k + 1], ARGV[a + 1], b .. '|' .. ARGV[a + 9])
  redis.call('ZADD', KEYS[k + 7], ARGV[a + 11], ARGV[a + 1])
  redis.call('RPUSH', KEYS[k + 4], ARGV[a + 8] .. ',"balance_after":' .. b .. '}')
  local cohort = ARGV[a + 12]
  if kind == 'earned' or kind == 'spent' then
    local field = kind .. ':' .. cur
    add(KEYS[k + 5], field, counted)
    if cohort ~= '' then add(KEYS[k + 5], field .. '@' .. cohort, counted) end
  elseif ARGV[a + 7] == '1' then
    add(KEYS[k + 5], 'rev_c', amount)
  else
    add(KEYS[k + 5], 'rev_t', amount)
  end
  -- A refund (a purchase of a negative amount) also counts what the stores took back.
  if kind == 'purchase' and tonumber(amount) < 0 then
    add(KEYS[k + 5], 'refunded', ARGV[a + 5])
  end
  return 'applied', b, string.format('%d', left)
end
local outcome, balance, left = step(0, 0)
return {outcome, balance, left or '0'}
