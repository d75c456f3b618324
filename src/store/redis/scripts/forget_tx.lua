-- Forgets the oldest idempotency records received before a time: KEYS, ARGV and the reply
-- are described at `FORGET_TX_LUA` in `retention.rs`.
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
if #ids == 0 then return 0 end
redis.call('HDEL', KEYS[1], unpack(ids))
redis.call('ZREM', KEYS[2], unpack(ids))
return #ids
