/* The example bootstrap provider in C (see ../README.md for what it does).
 *
 * wit-bindgen's C generator writes bootstrap_provider.h: the WIT types as C structs and one
 * `exports_capw_provider_*` function per exported function, implemented here. A function
 * returning a WIT `result` returns true with `ret` filled, or false with `err` filled. What an
 * export returns is freed by the generated post-return code, so it is built from malloc'ed
 * memory. The instance is dropped after every call, so nothing here needs to outlive it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap_provider.h"
#include "json.h"

#define NAME "c-example"
#define VERSION "0.1.0"
#define TOKEN "bootstrap-token"
#define CONFIG_SCHEMA                                                                             \
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"title\":\"Config\","      \
    "\"type\":\"object\",\"additionalProperties\":false,\"properties\":{\"timezone\":{"         \
    "\"description\":\"IANA time zone of the machines, e.g. Europe/Berlin.\",\"type\":"         \
    "\"string\",\"default\":\"UTC\"},\"packages\":{\"description\":\"Debian packages to "      \
    "install on every machine.\",\"type\":\"array\",\"items\":{\"type\":\"string\"},"           \
    "\"default\":[]}}}"

typedef bootstrap_provider_string_t string_t;
typedef exports_capw_provider_metadata_field_error_t field_error_t;
typedef exports_capw_provider_metadata_list_field_error_t field_errors_t;
typedef exports_capw_provider_bootstrap_call_context_t call_context_t;
typedef exports_capw_provider_bootstrap_provider_error_t provider_error_t;

/* A growable text buffer that ends up as a WIT string. */
typedef struct {
    char *data;
    size_t len, cap;
} text;

static void append(text *t, const char *bytes, size_t n) {
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        while (cap < t->len + n + 1) cap *= 2;
        t->data = realloc(t->data, cap);
        if (!t->data) abort();
        t->cap = cap;
    }
    memcpy(t->data + t->len, bytes, n);
    t->len += n;
    t->data[t->len] = '\0';
}

static void appendf(text *t, const char *format, ...) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(NULL, 0, format, args);
    va_end(args);
    char *s = malloc((size_t)n + 1);
    if (!s) abort();
    va_start(args, format);
    vsnprintf(s, (size_t)n + 1, format, args);
    va_end(args);
    append(t, s, (size_t)n);
    free(s);
}

static string_t take_string(text *t) {
    if (!t->data) append(t, "", 0);
    string_t s = {(uint8_t *)t->data, t->len};
    t->data = NULL;
    t->len = t->cap = 0;
    return s;
}

static string_t dup_string(const char *s) {
    string_t out;
    bootstrap_provider_string_dup(&out, s);
    return out;
}

/* A JSON Pointer token for `key` (RFC 6901: `~` as `~0`, `/` as `~1`), appended to `t`. */
static void append_pointer_token(text *t, const char *key, size_t len) {
    append(t, "/", 1);
    for (size_t i = 0; i < len; i++) {
        if (key[i] == '~') append(t, "~0", 2);
        else if (key[i] == '/') append(t, "~1", 2);
        else append(t, &key[i], 1);
    }
}

static void push_error(field_errors_t *errors, text *path, const char *message) {
    errors->ptr = realloc(errors->ptr, (errors->len + 1) * sizeof *errors->ptr);
    if (!errors->ptr) abort();
    field_error_t *e = &errors->ptr[errors->len++];
    e->path = take_string(path);
    e->message = dup_string(message);
}

