/* {{name}}: a lifecycle-hooks provider in C, bound to the bare WIT without an SDK: deletion
 * protection. Every transition proceeds, except a cluster's deletion while the ClusterClass's
 * config says `"protectFromDelete": true`; the host then holds only that cluster's deletion
 * and asks again after the hint.
 *
 * wit-bindgen's C generator writes lifecycle_hooks_provider.h: the WIT types as C structs and
 * one `exports_capw_provider_*` function per exported function, implemented here. A function
 * returning a WIT `result` returns true with `ret` filled, or false with `err` filled. What an
 * export returns is freed by the generated post-return code, so it is built from malloc'ed
 * memory. The instance is dropped after every call, so nothing here needs to outlive it. */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "lifecycle_hooks_provider.h"

#define NAME "{{name}}"
#define VERSION "0.1.0"
#define CONFIG_SCHEMA                                                                             \
    "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"title\":\"Config\","      \
    "\"type\":\"object\",\"additionalProperties\":false,\"properties\":{\"protectFromDelete\":{" \
    "\"description\":\"Hold every deletion of the class's clusters.\",\"type\":\"boolean\","   \
    "\"default\":false}}}"
/* How soon the host asks again about a held deletion, in milliseconds. */
#define RECHECK_MS 60000

typedef lifecycle_hooks_provider_string_t string_t;
typedef exports_capw_provider_metadata_field_error_t field_error_t;
typedef exports_capw_provider_metadata_list_field_error_t field_errors_t;
typedef exports_capw_provider_lifecycle_hooks_call_context_t call_context_t;
typedef exports_capw_provider_lifecycle_hooks_provider_error_t provider_error_t;

static string_t dup_string(const char *s) {
    string_t out;
    lifecycle_hooks_provider_string_dup(&out, s);
    return out;
}

static string_t dup_bytes(const char *s, size_t len) {
    string_t out;
    lifecycle_hooks_provider_string_dup_n(&out, s, len);
    return out;
}

/* Adds a field error at the JSON Pointer `path` (`len` bytes). */
static void push_error(field_errors_t *errors, const char *path, size_t len, const char *message) {
    errors->ptr = realloc(errors->ptr, (errors->len + 1) * sizeof *errors->ptr);
    if (!errors->ptr) abort();
    field_error_t *e = &errors->ptr[errors->len++];
    e->path = dup_bytes(path, len);
    e->message = dup_string(message);
}

/* Every problem of a config, in document order. An unknown key is named by its pointer,
 * `~` and `/` escaped (RFC 6901). */
static void config_problems(const uint8_t *bytes, size_t len, field_errors_t *errors) {
    json_value config;
    if (!json_parse((const char *)bytes, len, &config)) {
        push_error(errors, "", 0, "must be a JSON object");
        return;
    }
    if (config.kind != JSON_OBJECT) {
        json_free(&config);
        push_error(errors, "", 0, "must be a JSON object");
        return;
    }
    for (size_t i = 0; i < config.count; i++) {
        const char *key = config.keys[i];
        size_t key_len = config.key_lens[i];
        if (key_len == 17 && memcmp(key, "protectFromDelete", 17) == 0) {
            if (config.items[i].kind != JSON_BOOL)
                push_error(errors, "/protectFromDelete", 18, "must be true or false");
            continue;
        }
        char *path = malloc(2 * key_len + 2);
        if (!path) abort();
        size_t n = 0;
        path[n++] = '/';
        for (size_t j = 0; j < key_len; j++) {
            if (key[j] == '~') { path[n++] = '~'; path[n++] = '0'; }
            else if (key[j] == '/') { path[n++] = '~'; path[n++] = '1'; }
            else path[n++] = key[j];
        }
        push_error(errors, path, n, "unknown field");
        free(path);
    }
    json_free(&config);
}

void exports_capw_provider_metadata_describe(exports_capw_provider_metadata_provider_metadata_t *ret) {
    memset(ret, 0, sizeof *ret);
    ret->name = dup_string(NAME);
    ret->version = dup_string(VERSION);
    ret->description = dup_string("Lifecycle hooks in C: holds the deletion of protected clusters.");
    ret->extension_points.ptr = malloc(sizeof *ret->extension_points.ptr);
    if (!ret->extension_points.ptr) abort();
    ret->extension_points.ptr[0] = EXPORTS_CAPW_PROVIDER_METADATA_EXTENSION_POINT_LIFECYCLE_HOOKS;
    ret->extension_points.len = 1;
    ret->config_schema = dup_string(CONFIG_SCHEMA);
    /* No control-plane shape, no capabilities, no grants: all zero. */
}

bool exports_capw_provider_metadata_validate_config(string_t *config, field_errors_t *err) {
    field_errors_t errors = {0};
    config_problems(config->ptr, config->len, &errors);
    lifecycle_hooks_provider_string_free(config);
    if (errors.len == 0) return true;
    *err = errors;
    return false;
}

bool exports_capw_provider_lifecycle_hooks_handle(call_context_t *ctx,
                                                  exports_capw_provider_lifecycle_hooks_hook_request_t *request,
                                                  exports_capw_provider_lifecycle_hooks_hook_response_t *ret,
                                                  provider_error_t *err) {
    json_value config;
    bool parsed = json_parse((const char *)ctx->config.ptr, ctx->config.len, &config);
    if (parsed && config.kind != JSON_OBJECT) {
        json_free(&config);
        parsed = false;
    }
    if (!parsed) {
        memset(err, 0, sizeof *err);
        err->code = CAPW_PROVIDER_TYPES_ERROR_CODE_INVALID_INPUT;
        err->message = dup_string("config: must be a JSON object");
        err->retryable = false;
        return false;
    }
    const json_value *protect = json_get(&config, "protectFromDelete");
    bool protected = protect && protect->kind == JSON_BOOL && protect->len == 1;
    json_free(&config);

    memset(ret, 0, sizeof *ret);
    if (request->hook == EXPORTS_CAPW_PROVIDER_LIFECYCLE_HOOKS_HOOK_BEFORE_CLUSTER_DELETE && protected) {
        ret->tag = EXPORTS_CAPW_PROVIDER_LIFECYCLE_HOOKS_HOOK_RESPONSE_HOLD;
        ret->val.hold.reason = dup_string("DeletionProtected");
        ret->val.hold.message =
            dup_string("set protectFromDelete to false in the ClusterClass to delete this cluster");
        ret->val.hold.requeue_after_ms = RECHECK_MS;
        return true;
    }
    ret->tag = EXPORTS_CAPW_PROVIDER_LIFECYCLE_HOOKS_HOOK_RESPONSE_PROCEED;
    return true;
}
