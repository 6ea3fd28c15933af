/* A small JSON reader; see json.h. */
#include "json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Deeper documents are refused rather than risk the 1 MiB stack. */
#define MAX_DEPTH 64

typedef struct {
    const char *p;
    const char *end;
} reader;

/* A growable byte buffer. */
typedef struct {
    char *data;
    size_t len, cap;
} buffer;

static bool buf_push(buffer *b, const char *bytes, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 16;
        while (cap < b->len + n + 1) cap *= 2;
        char *data = realloc(b->data, cap);
        if (!data) return false;
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, bytes, n);
    b->len += n;
    b->data[b->len] = '\0';
    return true;
}

static void skip_ws(reader *r) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
}

static bool literal(reader *r, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0) return false;
    r->p += n;
    return true;
}

static int hex4(reader *r) {
    if (r->end - r->p < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *r->p++;
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    return v;
}

static bool push_utf8(buffer *b, uint32_t cp) {
    char out[4];
    size_t n;
    if (cp < 0x80) { out[0] = (char)cp; n = 1; }
    else if (cp < 0x800) { out[0] = (char)(0xC0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12); out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        out[0] = (char)(0xF0 | cp >> 18); out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); out[3] = (char)(0x80 | (cp & 0x3F)); n = 4;
    }
    return buf_push(b, out, n);
}

/* A string; `r->p` is at the opening quote. */
static bool parse_string(reader *r, char **out, size_t *out_len) {
    buffer b = {0};
    r->p++;
    if (!buf_push(&b, "", 0)) return false;
    while (r->p < r->end && *r->p != '"') {
        unsigned char c = (unsigned char)*r->p;
        if (c < 0x20) goto fail;
        if (c != '\\') {
            const char *start = r->p;
            while (r->p < r->end && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20) r->p++;
            if (!buf_push(&b, start, (size_t)(r->p - start))) goto fail;
            continue;
        }
        r->p++;
        if (r->p >= r->end) goto fail;
        char e = *r->p++;
        char single;
        switch (e) {
        case '"': single = '"'; break;
        case '\\': single = '\\'; break;
        case '/': single = '/'; break;
        case 'b': single = '\b'; break;
        case 'f': single = '\f'; break;
        case 'n': single = '\n'; break;
        case 'r': single = '\r'; break;
        case 't': single = '\t'; break;
        case 'u': {
            int hi = hex4(r);
            if (hi < 0) goto fail;
            uint32_t cp = (uint32_t)hi;
            if (hi >= 0xD800 && hi <= 0xDBFF) {
                if (!literal(r, "\\u")) goto fail;
                int lo = hex4(r);
                if (lo < 0xDC00 || lo > 0xDFFF) goto fail;
                cp = 0x10000 + (((uint32_t)hi - 0xD800) << 10) + ((uint32_t)lo - 0xDC00);
            } else if (hi >= 0xDC00 && hi <= 0xDFFF) {
                goto fail;
            }
            if (!push_utf8(&b, cp)) goto fail;
            continue;
        }
        default: goto fail;
        }
        if (!buf_push(&b, &single, 1)) goto fail;
    }
    if (r->p >= r->end) goto fail;
    r->p++;
    *out = b.data;
    *out_len = b.len;
    return true;
fail:
    free(b.data);
    return false;
}

static bool parse_number(reader *r) {
    if (r->p < r->end && *r->p == '-') r->p++;
    if (r->p >= r->end) return false;
    if (*r->p == '0') r->p++;
    else if (*r->p >= '1' && *r->p <= '9') while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
    else return false;
    if (r->p < r->end && *r->p == '.') {
        r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9') return false;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
    }
    if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
        r->p++;
        if (r->p < r->end && (*r->p == '+' || *r->p == '-')) r->p++;
        if (r->p >= r->end || *r->p < '0' || *r->p > '9') return false;
        while (r->p < r->end && *r->p >= '0' && *r->p <= '9') r->p++;
    }
    return true;
}

static bool parse_value(reader *r, json_value *out, int depth);

/* Appends `v` (and, for objects, `key`) to container `c`. */
static bool append(json_value *c, json_value *v, char *key, size_t key_len) {
    json_value *items = realloc(c->items, (c->count + 1) * sizeof *items);
    if (!items) return false;
    c->items = items;
    if (c->kind == JSON_OBJECT) {
        char **keys = realloc(c->keys, (c->count + 1) * sizeof *keys);
        if (!keys) return false;
        c->keys = keys;
        size_t *lens = realloc(c->key_lens, (c->count + 1) * sizeof *lens);
        if (!lens) return false;
        c->key_lens = lens;
        c->keys[c->count] = key;
        c->key_lens[c->count] = key_len;
    }
    c->items[c->count++] = *v;
    return true;
}

static bool parse_container(reader *r, json_value *out, int depth) {
    bool object = *r->p == '{';
    char close = object ? '}' : ']';
    out->kind = object ? JSON_OBJECT : JSON_ARRAY;
    r->p++;
    skip_ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        size_t key_len = 0;
        if (object) {
            skip_ws(r);
            if (r->p >= r->end || *r->p != '"' || !parse_string(r, &key, &key_len)) return false;
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':') { free(key); return false; }
            r->p++;
        }
        json_value item;
        if (!parse_value(r, &item, depth + 1)) { free(key); return false; }
        if (!append(out, &item, key, key_len)) { json_free(&item); free(key); return false; }
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') { r->p++; continue; }
        if (r->p < r->end && *r->p == close) { r->p++; return true; }
        return false;
    }
}

static bool parse_value(reader *r, json_value *out, int depth) {
    memset(out, 0, sizeof *out);
    if (depth > MAX_DEPTH) return false;
    skip_ws(r);
    if (r->p >= r->end) return false;
    bool ok;
    switch (*r->p) {
    case '{':
    case '[': ok = parse_container(r, out, depth); break;
    case '"': out->kind = JSON_STRING; ok = parse_string(r, &out->str, &out->len); break;
    case 't': out->kind = JSON_BOOL; out->len = 1; ok = literal(r, "true"); break;
    case 'f': out->kind = JSON_BOOL; ok = literal(r, "false"); break;
    case 'n': out->kind = JSON_NULL; ok = literal(r, "null"); break;
    default: out->kind = JSON_NUMBER; ok = parse_number(r); break;
    }
    if (!ok) json_free(out);
    return ok;
}

bool json_parse(const char *text, size_t len, json_value *out) {
    reader r = {text, text + len};
    if (!parse_value(&r, out, 0)) return false;
    skip_ws(&r);
    if (r.p != r.end) {
        json_free(out);
        return false;
    }
    return true;
}

void json_free(json_value *v) {
    for (size_t i = 0; i < v->count; i++) {
        json_free(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->key_lens);
    free(v->str);
    memset(v, 0, sizeof *v);
}

const json_value *json_get(const json_value *v, const char *key) {
    if (v->kind != JSON_OBJECT) return NULL;
    size_t n = strlen(key);
    for (size_t i = 0; i < v->count; i++) {
        if (v->key_lens[i] == n && memcmp(v->keys[i], key, n) == 0) return &v->items[i];
    }
    return NULL;
}
