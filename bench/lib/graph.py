# bench/lib/graph.py: the deterministic BFS graph generator (splitmix64, fixed seed) and its text format.
# Standard library only; every system reads the file this writes, so there is exactly one generator.

MASK64 = (1 << 64) - 1
DEFAULT_SEED = 20261130


class SplitMix64:
    """Steele, Lea and Flood's splitmix64: a 64-bit state advanced by a constant, then mixed."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)


def generate_edges(nodes, edges, seed=DEFAULT_SEED):
    """Draw (src, dst) = (next() % nodes, next() % nodes) until `edges` distinct pairs without self-loops
    exist; return them sorted by (src, dst)."""
    if edges > nodes * (nodes - 1):
        raise ValueError("more edges requested than a simple directed graph on %d nodes holds" % nodes)
    random = SplitMix64(seed)
    chosen = set()
    while len(chosen) < edges:
        source = random.next() % nodes
        target = random.next() % nodes
        if source != target:
            chosen.add((source, target))
    return sorted(chosen)


def start_nodes(nodes):
    """The five fixed start nodes: 0, n/5, 2n/5, 3n/5, 4n/5 (integer division)."""
    return [k * nodes // 5 for k in range(5)]


def write_graph(stream, nodes, edge_list):
    """Text format: a line "NODES EDGES", then one line "SRC DST" per edge, separated by single spaces."""
    stream.write("%d %d\n" % (nodes, len(edge_list)))
    stream.write("".join("%d %d\n" % pair for pair in edge_list))
