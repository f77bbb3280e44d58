-- sieve kernel, Lua baseline (lua5.4 and luajit): sieve of Eratosthenes over a table of N flags, R times
-- (N R = arg[1..2]); prints the number of primes below N times R.
local function count_primes(limit)
  local composite = {}
  for i = 1, limit do composite[i] = false end
  local count = 0
  for i = 2, limit - 1 do
    if not composite[i] then
      count = count + 1
      for j = i * i, limit - 1, i do composite[j] = true end
    end
  end
  return count
end

local limit = tonumber(arg[1])
local rounds = tonumber(arg[2] or "1")
local total = 0
for _ = 1, rounds do total = total + count_primes(limit) end
print(string.format("%d", total))
