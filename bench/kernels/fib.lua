-- fib kernel, Lua baseline (run unchanged by lua5.4 and luajit): naive recursive fib(N), computed
-- R times (N = arg[1], R = arg[2]); prints the sum. Only the subset common to Lua 5.1 and 5.4.
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local n = tonumber(arg[1] or "32")
local rounds = tonumber(arg[2] or "1")
local total = 0
for _ = 1, rounds do total = total + fib(n) end
print(string.format("%d", total))
