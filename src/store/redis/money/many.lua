-- The wallet step over the events of one call, in order: KEYS, ARGV and the reply are
-- described at `MANY_LUA` in `script.rs`, the rules in that module's documentation.
local call, try = redis.call, redis.pcall
local format, sub, find, byte = string.format, string.sub, string.find, string.byte
local type, tonumber, unpack, ipairs = type, tonumber, unpack, ipairs
local group_count, run_count, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
-- ARGV[runs_at + 2r - 1 .. runs_at + 2r] is run r; the columns start after ids_at.
local runs_at = 3 + 12 * group_count
local ids_at = runs_at + 2 * run_count
local n = (#ARGV - ids_at) / 5
local amounts_at, heads_at = ids_at + n, ids_at + 2 * n
local prints_at, times_at = ids_at + 3 * n, ids_at + 4 * n
local groups, tx_keys, kill_keys = {}, {}, {}
for g = 1, group_count do
  local at = 3 + 12 * (g - 1)
  local group = {
    txs = KEYS[tonumber(ARGV[at + 1])], kill = KEYS[tonumber(ARGV[at + 2])],
    ledger = KEYS[tonumber(ARGV[at + 3])], day = KEYS[tonumber(ARGV[at + 4])],
    spend = KEYS[tonumber(ARGV[at + 5])], txr = KEYS[tonumber(ARGV[at + 6])],
    spend_day = KEYS[tonumber(ARGV[at + 7])], totals = KEYS[tonumber(ARGV[at + 8])],
    code = ARGV[at + 9], cur = ARGV[at + 10], cohort = ARGV[at + 11],
    cap = tonumber(ARGV[at + 12]),
  }
  groups[g] = group
  if not tx_keys[group.txs] then
    tx_keys[group.txs] = true
    tx_keys[#tx_keys + 1] = group.txs
  end
  if not kill_keys[group.kill] then
    kill_keys[group.kill] = true
    kill_keys[#kill_keys + 1] = group.kill
  end
end

-- Every read that may stop the script comes before the first write: the idempotency records
-- of the call's tx ids (one HMGET per tx hash, in the order of its events: with one tx hash,
-- straight from the column) and the kill levels (one GET per kill key).
local got = {}
if #tx_keys == 1 then
  got[tx_keys[1]] = call('HMGET', tx_keys[1], unpack(ARGV, ids_at + 1, ids_at + n))
else
  local ids = {}
  for _, key in ipairs(tx_keys) do ids[key] = {} end
  local e = 0
  for r = 1, run_count do
    local list = ids[groups[tonumber(ARGV[runs_at + 2 * r - 1])].txs]
    for _ = 1, tonumber(ARGV[runs_at + 2 * r]) do
      e = e + 1
      list[#list + 1] = ARGV[ids_at + e]
    end
  end
  for _, key in ipairs(tx_keys) do got[key] = call('HMGET', key, unpack(ids[key])) end
end
local levels = {}
for _, key in ipairs(kill_keys) do levels[key] = tonumber(call('GET', key) or '0') or 0 end

-- The later writes: lists[cmd][key] the values to append to key, lists[cmd] itself the keys
-- in the order of their first value; sums[key][field] what to add to (key, field) (false
-- while nothing was summed), order the (key, field) pairs in the order of first use, alone
-- the amounts to add on their own.
local lists = {HSET = {}, ZADD = {}, RPUSH = {}}
local function list_of(cmd, key)
  local by = lists[cmd]
  local list = by[key]
  if not list then
    list = {}
    by[key] = list
  end
  return list
end
local sums, order, alone = {}, {}, {}
-- A sum stays exact while it and each amount are below 2^53 (Lua numbers are doubles).
local EXACT = 9007199254740992
-- The sum of (key, field) so far, the pair taking its place in order on its first use.
local function open(key, field)
  local fields = sums[key]
  if not fields then
    fields = {}
    sums[key] = fields
  end
  local sum = fields[field]
  if sum == nil then
    fields[field] = false
    order[#order + 1] = key
    order[#order + 1] = field
    return false
  end
  return sum
end
-- The sum s of (key, field) with amount (v its number) added, or s with the amount kept to
-- add on its own when the sum could pass 2^53.
local function plus(key, field, s, v, amount)
  if v and v < EXACT and v > -EXACT then
    local sum = (s or 0) + v
    if sum < EXACT and sum > -EXACT then return sum end
  end
  alone[#alone + 1] = {key, field, amount}
  return s
end

-- Per tx hash: how many of its records were taken from its HMGET reply, and the records
-- written by this call (a tx id twice in a call sees its first application).
local taken, applied = {}, {}
-- The players' day-total hashes written, to expire once each at the end.
local touched = {}
local out = {}
local e = 0
for r = 1, run_count do
  local group = groups[tonumber(ARGV[runs_at + 2 * r - 1])]
  local txs, code, cur, cohort = group.txs, group.code, group.cur, group.cohort
  local spend, spend_day, day = group.spend, group.spend_day, group.day
  local level = levels[group.kill]
  local records, j = got[txs], taken[txs] or 0
  local mine = applied[txs]
  if not mine then
    mine = {}
    applied[txs] = mine
  end
  local hs, zs, rp = list_of('HSET', txs), list_of('ZADD', group.txr), list_of('RPUSH', group.ledger)
  local nh, nz, nr = #hs, #zs, #rp
  local balance_kind = code == 'e' or code == 's' or code == 'i'
  local field
  if code == 'e' then
    field = 'earned:' .. cur
  elseif balance_kind then
    field = 'spent:' .. cur
  elseif code == 'h' then
    field = 'rev_c'
  else
    field = 'rev_t'
  end
  local cohort_field = balance_kind and cohort ~= '' and field .. '@' .. cohort
  -- A player's day-total field is `<e|s>|<currency>|<player>`; the player is what the
  -- fingerprint `<player>|<Earned|Spent>|<currency>|<amount>` holds before its last fields.
  local totals, cap = group.totals, group.cap
  local own_head = code == 'e' and 'e|' .. cur .. '|' or 's|' .. cur .. '|'
  local print_tail = (code == 'e' and 9 or 8) + #cur
  local left_field, capped_field = 'x' .. field, 'c' .. field
  if balance_kind and not touched[totals] then
    touched[totals] = true
    touched[#touched + 1] = totals
  end
  -- The run's day sums, opened on its first applied event; the last amount and its number.
  local opened, sum, cohort_sum
  local last, v, small
  for _ = 1, tonumber(ARGV[runs_at + 2 * r]) do
    e = e + 1
    j = j + 1
    local id = ARGV[ids_at + e]
    local prev = mine[id]
    if prev == nil then prev = records[j] end
    if prev then
      local sep = find(prev, '|', 1, true)
      if sep and sub(prev, sep + 1) == ARGV[prints_at + e] then
        out[e] = 'd' .. sub(prev, 1, sep - 1)
      else
        out[e] = 'c'
      end
    -- 3 is KillLevel::SdkOff: from that level on the SDK is off and money events are refused,
    -- but for a refund (a purchase of a negative amount), which is the store's, not the game's.
    elseif level >= 3 and (balance_kind or byte(ARGV[amounts_at + e]) ~= 45) then
      out[e] = 'k'
    else
      local amount = ARGV[amounts_at + e]
      if amount ~= last then
        last = amount
        v = tonumber(amount) or false
        small = v and v < EXACT and v > -EXACT
      end
      -- The first write, under pcall: refused by the server, it leaves this event unwritten.
      -- first is then the error; false when the event was refused before it.
      local first
      if code == 'e' then
        first = try('HINCRBY', KEYS[e], cur, amount)
      elseif balance_kind then
        if code == 's' then
          local bal = try('HGET', KEYS[e], cur)
          if type(bal) == 'table' and bal.err then
            first = bal
          else
            bal = tonumber(bal or '0') or 0
            if bal < tonumber(amount) then
              out[e] = 'i' .. format('%d', bal)
              first = false
            end
          end
        end
        if first == nil then
          -- -amount, as Rust's saturating negation writes it.
          local neg
          if byte(amount) ~= 45 then
            neg = amount == '0' and '0' or '-' .. amount
          elseif amount == '-9223372036854775808' then
            neg = '9223372036854775807'
          else
            neg = sub(amount, 2)
          end
          first = try('HINCRBY', KEYS[e], cur, neg)
        end
      else
        -- The fingerprint is <player>|Purchase|<currency>|<amount>.
        local fingerprint = ARGV[prints_at + e]
        local player = sub(fingerprint, 1, #fingerprint - #cur - #amount - 11)
        first = try('HINCRBY', spend, player, amount)
        if type(first) ~= 'table' then
          local before = open(spend_day, player)
          sums[spend_day][player] = plus(spend_day, player, before, v, amount)
          first = 0
        end
      end
      if first == false then
        -- Refused, and answered, before its first write.
      elseif type(first) == 'table' and first.err then
        out[e] = 'e' .. first.err
      else
        local b = format('%d', first)
        local rec = b .. '|' .. ARGV[prints_at + e]
        mine[id] = rec
        nh = nh + 2
        hs[nh - 1] = id
        hs[nh] = rec
        if nh == 2 then lists.HSET[#lists.HSET + 1] = txs end
        nz = nz + 2
        zs[nz - 1] = ARGV[times_at + e]
        zs[nz] = id
        if nz == 2 then lists.ZADD[#lists.ZADD + 1] = group.txr end
        nr = nr + 1
        rp[nr] = ARGV[heads_at + e] .. ',"balance_after":' .. b .. '}'
        if nr == 1 then lists.RPUSH[#lists.RPUSH + 1] = group.ledger end
        -- A refund (a purchase of a negative amount) also counts what the stores took back.
        if not balance_kind and v and v < 0 then
          try('HINCRBY', day, 'refunded', sub(amount, 2))
        end
        -- The player's day total, and the part of the event above the day cap: counted (cv,
        -- cs its text) is what the day aggregate gets.
        local cv, cs, left = v, amount, 0
        if balance_kind and small then
          local print = ARGV[prints_at + e]
          local own = own_head .. sub(print, 1, #print - #amount - print_tail)
          -- Under pcall, as the balance: a total the server refuses counts the event whole
          -- and stops nothing, so every balance written still gets its record below.
          local after = try('HINCRBY', totals, own, amount)
          if cap and type(after) == 'number' then
            local room = cap - (after - v)
            if room < 0 then room = 0 end
            if v > room then
              left = v - room
              cv, cs = room, format('%d', room)
              local l = format('%d', left)
              if try('HINCRBY', totals, 'x' .. own, l) == left then
                try('HINCRBY', day, capped_field, 1)
              end
              try('HINCRBY', day, left_field, l)
            end
          end
        end
        if not opened then
          opened = true
          sum = open(day, field)
          if cohort_field then cohort_sum = open(day, cohort_field) end
        end
        local next_sum = small and (sum or 0) + cv
        if next_sum and next_sum < EXACT and next_sum > -EXACT then
          sum = next_sum
        else
          sum = plus(day, field, sum, cv, cs)
        end
        if cohort_field then
          next_sum = small and (cohort_sum or 0) + cv
          if next_sum and next_sum < EXACT and next_sum > -EXACT then
            cohort_sum = next_sum
          else
            cohort_sum = plus(day, cohort_field, cohort_sum, cv, cs)
          end
        end
        if left > 0 then
          out[e] = b .. 'x' .. format('%d', left)
        else
          out[e] = b
        end
      end
    end
  end
  taken[txs] = j
  if opened then
    sums[day][field] = sum
    if cohort_field then sums[day][cohort_field] = cohort_sum end
  end
end

-- The idempotency records first: once an event's balance is written, its tx id is known
-- before anything else of the call can fail.
for _, cmd in ipairs({'HSET', 'ZADD', 'RPUSH'}) do
  local by = lists[cmd]
  for _, key in ipairs(by) do call(cmd, key, unpack(by[key])) end
end
for k = 1, #order, 2 do
  local key, field = order[k], order[k + 1]
  local s = sums[key][field]
  if s then call('HINCRBY', key, field, format('%d', s)) end
  for _, x in ipairs(alone) do
    if x[1] == key and x[2] == field then call('HINCRBY', key, field, x[3]) end
  end
end
for _, key in ipairs(touched) do call('EXPIRE', key, ttl) end
return table.concat(out, '\n')
