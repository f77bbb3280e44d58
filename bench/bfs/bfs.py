# bfs, CPython baseline: reads "NODES EDGES" then EDGES lines "SRC DST" from stdin into lists of lists, then runs
# ROUNDS x breadth-first searches from the start nodes in argv; prints the check line and one processor time (ms) per search.
import sys
import time


def read_graph():
    numbers = sys.stdin.buffer.read().split()
    nodes, edges = int(numbers[0]), int(numbers[1])
    adjacency = [[] for _ in range(nodes)]
    for k in range(2, 2 + 2 * edges, 2):
        adjacency[int(numbers[k])].append(int(numbers[k + 1]))
    return nodes, edges, adjacency


def search(adjacency, nodes, start):
    depth = [-1] * nodes
    queue = [start]
    depth[start] = 0
    head = 0
    depth_sum = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        d = depth[v]
        depth_sum += d
        for w in adjacency[v]:
            if depth[w] < 0:
                depth[w] = d + 1
                queue.append(w)
    return len(queue), depth_sum


def main():
    rounds = int(sys.argv[1])
    starts = [int(a) for a in sys.argv[2:]]
    nodes, edges, adjacency = read_graph()
    if rounds == 0:
        print(edges)
        return
    times = []
    for _ in range(rounds):
        check = []
        for start in starts:
            began = time.process_time()
            reached, depth_sum = search(adjacency, nodes, start)
            times.append((time.process_time() - began) * 1e3)
            check += [reached, depth_sum]
    print(" ".join(str(n) for n in check))
    print(" ".join("%.4f" % t for t in times))


main()
