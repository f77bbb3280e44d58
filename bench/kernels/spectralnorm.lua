-- spectralnorm kernel, Lua baseline (lua5.4 and luajit): the spectral norm of the N x N corner of
-- the infinite matrix A(i, j) = 1 / ((i+j)(i+j+1)/2 + i + 1), by 10 rounds of the power method on
-- A^T A (as the benchmarks game computes it); prints it with 9 decimals (N = arg[1]).
-- Indices run from 0 as in the other ports. ij * (ij + 1) is even, so its half is exact in
-- floating point too (Lua 5.1 has no integer division), and every A(i, j) is the same number.
local function a(i, j)
  local ij = i + j
  return 1.0 / (ij * (ij + 1) / 2 + i + 1)
end

local function mul_av(v, out, n)
  for i = 0, n - 1 do
    local sum = 0.0
    for j = 0, n - 1 do
      sum = sum + a(i, j) * v[j]
    end
    out[i] = sum
  end
end

local function mul_atv(v, out, n)
  for i = 0, n - 1 do
    local sum = 0.0
    for j = 0, n - 1 do
      sum = sum + a(j, i) * v[j]
    end
    out[i] = sum
  end
end

local function mul_atav(v, out, tmp, n)
  mul_av(v, tmp, n)
  mul_atv(tmp, out, n)
end

local n = tonumber(arg[1])
local u, v, tmp = {}, {}, {}
for i = 0, n - 1 do
  u[i] = 1.0
  v[i] = 0.0
  tmp[i] = 0.0
end
for _ = 1, 10 do
  mul_atav(u, v, tmp, n)
  mul_atav(v, u, tmp, n)
end
local vbv, vv = 0.0, 0.0
for i = 0, n - 1 do
  vbv = vbv + u[i] * v[i]
  vv = vv + v[i] * v[i]
end
print(string.format("%.9f", math.sqrt(vbv / vv)))
