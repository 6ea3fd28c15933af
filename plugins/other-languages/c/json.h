/* A small JSON reader: enough for a provider config (RFC 8259, nesting bounded). wasi-libc has
 * no JSON library and Debian ships none built for wasm32, so the C example carries this one. */
#ifndef CAPW_EXAMPLE_JSON_H
#define CAPW_EXAMPLE_JSON_H

#include <stdbool.h>
#include <stddef.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_kind;

typedef struct json_value {
    json_kind kind;
    /* JSON_STRING: the decoded UTF-8 text (NUL-terminated, may hold NULs). JSON_BOOL: `len`
     * is 1 for true, 0 for false. */
    char *str;
    size_t len;
    /* JSON_ARRAY: the items. JSON_OBJECT: the members' values, `keys[i]` naming `items[i]`. */
    struct json_value *items;
    char **keys;
    size_t *key_lens;
    size_t count;
} json_value;

/* Parses `len` bytes of `text` into `out`. Returns false when it is not one JSON value. */
bool json_parse(const char *text, size_t len, json_value *out);

/* Frees what `json_parse` allocated inside `v`. */
void json_free(json_value *v);

/* The member `key` of object `v`, or NULL. */
const json_value *json_get(const json_value *v, const char *key);

#endif
