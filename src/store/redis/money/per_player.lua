-- Brings one game's and environment's idempotency records to the per-player layout, once:
-- described at `PER_PLAYER_LUA` in `tx_layout.rs`.
if redis.call('HEXISTS', KEYS[1], '~per_player') == 1 then return 0 end
local all = redis.call('HGETALL', KEYS[1])
local moved = 0
for i = 1, #all, 2 do
  local old, record = all[i], all[i + 1]
  -- The record is `<balance>|<player>|<kind>|<currency>|<amount>`: the player is what lies
  -- between the balance and the last three fields (which never hold a `|`).
  local player = string.match(record, '^[^|]*|(.*)|[^|]*|[^|]*|[^|]*$')
  if player then
    local new = string.len(player) .. ':' .. player .. ':' .. old
    redis.call('HSET', KEYS[1], new, record)
    redis.call('HDEL', KEYS[1], old)
    local at = redis.call('ZSCORE', KEYS[2], old)
    if at then
      redis.call('ZADD', KEYS[2], at, new)
      redis.call('ZREM', KEYS[2], old)
    end
    moved = moved + 1
  end
end
redis.call('HSET', KEYS[1], '~per_player', '1')
return moved
