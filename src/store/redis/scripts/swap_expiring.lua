-- Compare-and-swap of a short-lived document, keeping its time to live: KEYS and ARGV are
-- described at `SWAP_EXPIRING_LUA` in `expiring.rs`.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
return 1
