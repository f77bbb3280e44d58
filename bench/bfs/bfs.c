/* bfs, C baseline: reads "NODES EDGES" then EDGES lines "SRC DST" from stdin into offset arrays (CSR), then runs ROUNDS x
   breadth-first searches from the start nodes in argv; prints the check line and one processor time (ms) per search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { long long nodes, edges; long long *offsets, *targets; } Graph;

static char *read_all(FILE *stream, size_t *size) {
    size_t capacity = 1 << 20, length = 0;
    char *bytes = malloc(capacity + 1);
    size_t got;
    while ((got = fread(bytes + length, 1, capacity - length, stream)) > 0) {
        length += got;
        if (length == capacity) { capacity *= 2; bytes = realloc(bytes, capacity + 1); }
    }
    bytes[length] = '\0';
    *size = length;
    return bytes;
}

static long long next_number(char **cursor) {
    char *at = *cursor;
    while (*at && (*at < '0' || *at > '9')) at++;
    long long value = 0;
    while (*at >= '0' && *at <= '9') value = value * 10 + (*at++ - '0');
    *cursor = at;
    return value;
}

static Graph read_graph(void) {
    size_t size;
    char *text = read_all(stdin, &size), *cursor = text;
    Graph graph;
    graph.nodes = next_number(&cursor);
    graph.edges = next_number(&cursor);
    long long *sources = malloc(sizeof(long long) * graph.edges), *targets = malloc(sizeof(long long) * graph.edges);
    graph.offsets = calloc(graph.nodes + 1, sizeof(long long));
    for (long long k = 0; k < graph.edges; k++) {
        sources[k] = next_number(&cursor);
        targets[k] = next_number(&cursor);
        graph.offsets[sources[k] + 1]++;
    }
    for (long long v = 0; v < graph.nodes; v++) graph.offsets[v + 1] += graph.offsets[v];
    long long *fill = malloc(sizeof(long long) * graph.nodes);
    memcpy(fill, graph.offsets, sizeof(long long) * graph.nodes);
    graph.targets = malloc(sizeof(long long) * graph.edges);
    for (long long k = 0; k < graph.edges; k++) graph.targets[fill[sources[k]]++] = targets[k];
    free(fill); free(sources); free(targets); free(text);
    return graph;
}

/* One search: fresh depth array and queue each time, like every other port. */
static void search(const Graph *graph, long long start, long long *reached, long long *depth_sum) {
    long long *depth = malloc(sizeof(long long) * graph->nodes), *queue = malloc(sizeof(long long) * graph->nodes);
    for (long long v = 0; v < graph->nodes; v++) depth[v] = -1;
    long long head = 0, tail = 0, sum = 0;
    depth[start] = 0;
    queue[tail++] = start;
    while (head < tail) {
        long long v = queue[head++], d = depth[v];
        sum += d;
        for (long long k = graph->offsets[v]; k < graph->offsets[v + 1]; k++) {
            long long w = graph->targets[k];
            if (depth[w] < 0) { depth[w] = d + 1; queue[tail++] = w; }
        }
    }
    *reached = tail;
    *depth_sum = sum;
    free(depth); free(queue);
}

/* Processor time, like every other port (Lua's os.clock has no wall-clock twin), so a busy machine's waiting
   time is not counted. */
static double now_ms(void) {
    struct timespec moment;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &moment);
    return moment.tv_sec * 1e3 + moment.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: bfs ROUNDS START... < GRAPH\n"); return 2; }
    long long rounds = atoll(argv[1]);
    Graph graph = read_graph();
    if (rounds == 0) { printf("%lld\n", graph.edges); return 0; }
    char check[4096] = "";
    char times[65536] = "";
    for (long long round = 0; round < rounds; round++) {
        check[0] = '\0';
        for (int k = 2; k < argc; k++) {
            long long reached, depth_sum;
            double began = now_ms();
            search(&graph, atoll(argv[k]), &reached, &depth_sum);
            double took = now_ms() - began;
            snprintf(check + strlen(check), sizeof check - strlen(check), "%s%lld %lld", k > 2 ? " " : "", reached, depth_sum);
            snprintf(times + strlen(times), sizeof times - strlen(times), "%s%.4f", times[0] ? " " : "", took);
        }
    }
    printf("%s\n%s\n", check, times);
    return 0;
}
