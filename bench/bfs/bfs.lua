-- bfs, Lua baseline (lua5.4 and luajit): reads "NODES EDGES" then EDGES lines "SRC DST" from stdin into tables of
-- tables, runs ROUNDS x searches from the start nodes in arg; prints the check and one time (ms, os.clock) per search.
local function read_graph()
  local nodes, edges = io.read("n", "n")
  local adjacency = {}
  for v = 1, nodes do adjacency[v] = {} end
  for _ = 1, edges do
    local source, target = io.read("n", "n")
    local list = adjacency[source + 1]
    list[#list + 1] = target
  end
  return nodes, edges, adjacency
end

local function search(adjacency, nodes, start)
  local depth = {}
  for v = 1, nodes do depth[v] = -1 end
  local queue = { start }
  local head, tail, depth_sum = 1, 1, 0
  depth[start + 1] = 0
  while head <= tail do
    local v = queue[head]
    head = head + 1
    local d = depth[v + 1]
    depth_sum = depth_sum + d
    local list = adjacency[v + 1]
    for k = 1, #list do
      local w = list[k]
      if depth[w + 1] < 0 then
        depth[w + 1] = d + 1
        tail = tail + 1
        queue[tail] = w
      end
    end
  end
  return tail, depth_sum
end

local rounds = tonumber(arg[1])
local nodes, edges, adjacency = read_graph()
if rounds == 0 then
  print(string.format("%d", edges))
  os.exit(0)
end
local check, times = {}, {}
for _ = 1, rounds do
  check = {}
  for k = 2, #arg do
    local began = os.clock()
    local reached, depth_sum = search(adjacency, nodes, tonumber(arg[k]))
    times[#times + 1] = string.format("%.4f", (os.clock() - began) * 1e3)
    check[#check + 1] = string.format("%d %d", reached, depth_sum)
  end
end
print(table.concat(check, " "))
print(table.concat(times, " "))
