/* textbuild kernel, C baseline: append the decimal text of (i * 7919) % 1000003 for i in [0, N), separated by
   commas, to one growing buffer; prints "LENGTH SEVENS" (bytes, count of the digit 7) as the check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { char *bytes; size_t length, capacity; } Buffer;

static void append(Buffer *buffer, const char *piece, size_t length) {
    if (buffer->length + length > buffer->capacity) {
        buffer->capacity = (buffer->capacity + length) * 2;
        buffer->bytes = realloc(buffer->bytes, buffer->capacity);
        if (!buffer->bytes) { perror("realloc"); exit(1); }
    }
    memcpy(buffer->bytes + buffer->length, piece, length);
    buffer->length += length;
}

int main(int argc, char **argv) {
    long long count = argc > 1 ? atoll(argv[1]) : 200000;
    Buffer text = {0};
    char piece[32];
    for (long long i = 0; i < count; i++) {
        if (i > 0) append(&text, ",", 1);
        int length = snprintf(piece, sizeof piece, "%lld", (i * 7919) % 1000003);
        append(&text, piece, (size_t)length);
    }
    long long sevens = 0;
    for (size_t k = 0; k < text.length; k++) sevens += text.bytes[k] == '7';
    printf("%zu %lld\n", text.length, sevens);
    free(text.bytes);
    return 0;
}
