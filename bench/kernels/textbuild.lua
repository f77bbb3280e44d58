-- textbuild kernel, Lua baseline (lua5.4 and luajit): the decimal text of (i * 7919) % 1000003 for i in
-- [0, N), joined by commas (pieces in a table, then table.concat); prints "LENGTH SEVENS".
local count = tonumber(arg[1])
local pieces = {}
for i = 0, count - 1 do
  pieces[i + 1] = string.format("%d", (i * 7919) % 1000003)
end
local text = table.concat(pieces, ",")
local _, sevens = string.gsub(text, "7", "")
print(string.format("%d %d", #text, sevens))
