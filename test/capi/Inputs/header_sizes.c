/* The #defines of a generated header, checked at compile time for
 * test/e2e/models/digits.dlc compiled with batch BATCH (x: f32[BATCH, 784],
 * logits: f32[BATCH, 10], params fc1 [256, 784] + [256], fc2 [10, 256] +
 * [10]), and the types of the typed wrappers. */
#include "digits.h"

#include <stddef.h>

_Static_assert(DIGITS_NUM_PARAMS == 4, "NUM_PARAMS");
_Static_assert(DIGITS_PARAM_COUNT == 256LL * 784 + 256 + 10 * 256 + 10,
               "PARAM_COUNT");
_Static_assert(DIGITS_PARAM_BYTES == 4 * DIGITS_PARAM_COUNT, "PARAM_BYTES");
_Static_assert(DIGITS_FORWARD_X_NUMEL == BATCH * 784LL, "X_NUMEL");
_Static_assert(DIGITS_FORWARD_X_BYTES == BATCH * 784LL * 4, "X_BYTES");
_Static_assert(DIGITS_FORWARD_LOGITS_NUMEL == BATCH * 10LL, "LOGITS_NUMEL");
_Static_assert(DIGITS_FORWARD_LOGITS_BYTES == BATCH * 10LL * 4, "LOGITS_BYTES");
_Static_assert(_Generic(DIGITS_PARAM_BYTES, long long: 1, default: 0),
               "the sizes are long long");

/* The wrappers have exactly the documented types. */
static dlc_status (*const create)(dlc_device_kind,
                                  digits_model **) = digits_create;
static void (*const destroy)(digits_model *) = digits_destroy;
static dlc_status (*const init)(digits_model *, uint64_t) = digits_init;
static dlc_status (*const load)(digits_model *, const char *) = digits_load;
static dlc_status (*const save)(const digits_model *,
                                const char *) = digits_save;
static dlc_status (*const forward)(digits_model *, const float *,
                                   float *) = digits_forward;

/* digits_model is the runtime's dlc_model. */
size_t sizes_check(digits_model *m);
size_t sizes_check(digits_model *m) {
  dlc_model *generic = m;
  return (size_t)(generic != NULL) + (create != NULL) + (destroy != NULL) +
         (init != NULL) + (load != NULL) + (save != NULL) + (forward != NULL) +
         sizeof(dlc_model_digits);
}
