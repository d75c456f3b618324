-- A write and its record in one step: KEYS and ARGV are described at `RECORDED_LUA` in
-- `documents.rs`.
local field = ARGV[1]
local guard = ARGV[2]
if guard ~= 'any' then
  local cur = redis.call('HGET', KEYS[1], field)
  if guard == 'equal' then
    if cur ~= ARGV[3] then return 0 end
  elseif guard == 'absent' then
    if cur then return 0 end
  elseif not cur then
    return 0
  end
end
for i = 8, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
if ARGV[4] == 'set' then
  redis.call('HSET', KEYS[1], field, ARGV[5])
elseif ARGV[4] == 'del' then
  redis.call('HDEL', KEYS[1], field)
end
redis.call('HSETNX', KEYS[3], ARGV[6], ARGV[7])
return 1
