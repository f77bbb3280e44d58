/* textkeys kernel, C baseline: count N words drawn from D distinct ones. The words are joined by spaces
   into one buffer and split in place (no copies); an open-addressing hash table (FNV-1a, linear
   probing, grown at half full) maps each word to its count; the distinct words are then sorted by
   bytes (shorter first on a tie) and walked in order. Prints "DISTINCT FIRST LAST CHECKSUM". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const char *word; size_t length; long long count; } Entry;

static long long next_state(long long s) { return s * 48271 % 2147483647; }

static void *allocate(size_t bytes) {
    void *p = calloc(1, bytes);
    if (!p) { perror("calloc"); exit(1); }
    return p;
}

static uint64_t hash_word(const char *p, size_t n) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 1099511628211ull;
    return h;
}

typedef struct { Entry *slots; size_t capacity, used; } Table;

static Entry *find_or_add(Table *t, const char *word, size_t length);

static void grow(Table *t) {
    Table bigger = {allocate(t->capacity * 2 * sizeof(Entry)), t->capacity * 2, 0};
    for (size_t i = 0; i < t->capacity; i++)
        if (t->slots[i].word) find_or_add(&bigger, t->slots[i].word, t->slots[i].length)->count = t->slots[i].count;
    free(t->slots);
    *t = bigger;
}

static Entry *find_or_add(Table *t, const char *word, size_t length) {
    size_t mask = t->capacity - 1;
    for (size_t i = hash_word(word, length) & mask;; i = (i + 1) & mask) {
        Entry *e = &t->slots[i];
        if (!e->word) {
            if ((t->used + 1) * 2 > t->capacity) {
                grow(t);
                return find_or_add(t, word, length);
            }
            e->word = word;
            e->length = length;
            t->used++;
            return e;
        }
        if (e->length == length && memcmp(e->word, word, length) == 0) return e;
    }
}

static int by_bytes(const void *a, const void *b) {
    const Entry *x = *(const Entry *const *)a, *y = *(const Entry *const *)b;
    int c = memcmp(x->word, y->word, x->length < y->length ? x->length : y->length);
    if (c) return c;
    return x->length < y->length ? -1 : x->length > y->length;
}

int main(int argc, char **argv) {
    long long count = argc > 1 ? atoll(argv[1]) : 2000000, distinct = argc > 2 ? atoll(argv[2]) : 5000;
    long long s = 20261201;
    char (*vocab)[16] = allocate((size_t)distinct * 16);
    size_t *vocab_length = allocate((size_t)distinct * sizeof(size_t));
    for (long long i = 0; i < distinct; i++) {
        s = next_state(s);
        int n = 2 + (int)(s % 6);
        for (int j = 0; j < n; j++) {
            s = next_state(s);
            vocab[i][j] = (char)('a' + s % 26);
        }
        vocab[i][n] = (char)('a' + i / 676 % 26);
        vocab[i][n + 1] = (char)('a' + i / 26 % 26);
        vocab[i][n + 2] = (char)('a' + i % 26);
        vocab_length[i] = (size_t)n + 3;
    }
    char *text = allocate((size_t)count * 11 + 1);
    size_t length = 0;
    for (long long i = 0; i < count; i++) {
        s = next_state(s);
        long long w = s % distinct;
        if (i > 0) text[length++] = ' ';
        memcpy(text + length, vocab[w], vocab_length[w]);
        length += vocab_length[w];
    }
    Table table = {allocate(16 * sizeof(Entry)), 16, 0};
    for (size_t start = 0; start <= length;) {
        const char *space = memchr(text + start, ' ', length - start);
        size_t end = space ? (size_t)(space - text) : length;
        find_or_add(&table, text + start, end - start)->count++;
        start = end + 1;
    }
    Entry **sorted = allocate(table.used * sizeof(Entry *));
    size_t n = 0;
    for (size_t i = 0; i < table.capacity; i++)
        if (table.slots[i].word) sorted[n++] = &table.slots[i];
    qsort(sorted, n, sizeof(Entry *), by_bytes);
    long long sum = 0;
    for (size_t rank = 1; rank <= n; rank++) sum = (sum + (long long)rank * sorted[rank - 1]->count) % 1000000007;
    printf("%zu %.*s %.*s %lld\n", n, (int)sorted[0]->length, sorted[0]->word, (int)sorted[n - 1]->length,
           sorted[n - 1]->word, sum);
    return 0;
}
