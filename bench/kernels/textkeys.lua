-- textkeys kernel, Lua baseline (lua5.4 and luajit): count N words drawn from D distinct ones in a table
-- keyed by the word (words taken from the joined text with gmatch), then sort the keys and walk them in
-- order; prints "DISTINCT FIRST LAST CHECKSUM". Keys are lowercase ASCII, so `<` orders them by bytes.
local count, distinct = tonumber(arg[1]), tonumber(arg[2])
local function next_state(s) return s * 48271 % 2147483647 end
local s = 20261201
local vocab = {}
for i = 0, distinct - 1 do
  s = next_state(s)
  local letters = {}
  for j = 1, 2 + s % 6 do
    s = next_state(s)
    letters[j] = string.char(97 + s % 26)
  end
  local n = #letters
  letters[n + 1] = string.char(97 + math.floor(i / 676) % 26)
  letters[n + 2] = string.char(97 + math.floor(i / 26) % 26)
  letters[n + 3] = string.char(97 + i % 26)
  vocab[i + 1] = table.concat(letters)
end
local pieces = {}
for i = 1, count do
  s = next_state(s)
  pieces[i] = vocab[s % distinct + 1]
end
local counts = {}
for w in string.gmatch(table.concat(pieces, " "), "[^ ]+") do
  counts[w] = (counts[w] or 0) + 1
end
local keys = {}
for k in pairs(counts) do keys[#keys + 1] = k end
table.sort(keys)
local sum = 0
for rank = 1, #keys do
  sum = (sum + rank * counts[keys[rank]]) % 1000000007
end
print(string.format("%d %s %s %d", #keys, keys[1], keys[#keys], sum))
