-- A versioned write of a collection: KEYS and ARGV are described at `VERSIONED_LUA` in
-- `documents.rs`.
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[2] == '1' then
  if cur ~= ARGV[3] then return 0 end
elseif cur then
  return 0
end
for i = 5, #ARGV, 2 do
  redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
return 1
