/*===- c_api_test.c - The C API, from C, against the shared library -------===*
 *
 * Compiled as C99 with -Wall -Wextra -Wpedantic: the headers must be valid C.
 * A hand-written "compiled model": y = x * w + b over 4 floats.
 *
 *===----------------------------------------------------------------------===*/

#include "dlc/dlc_cuda_abi.h"
#include "dlc/dlc_io.h"
#include "dlc/dlc_runtime.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__,   \
              __LINE__, #cond, dlc_last_error());                              \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static void affine(void *const *args) {
  const float *w = (const float *)args[0];
  const float *b = (const float *)args[1];
  const float *x = (const float *)args[2];
  float *y = (float *)args[3];
  int i;
  for (i = 0; i < 4; ++i)
    y[i] = x[i] * w[i] + b[i];
}

static const char text[] = "dlc-model 1\n"
                           "name affine\n"
                           "param w f32 4 uniform 1\n"
                           "param b f32 4 ones 0\n"
                           "entry forward\n"
                           "in x f32 4\n"
                           "out y f32 4\n"
                           "end\n";
static const dlc_entry_fn entries[] = {affine};
static const dlc_model_desc desc = {
    DLC_ABI_VERSION, text, 1, entries, NULL, NULL, NULL, 0, NULL};

static void square(void *ctx, int64_t begin, int64_t end) {
  int *out = (int *)ctx;
  int64_t i;
  for (i = begin; i < end; ++i)
    out[i] = (int)(i * i);
}

int main(void) {
  dlc_model *m = NULL;
  dlc_tensor_info w;
  float x[4] = {1, 2, 3, 4}, y[4] = {0, 0, 0, 0};
  const void *inputs[1];
  void *outputs[1];
  int squares[100];
  int i;
  dlc_tensor_list *list = NULL;
  const char *path = "dlcrt-c-test.safetensors";

  CHECK(dlc_model_create(&desc, DLC_DEVICE_CPU, &m) == DLC_OK);
  if (!m)
    return 1;
  CHECK(strcmp(dlc_model_name(m), "affine") == 0);
  CHECK(strcmp(dlc_model_device_name(m), "cpu") == 0);
  CHECK(dlc_model_init(m, 1) == DLC_OK);
  CHECK(dlc_model_param_info(m, 0, &w) == DLC_OK);
  inputs[0] = x;
  outputs[0] = y;
  CHECK(dlc_model_run(m, dlc_model_find_entry(m, "forward"), inputs, outputs) ==
        DLC_OK);
  for (i = 0; i < 4; ++i)
    CHECK(y[i] == x[i] * ((const float *)w.data)[i] + 1.0f);

  CHECK(dlc_model_save(m, path) == DLC_OK);
  CHECK(dlc_tensor_file_read(path, DLC_FILE_AUTO, &list) == DLC_OK);
  CHECK(dlc_tensor_list_size(list) == 2);
  dlc_tensor_list_free(list);
  CHECK(dlc_model_load(m, path) == DLC_OK);
  remove(path);

  CHECK(dlc_model_load(m, path) == DLC_ERR_IO);
  CHECK(strstr(dlc_last_error(), "No such file") != NULL);
  CHECK(strcmp(dlc_status_name(DLC_ERR_IO), "DLC_ERR_IO") == 0);

  dlc_parallel_for(100, square, squares);
  for (i = 0; i < 100; ++i)
    CHECK(squares[i] == i * i);
  CHECK(dlc_num_threads() >= 1);

  /* Out-of-range enum values (well-defined in C). */
  CHECK(strcmp(dlc_dtype_name((dlc_dtype)8), "unknown") == 0);
  CHECK(dlc_dtype_size((dlc_dtype)-1) == 0);
  CHECK(strcmp(dlc_device_name((dlc_device_kind)9), "unknown") == 0);
  CHECK(strcmp(dlc_status_name((dlc_status)42), "DLC_ERR_UNKNOWN") == 0);
  {
    dlc_device_kind d;
    dlc_model *bad = NULL;
    int64_t one = 1;
    CHECK(dlc_select_device((dlc_device_kind)9, &d) ==
          DLC_ERR_INVALID_ARGUMENT);
    CHECK(dlc_model_create(&desc, (dlc_device_kind)-1, &bad) ==
          DLC_ERR_INVALID_ARGUMENT);
    CHECK(bad == NULL);
    CHECK(dlc_tensor_list_create(&list) == DLC_OK);
    CHECK(dlc_tensor_list_add(list, "t", (dlc_dtype)12, 1, &one, NULL, NULL) ==
          DLC_ERR_INVALID_ARGUMENT);
    CHECK(strstr(dlc_last_error(), "invalid dtype 12") != NULL);
    CHECK(dlc_tensor_file_write("x.npy", (dlc_file_format)7, list) ==
          DLC_ERR_INVALID_ARGUMENT);
    dlc_tensor_list_free(list);
  }

  dlc_model_destroy(m);
  if (failures == 0)
    printf("c_api_test: all checks passed\n");
  return failures == 0 ? 0 : 1;
}
