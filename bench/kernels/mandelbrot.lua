-- mandelbrot kernel, Lua baseline (lua5.4 and luajit): escape iterations over a W x H grid of
-- [-2,1] x [-1.5,1.5] with at most M iterations (W H M = arg[1..3]); prints the sum of iteration counts.
local function iterations(cr, ci, limit)
  local zr, zi = 0.0, 0.0
  local count = 0
  while count < limit and zr * zr + zi * zi <= 4.0 do
    local next_real = zr * zr - zi * zi + cr
    zi = 2.0 * zr * zi + ci
    zr = next_real
    count = count + 1
  end
  return count
end

local width, height, limit = tonumber(arg[1]), tonumber(arg[2]), tonumber(arg[3])
local total = 0
for y = 0, height - 1 do
  local ci = y * 3.0 / height - 1.5
  for x = 0, width - 1 do
    local cr = x * 3.0 / width - 2.0
    total = total + iterations(cr, ci, limit)
  end
end
print(string.format("%d", total))