static bool matches_timezone(const json_value *v) {
    if (v->len < 1 || v->len > 64) return false;
    for (size_t i = 0; i < v->len; i++) {
        char c = v->str[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '+' || c == '-' || c == '/';
        if (!ok) return false;
    }
    return true;
}

static bool matches_package(const json_value *v) {
    if (v->len < 1) return false;
    for (size_t i = 0; i < v->len; i++) {
        char c = v->str[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!(alnum || (i > 0 && (c == '+' || c == '.' || c == '-')))) return false;
    }
    return true;
}

/* Every problem of a config, in document order. */
static void config_problems(const uint8_t *bytes, size_t len, field_errors_t *errors) {
    json_value config;
    text path = {0};
    if (!json_parse((const char *)bytes, len, &config)) {
        push_error(errors, &path, "must be a JSON object");
        return;
    }
    if (config.kind != JSON_OBJECT) {
        push_error(errors, &path, "must be a JSON object");
        json_free(&config);
        return;
    }
    for (size_t i = 0; i < config.count; i++) {
        const char *key = config.keys[i];
        const json_value *value = &config.items[i];
        if (strcmp(key, "timezone") == 0 && config.key_lens[i] == 8) {
            append(&path, "/timezone", 9);
            if (value->kind != JSON_STRING) push_error(errors, &path, "must be a string");
            else if (!matches_timezone(value))
                push_error(errors, &path, "must be a time zone name such as Europe/Berlin");
        } else if (strcmp(key, "packages") == 0 && config.key_lens[i] == 8) {
            if (value->kind != JSON_ARRAY) {
                append(&path, "/packages", 9);
                push_error(errors, &path, "must be an array of strings");
                continue;
            }
            for (size_t j = 0; j < value->count; j++) {
                const json_value *item = &value->items[j];
                appendf(&path, "/packages/%zu", j);
                if (item->kind != JSON_STRING) push_error(errors, &path, "must be a string");
                else if (!matches_package(item)) push_error(errors, &path, "must be a Debian package name");
                free(path.data);
                path = (text){0};
            }
        } else {
            append_pointer_token(&path, key, config.key_lens[i]);
            push_error(errors, &path, "unknown field");
        }
        free(path.data);
        path = (text){0};
    }
    json_free(&config);
}

void exports_capw_provider_metadata_describe(exports_capw_provider_metadata_provider_metadata_t *ret) {
    memset(ret, 0, sizeof *ret);
    ret->name = dup_string(NAME);
    ret->version = dup_string(VERSION);
    ret->description = dup_string("Example bootstrap provider in C: cloud-config from a typed config.");
    ret->extension_points.ptr = malloc(sizeof *ret->extension_points.ptr);
    if (!ret->extension_points.ptr) abort();
    ret->extension_points.ptr[0] = EXPORTS_CAPW_PROVIDER_METADATA_EXTENSION_POINT_BOOTSTRAP;
    ret->extension_points.len = 1;
    ret->config_schema = dup_string(CONFIG_SCHEMA);
    /* No control-plane shape, no capabilities, no grants: all zero. */
}

bool exports_capw_provider_metadata_validate_config(string_t *config, field_errors_t *err) {
    field_errors_t errors = {0};
    config_problems(config->ptr, config->len, &errors);
    bootstrap_provider_string_free(config);
    if (errors.len == 0) return true;
    *err = errors;
    return false;
}

static bool invalid_input(provider_error_t *err, const char *message) {
    memset(err, 0, sizeof *err);
    err->code = CAPW_PROVIDER_TYPES_ERROR_CODE_INVALID_INPUT;
    err->message = dup_string(message);
    err->retryable = false;
    return false;
}

/* Reads the call's config into `out`; false (with `err` filled) when it is not an object. */
static bool read_config(const call_context_t *ctx, json_value *out, provider_error_t *err) {
    if (!json_parse((const char *)ctx->config.ptr, ctx->config.len, out)) {
        return invalid_input(err, "config: must be a JSON object");
    }
    if (out->kind != JSON_OBJECT) {
        json_free(out);
        return invalid_input(err, "config: must be a JSON object");
    }
    return true;
}

bool exports_capw_provider_bootstrap_cluster_secrets(call_context_t *ctx,
                                                     exports_capw_provider_bootstrap_secrets_state_t *ret,
                                                     provider_error_t *err) {
    json_value config;
    if (!read_config(ctx, &config, err)) return false;
    json_free(&config);
    text token = {0};
    append(&token, "token:", 6);
    append(&token, (const char *)ctx->cluster.uid.ptr, ctx->cluster.uid.len);
    string_t data = take_string(&token);

    exports_capw_provider_bootstrap_secret_item_t *item = malloc(sizeof *item);
    if (!item) abort();
    item->name = dup_string(TOKEN);
    item->data.ptr = data.ptr;
    item->data.len = data.len;
    memset(ret, 0, sizeof *ret);
    ret->tag = EXPORTS_CAPW_PROVIDER_BOOTSTRAP_SECRETS_STATE_READY;
    ret->val.ready.ptr = item;
    ret->val.ready.len = 1;
    return true;
}

static const char *role_name(capw_provider_types_machine_role_t role) {
    switch (role) {
    case CAPW_PROVIDER_TYPES_MACHINE_ROLE_INIT: return "init";
    case CAPW_PROVIDER_TYPES_MACHINE_ROLE_JOIN_CONTROL_PLANE: return "join-control-plane";
    default: return "worker";
    }
}

bool exports_capw_provider_bootstrap_generate(call_context_t *ctx,
                                              exports_capw_provider_bootstrap_bootstrap_request_t *request,
                                              exports_capw_provider_bootstrap_bootstrap_data_t *ret,
                                              provider_error_t *err) {
    json_value config;
    if (!read_config(ctx, &config, err)) return false;
    bool has_token = false;
    for (size_t i = 0; i < request->secrets.len; i++) {
        string_t *name = &request->secrets.ptr[i].name;
        has_token |= name->len == strlen(TOKEN) && memcmp(name->ptr, TOKEN, name->len) == 0;
    }
    if (!has_token) {
        json_free(&config);
        return invalid_input(err, "request.secrets: no bootstrap-token");
    }

    text out = {0};
    append(&out, "#cloud-config\n", 14);
    appendf(&out, "# role: %s\n", role_name(request->role));
    appendf(&out, "# version: v%u.%u.%u\n", request->version.major, request->version.minor,
            request->version.patch);
    appendf(&out, "# endpoint: %.*s:%u\n", (int)request->endpoint.host.len,
            (const char *)request->endpoint.host.ptr, request->endpoint.port);
    append(&out, "# members: ", 11);
    for (size_t i = 0; i < request->control_plane_members.len; i++) {
        string_t *name = &request->control_plane_members.ptr[i].name;
        if (i > 0) append(&out, ",", 1);
        append(&out, (const char *)name->ptr, name->len);
    }
    append(&out, "\n", 1);
    const json_value *timezone = json_get(&config, "timezone");
    append(&out, "timezone: ", 10);
    if (timezone && timezone->kind == JSON_STRING) append(&out, timezone->str, timezone->len);
    else append(&out, "UTC", 3);
    append(&out, "\n", 1);
    const json_value *packages = json_get(&config, "packages");
    if (packages && packages->kind == JSON_ARRAY && packages->count > 0) {
        append(&out, "packages:\n", 10);
        for (size_t i = 0; i < packages->count; i++) {
            const json_value *p = &packages->items[i];
            append(&out, "- ", 2);
            if (p->kind == JSON_STRING) append(&out, p->str, p->len);
            append(&out, "\n", 1);
        }
    } else {
        append(&out, "packages: []\n", 13);
    }
    json_free(&config);

    string_t data = take_string(&out);
    ret->format = EXPORTS_CAPW_PROVIDER_BOOTSTRAP_BOOTSTRAP_FORMAT_CLOUD_CONFIG;
    ret->data.ptr = data.ptr;
    ret->data.len = data.len;
    return true;
}

bool exports_capw_provider_bootstrap_kubeconfig(call_context_t *ctx,
                                                exports_capw_provider_bootstrap_endpoint_t *endpoint,
                                                exports_capw_provider_bootstrap_list_secret_item_t *secrets,
                                                string_t *ret, provider_error_t *err) {
    (void)secrets;
    json_value config;
    if (!read_config(ctx, &config, err)) return false;
    json_free(&config);
    int name_len = (int)ctx->cluster.name.len;
    const char *name = (const char *)ctx->cluster.name.ptr;
    int host_len = (int)endpoint->host.len;
    const char *host = (const char *)endpoint->host.ptr;
    bool ipv6 = memchr(host, ':', endpoint->host.len) != NULL;

    text out = {0};
    append(&out, "apiVersion: v1\nkind: Config\nclusters:\n", 38);
    appendf(&out, "- name: %.*s\n  cluster:\n", name_len, name);
    appendf(&out, ipv6 ? "    server: https://[%.*s]:%u\n" : "    server: https://%.*s:%u\n", host_len,
            host, endpoint->port);
    appendf(&out, "users:\n- name: %.*s-admin\n  user: {}\n", name_len, name);
    appendf(&out, "contexts:\n- name: %.*s-admin@%.*s\n  context:\n", name_len, name, name_len, name);
    appendf(&out, "    cluster: %.*s\n    user: %.*s-admin\n", name_len, name, name_len, name);
    appendf(&out, "current-context: %.*s-admin@%.*s\n", name_len, name, name_len, name);
    *ret = take_string(&out);
    return true;
}
