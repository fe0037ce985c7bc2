/* Uses a model compiled by dlc_add_model, through the installed runtime. */
#include "tiny.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  dlc_model *m = NULL;
  float x[TINY_BATCH * 4], y[TINY_BATCH * 4];
  const void *inputs[1];
  void *outputs[1];
  dlc_tensor_info w;
  int i;

  if (strstr(TINY_DLC_ARGS, "--batch 3 --cpu native --emit-obj") == NULL) {
    fprintf(stderr, "unexpected dlc arguments: %s\n", TINY_DLC_ARGS);
    return 1;
  }
  if (dlc_model_create(&dlc_model_tiny, DLC_DEVICE_AUTO, &m) != DLC_OK ||
      dlc_model_init(m, 7) != DLC_OK ||
      dlc_model_param_info(m, 0, &w) != DLC_OK) {
    fprintf(stderr, "error: %s\n", dlc_last_error());
    return 1;
  }
  for (i = 0; i < TINY_BATCH * 4; ++i)
    x[i] = (float)i;
  inputs[0] = x;
  outputs[0] = y;
  if (dlc_model_run(m, 0, inputs, outputs) != DLC_OK) {
    fprintf(stderr, "error: %s\n", dlc_last_error());
    return 1;
  }
  for (i = 0; i < TINY_BATCH * 4; ++i) {
    if (y[i] != x[i] * ((const float *)w.data)[i % 4]) {
      fprintf(stderr, "wrong output %d\n", i);
      return 1;
    }
  }
  printf("consumer: model '%s' ran on %s with batch %d\n", dlc_model_name(m),
         dlc_device_name(dlc_model_device(m)), TINY_BATCH);
  dlc_model_destroy(m);
  return 0;
}
